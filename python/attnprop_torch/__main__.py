"""Command line: python3 -m attnprop_torch export|compare SCRIPT.py ... (docs/torch.md).

SCRIPT.py defines build(), returning the keyword arguments of export_encoder (encoder,
token_embedding, alphabet, eos, positional, readout, readout_symbols, name, ...).
Exit codes: 0 done, 1 compare --tolerance exceeded, 2 bad usage, a refused model or a failing
script, 3 internal error.
"""
import argparse
import json
import os
import runpy
import sys
import tempfile
import traceback

from .exact import ExportError


def _load_build(script):
    """The keyword arguments SCRIPT.py's build() returns."""
    if not os.path.isfile(script):
        raise ExportError("%s: no such file" % script)
    try:
        ns = runpy.run_path(script, run_name="attnprop_torch_script")
    except Exception as e:  # the user's script: report it, do not crash
        raise ExportError("%s: running the script failed: %s: %s" % (script, type(e).__name__, e))
    build = ns.get("build")
    if not callable(build):
        raise ExportError("%s: defines no build() function (it must return the keyword arguments "
                          "of export_encoder)" % script)
    try:
        kwargs = build()
    except Exception as e:
        raise ExportError("%s: build() failed: %s: %s\n%s" % (script, type(e).__name__, e,
                                                               traceback.format_exc().rstrip()))
    if not isinstance(kwargs, dict):
        raise ExportError("%s: build() returned %s; expected a dict of export_encoder's keyword "
                          "arguments" % (script, type(kwargs).__name__))
    return kwargs


def _export(kwargs, script):
    from .export import export_encoder
    import inspect

    allowed = set(inspect.signature(export_encoder).parameters)
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        raise ExportError("%s: build() returned unknown argument(s) %s (export_encoder takes %s)" %
                          (script, ", ".join(repr(u) for u in unknown), ", ".join(sorted(allowed))))
    missing = [k for k in ("encoder", "token_embedding", "alphabet", "eos", "readout", "name")
               if k not in kwargs]
    if missing:
        raise ExportError("%s: build() did not return %s" % (script, ", ".join(repr(m) for m in missing)))
    return export_encoder(**kwargs)


def dumps(doc):
    """JSON text of a model document: two-space indentation, vectors and matrix rows on one
    line each."""
    def scalar_list(v):
        return isinstance(v, list) and all(not isinstance(x, (list, dict)) for x in v)

    def walk(v, ind):
        pad = "  " * ind
        if isinstance(v, dict):
            if not v:
                return "{}"
            items = ['%s  %s: %s' % (pad, json.dumps(k), walk(x, ind + 1)) for k, x in v.items()]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(v, list):
            if scalar_list(v):
                return "[" + ", ".join(json.dumps(x) for x in v) + "]"
            items = ["%s  %s" % (pad, walk(x, ind + 1)) for x in v]
            return "[\n" + ",\n".join(items) + "\n" + pad + "]"
        return json.dumps(v)

    return walk(doc, 0) + "\n"


def _parse_lengths(text):
    try:
        lengths = [int(t) for t in text.split(",") if t]
    except ValueError:
        raise ExportError("--n: expected a comma-separated list of lengths, got %r" % text)
    if not lengths or any(n < 1 for n in lengths):
        raise ExportError("--n: lengths must be >= 1 (eos included), got %r" % text)
    return lengths


def _cmd_export(args):
    kwargs = _load_build(args.script)
    if args.name:
        kwargs["name"] = args.name
    doc = _export(kwargs, args.script)
    text = dumps(doc)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w") as f:
            f.write(text)
        print("wrote %s (d = %d, %d layer%s, %s readout)" %
              (args.out, doc["d"], len(doc["layers"]), "" if len(doc["layers"]) == 1 else "s",
               doc["readout"]["kind"]))
    return 0


def _fmt(x):
    return "-" if x is None else "%.2e" % x


