#!/usr/bin/python3
"""Wall time of attnprop under mpirun with 1 and 2 ranks, in the same run (docs/performance.md,
"Over MPI ranks").

    bench/mpi_scaling.py [--attnprop build/bin/attnprop] [--mpirun mpirun] [--reps 3] [--ranks 2]

For each workload (influence sweeps, check runs and restrict sweeps, one thread per rank) it
runs np = 1 and np = N in turn (1, N, 1, N, ...: a pair at a time, so that drifts of a shared machine's speed
hit both), each in a fresh folder, and prints per workload the median wall time of each, the
median of the paired ratios T(1) / T(N) (the speed-up) and the efficiency speed-up / N. It also
checks that both wrote the same report.json. Ratios, not absolute times: on a shared machine
only the ratio of neighbouring runs means something. The load average before and after is
printed; a machine busy with other work makes the efficiency lower than an idle one would.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

WORKLOADS = {
    # A geometric ladder, 6 lengths: the cost grows steeply with n and the largest length is
    # most of the work (73 %); its two inputs are two units, so 2 ranks share it.
    "influence-ladder": ["influence", "--model", "cc-parity", "--n", "64:2048:x2", "--inputs", "2",
                         "--positions", "8", "--threads", "1", "--seed", "1"],
    # 8 lengths of similar cost, 8 inputs each: what the distribution itself costs.
    "influence-flat": ["influence", "--model", "cc-parity", "--n", "448,480,512,544,576,608,640,672",
                       "--inputs", "8", "--threads", "1", "--seed", "1"],
    # The same lengths with 32 inputs each: a run long enough that MPI's start-up (about
    # 0.3 s per mpirun) is a small part of it, as in the sweeps MPI is for.
    "influence-flat-32": ["influence", "--model", "cc-parity", "--n", "448,480,512,544,576,608,640,672",
                          "--inputs", "32", "--threads", "1", "--seed", "1"],
    # The default suites (21 properties of very different cost), cut into batches of cases.
    "check": ["check", "--tests", "100", "--max-n", "64", "--seed", "1"],
    # One property alone: only its batches of cases can be shared.
    "check-one-property": ["check", "--property", "soft-influence/forced-bracket-cross-entropy",
                           "--tests", "300", "--max-n", "64", "--seed", "1"],
    # Five lengths: their restrictions (one unit each) first, then every length's language
    # analysis and certificate blocks (16 per length, 128 sampled inputs).
    "restrict": ["restrict", "--model", "hard-parity-attempt", "--n", "8192,10240,12288,14336,16384",
                 "--language", "parity", "--samples", "128", "--threads", "1", "--seed", "1"],
    # One length: its restriction is one unit, the rest is shared.
    "restrict-one-length": ["restrict", "--model", "hard-parity-attempt", "--n", "16384",
                            "--language", "parity", "--samples", "256", "--threads", "1",
                            "--seed", "1"],
}

ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_btl": "self,vader",
}


def timed(cmd, cwd, env):
    t0 = time.monotonic()
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.monotonic() - t0
    if r.returncode not in (0, 1, 4):
        sys.exit(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.decode()[-500:]}")
    return dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attnprop", default="build/bin/attnprop")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--only", choices=sorted(WORKLOADS), action="append")
    a = ap.parse_args()
    binary = os.path.abspath(a.attnprop)
    env = dict(os.environ)
    env.update(ENV)
    print(f"load average before: {os.getloadavg()[0]:.2f}, cores: {os.cpu_count()}")
    for name in a.only or sorted(WORKLOADS):
        args = WORKLOADS[name]
        t1, tn, ratios = [], [], []
        reports = {}
        for rep in range(a.reps):
            pair = []
            for np in (1, a.ranks):
                with tempfile.TemporaryDirectory(prefix="attnprop-scaling-") as tmp:
                    cmd = [a.mpirun, "-np", str(np), binary] + args + ["--out", "rep"]
                    pair.append(timed(cmd, tmp, env))
                    with open(os.path.join(tmp, "rep", "report.json"), "rb") as fh:
                        reports[np] = fh.read()
            t1.append(pair[0])
            tn.append(pair[1])
            ratios.append(pair[0] / pair[1])
        same = "same report" if reports[1] == reports[a.ranks] else "REPORTS DIFFER"
        s = statistics.median(ratios)
        print(f"{name}: np=1 {statistics.median(t1):.2f} s, np={a.ranks} "
              f"{statistics.median(tn):.2f} s (medians of {a.reps}); speed-up {s:.2f} "
              f"(paired ratios {', '.join(f'{r:.2f}' for r in ratios)}), efficiency "
              f"{s / a.ranks:.2f}; {same}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
