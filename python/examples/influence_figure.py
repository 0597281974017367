"""From a model to a figure for a paper, in Python (docs/python.md):

    PYTHONPATH=build/python /usr/bin/python3 python/examples/influence_figure.py [OUT]

Chiang and Cholak's PARITY network without layer norm (cc-parity) and with layer norm at
eps = 0 (cc-parity-ln0): the one-symbol influence across n with the PARITY cross-entropy, the
rows as numpy arrays, and the two sweeps overlaid on shared axes in OUT/figure/influence.pdf
(with .svg, .png and report.md). Hahn's lemma holds for the first (n·Δ(n) stays bounded, the
cross-entropy tends to chance) and does not apply to the second (its influence does not fall).
"""
import os
import sys

import attnprop

LENGTHS = [16, 32, 64, 128]


def run(out="out/example", lengths=LENGTHS, log=print):
    """Sweeps both models into OUT/<model>, overlays them into OUT/figure; returns (reports,
    the figure's files)."""
    reports, folders = {}, []
    for name in ("cc-parity", "cc-parity-ln0"):
        model = attnprop.load(name)
        folder = os.path.join(out, name)
        report = model.influence(lengths, inputs=2, positions=2, language="parity", seed=1,
                                 out=folder, progress=lambda row: log("  %s: n = %d done" % (name, row["n"])))
        cols = report.arrays()
        log("%s: %s" % (name, report.verdict))
        for n, d, nd, ce in zip(cols["n"], cols["max_influence"], cols["n_max_influence"], cols["mean_ce_bits"]):
            log("  n = %5d   Δ(n) = %-10.4g n·Δ(n) = %-10.4g CE = %.6f bits" % (n, d, nd, ce))
        reports[name] = report
        folders.append(folder)
    files = attnprop.plot(folders, os.path.join(out, "figure"))
    log("figure: " + ", ".join(files))
    return reports, files


if __name__ == "__main__":
    run(sys.argv[1] if len(sys.argv) > 1 else "out/example")