def _cmd_compare(args):
    from . import compare as cmp

    kwargs = _load_build(args.script)
    doc = _export(kwargs, args.script)
    binary = cmp.find_attnprop(args.attnprop)
    inputs = list(args.inputs or [])
    if args.n:
        alphabet = list(kwargs["alphabet"])
        inputs += cmp.random_inputs(alphabet, _parse_lengths(args.n), args.samples, args.seed)
    if not inputs:
        raise ExportError("compare: give --inputs STR ... and/or --n LIST")
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or os.path.join(tmp, "model.json")
        with open(path, "w") as f:
            f.write(dumps(doc))
        rows, dtype = cmp.compare(kwargs, doc, path, inputs, binary, args.precision)
    native = str(dtype).replace("torch.", "")
    worst64 = max((r.diff64 for r in rows if r.diff64 is not None), default=None)
    if args.json:
        print(json.dumps({"model": doc["name"], "attnprop": binary, "precision": args.precision,
                          "native_dtype": native, "max_rel_diff_float64": worst64,
                          "rows": [r.as_json() for r in rows]}, indent=2))
    else:
        ro = doc["readout"]
        what = ("softmax probabilities of " + ", ".join(ro["symbols"]) if ro["kind"] == "softmax"
                else "threshold value w . y_n + b")
        print("model      %s (d = %d, L = %d; readout: %s)" % (doc["name"], doc["d"],
                                                                 len(doc["layers"]), what))
        shown = os.path.relpath(binary) if os.path.abspath(binary).startswith(os.getcwd() + os.sep) \
            else binary
        print("attnprop   %s eval --scalar ball --precision %d (contains the exact value)" %
              (shown, args.precision))
        print("torch      %s; parameters %s; run in float64%s" %
              (__import__("torch").__version__, native,
               "" if native == "float64" else " and in " + native))
        print()
        head = "%6s  %-18s %18s" % ("n", "input", "float64 rel. diff")
        if native != "float64":
            head += " %18s" % (native + " rel. diff")
        head += " %20s" % "ball radius (rel.)"
        print(head)
        for r in rows:
            shown = r.text if len(r.text) <= 16 else r.text[:13] + "..."
            line = "%6d  %-18s" % (r.n, '"%s"' % shown)
            if r.exact.undefined:
                print(line + " undefined: " + r.exact.undefined)
                continue
            line += " %18s" % _fmt(r.diff64)
            if native != "float64":
                line += " %18s" % _fmt(r.diff_native)
            line += " %20s" % _fmt(r.radius)
            print(line)
        print()
        print("largest relative difference of the readout, torch float64 vs attnprop: %s" %
              _fmt(worst64))
        if native != "float64":
            per_n = {}
            for r in rows:
                if r.diff_native is not None:
                    per_n[r.n] = max(per_n.get(r.n, 0.0), r.diff_native)
            print("%s vs the exact value, largest per n: %s" %
                  (native, ", ".join("n = %d: %s" % (n, _fmt(v)) for n, v in sorted(per_n.items()))))
    if args.tolerance is not None and (worst64 is None or worst64 > args.tolerance):
        print("attnprop_torch: the float64 difference %s exceeds --tolerance %g" %
              (_fmt(worst64), args.tolerance), file=sys.stderr)
        return 1
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m attnprop_torch",
        description="Export PyTorch transformer encoders to exact attnprop model files, and "
                    "cross-check an export against torch (docs/torch.md).")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("export", help="write the model file of SCRIPT.py's build()")
    p.add_argument("script", help="a Python file defining build() -> export_encoder's keyword arguments")
    p.add_argument("--out", required=True, help="the model file to write ('-': standard output)")
    p.add_argument("--name", help="the model's name (default: build()'s 'name')")
    p.set_defaults(run=_cmd_export)
    p = sub.add_parser("compare", help="compare torch (float64 and the module's dtype) with "
                                       "attnprop eval --scalar ball on the export")
    p.add_argument("script", help="a Python file defining build()")
    p.add_argument("--inputs", nargs="*", metavar="STR", help="input strings (eos is appended)")
    p.add_argument("--n", help="comma-separated lengths n (eos included) of random inputs")
    p.add_argument("--samples", type=int, default=3, help="random inputs per length (default 3)")
    p.add_argument("--seed", type=int, default=1, help="seed of the random inputs (default 1)")
    p.add_argument("--precision", type=int, default=256, help="attnprop's ball precision in bits "
                                                              "(default 256)")
    p.add_argument("--attnprop", help="the attnprop binary (default: $ATTNPROP, the checkout's "
                                      "build/bin/attnprop, the installed one, PATH)")
    p.add_argument("--keep", metavar="FILE", help="also write the exported model file here")
    p.add_argument("--tolerance", type=float, help="exit 1 when the float64 relative difference "
                                                   "exceeds this")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=_cmd_compare)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except ExportError as e:
        print("attnprop_torch: error: %s" % e, file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - mapped to the documented exit code
        from .compare import AttnpropError
        if isinstance(e, AttnpropError):
            print("attnprop_torch: error: %s" % e, file=sys.stderr)
            return 2
        traceback.print_exc()
        return 3


if __name__ == "__main__":
    sys.exit(main())
