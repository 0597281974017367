"""Command line: python3 -m attnprop_torch import|compare|export ... (docs/torch.md).

import SCRIPT.py --out F     SCRIPT.py defines build() returning import_model's arguments:
                             dict(module=..., alphabet=..., eos=..., eos_position=...,
                             readout=..., name=...)
import MODEL.onnx --out F --alphabet 01 --eos '$' [--eos-position first] [--readout logit]
compare SCRIPT.py|MODEL.onnx [--inputs ...] [--n ...]   the original against attnprop
export SCRIPT.py --out F     build() returns export_encoder's arguments (the stock front end)

A script's build() may also return export_encoder's arguments (encoder=...) or an ONNX file
(onnx="path", with the other arguments). Exit codes: 0 done, 1 compare --tolerance exceeded,
2 bad usage, a refused model or a failing script, 3 internal error.
"""
import argparse
import inspect
import json
import os
import runpy
import sys
import tempfile
import traceback

from .exact import ExportError

_IMPORT_ARGS = ("alphabet", "eos", "eos_position", "readout", "readout_symbols", "name",
                "description", "trace_lengths", "check_lengths")


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
        raise ExportError("%s: defines no build() function (it must return import_model's "
                          "arguments: module, alphabet, eos, readout, name, ...)" % script)
    try:
        kwargs = build()
    except Exception as e:
        raise ExportError("%s: build() failed: %s: %s\n%s" % (script, type(e).__name__, e,
                                                               traceback.format_exc().rstrip()))
    if not isinstance(kwargs, dict):
        raise ExportError("%s: build() returned %s; expected a dict of import_model's arguments"
                          % (script, type(kwargs).__name__))
    return kwargs


def _check_keys(kwargs, allowed, required, script, what):
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise ExportError("%s: build() returned unknown argument(s) %s (%s takes %s)" %
                          (script, ", ".join(repr(u) for u in unknown), what,
                           ", ".join(sorted(allowed))))
    missing = [k for k in required if k not in kwargs]
    if missing:
        raise ExportError("%s: build() did not return %s" % (script, ", ".join(repr(m) for m in
                                                                              missing)))


def prepare(kwargs, script):
    """(module, import_model keyword arguments) for what build() returned."""
    kwargs = dict(kwargs)
    if "encoder" in kwargs:
        from .export import encoder_model, export_encoder
        allowed = set(inspect.signature(export_encoder).parameters)
        _check_keys(kwargs, allowed, ("encoder", "token_embedding", "alphabet", "eos", "readout",
                                      "name"), script, "export_encoder")
        enc, emb = kwargs.pop("encoder"), kwargs.pop("token_embedding")
        return encoder_model(enc, emb, **kwargs)
    if "onnx" in kwargs:
        from .onnx_import import OnnxModule
        _check_keys(kwargs, ("onnx",) + _IMPORT_ARGS, ("onnx", "alphabet", "eos", "name"),
                    script, "import_onnx")
        path = kwargs.pop("onnx")
        if script and not os.path.isabs(path):
            path = os.path.join(os.path.dirname(os.path.abspath(script)), path)
        return OnnxModule.load(path), kwargs
    _check_keys(kwargs, ("module",) + _IMPORT_ARGS, ("module", "alphabet", "eos", "name"), script,
                "import_model")
    module = kwargs.pop("module")
    return module, kwargs


def _from_args(args):
    """(module, import arguments) for an ONNX file given on the command line, or a script."""
    if args.source.endswith(".onnx"):
        if args.alphabet is None or args.eos is None:
            raise ExportError("%s: an ONNX file needs --alphabet and --eos" % args.source)
        from .onnx_import import OnnxModule
        kw = {"alphabet": list(args.alphabet), "eos": args.eos,
              "eos_position": args.eos_position or "last", "readout": args.readout or "logit",
              "name": args.name or os.path.splitext(os.path.basename(args.source))[0]}
        if args.readout_symbols:
            kw["readout_symbols"] = args.readout_symbols.split(",")
        if not os.path.isfile(args.source):
            raise ExportError("%s: no such file" % args.source)
        return OnnxModule.load(args.source), kw
    module, kw = prepare(_load_build(args.source), args.source)
    if args.name:
        kw["name"] = args.name
    return module, kw


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


def _write(doc, out):
    text = dumps(doc)
    if out == "-":
        sys.stdout.write(text)
    else:
        with open(out, "w") as f:
            f.write(text)
        L = len(doc["layers"])
        print("wrote %s (d = %d, %d layer%s, %d head%s, %s readout)" %
              (out, doc["d"], L, "" if L == 1 else "s",
               sum(len(layer["heads"]) for layer in doc["layers"]),
               "" if sum(len(layer["heads"]) for layer in doc["layers"]) == 1 else "s",
               doc["readout"]["kind"]))


def _cmd_import(args):
    from .importer import import_model
    module, kw = _from_args(args)
    _write(import_model(module, **kw), args.out)
    return 0


def _cmd_export(args):
    from .export import export_encoder
    kwargs = _load_build(args.source)
    if args.name:
        kwargs["name"] = args.name
    if "encoder" not in kwargs:
        raise ExportError("%s: export takes export_encoder's arguments (encoder=...); use "
                          "`import` for a module" % args.source)
    _check_keys(kwargs, set(inspect.signature(export_encoder).parameters),
                ("encoder", "token_embedding", "alphabet", "eos", "readout", "name"), args.source,
                "export_encoder")
    _write(export_encoder(**kwargs), args.out)
    return 0


def _fmt(x):
    return "-" if x is None else "%.2e" % x


def _cmd_compare(args):
    from . import compare as cmp
    from .importer import import_model
    module, kw = _from_args(args)
    doc = import_model(module, **kw)
    binary = cmp.find_attnprop(args.attnprop)
    inputs = list(args.inputs or [])
    if args.n:
        inputs += cmp.random_inputs(list(kw["alphabet"]), _parse_lengths(args.n), args.samples,
                                    args.seed)
    if not inputs:
        raise ExportError("compare: give --inputs STR ... and/or --n LIST")
    kind = cmp.readout_kind(doc)
    original = cmp.Original(module, kw["alphabet"], kw.get("eos_position", "last"), kind)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or os.path.join(tmp, "model.json")
        with open(path, "w") as f:
            f.write(dumps(doc))
        rows, dtype = cmp.compare(original, doc, path, inputs, binary, args.precision)
    native = str(dtype).replace("torch.", "")
    worst64 = max((r.diff64 for r in rows if r.diff64 is not None), default=None)
    if kind == "logit":
        what = "the logit z, P(%s) = sigmoid(z)" % doc["readout"]["symbols"][1]
    elif kind == "logits":
        what = "softmax probabilities of " + ", ".join(doc["readout"]["symbols"])
    else:
        what = "the value of the output (accept iff > 0)"
    if args.json:
        print(json.dumps({"model": doc["name"], "attnprop": binary, "precision": args.precision,
                          "readout": kind, "native_dtype": native,
                          "max_rel_diff_float64": worst64,
                          "rows": [r.as_json() for r in rows]}, indent=2))
    else:
        print("model      %s (d = %d, L = %d; readout: %s)" % (doc["name"], doc["d"],
                                                                 len(doc["layers"]), what))
        shown = os.path.relpath(binary) if os.path.abspath(binary).startswith(os.getcwd() + os.sep) \
            else binary
        if os.path.isdir(binary):
            print("attnprop   the Python module attnprop (%s), Arb balls at %d bits (contain the "
                  "exact value)" % (shown, args.precision))
        else:
            print("attnprop   %s eval --scalar ball --precision %d (contains the exact value)" %
                  (shown, args.precision))
        print("torch      %s; the original module's forward, parameters %s; run in float64%s" %
              (__import__("torch").__version__, native,
               "" if native == "float64" else " and as it is"))
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


def _onnx_options(p):
    g = p.add_argument_group("an ONNX file (MODEL.onnx) takes its arguments here")
    g.add_argument("--alphabet", help="the symbols, one character each (e.g. 01)")
    g.add_argument("--eos", help="the end symbol")
    g.add_argument("--eos-position", choices=["last", "first"], help="where eos sits in the ids "
                                                                       "(default last)")
    g.add_argument("--readout", choices=["logit", "logits", "threshold"],
                   help="one logit (default), k logits, or a threshold")
    g.add_argument("--readout-symbols", help="names of k logits, comma-separated")


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m attnprop_torch",
        description="Import PyTorch modules and ONNX files as exact attnprop model files, and "
                    "compare an import with the original (docs/torch.md).")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("import", help="write the model file of SCRIPT.py's build() or of an "
                                      "ONNX file")
    p.add_argument("source", metavar="SCRIPT.py|MODEL.onnx")
    p.add_argument("--out", required=True, help="the model file to write ('-': standard output)")
    p.add_argument("--name", help="the model's name (default: build()'s 'name')")
    _onnx_options(p)
    p.set_defaults(run=_cmd_import)
    p = sub.add_parser("export", help="write the model file of export_encoder's arguments "
                                      "(SCRIPT.py's build())")
    p.add_argument("source", metavar="SCRIPT.py")
    p.add_argument("--out", required=True, help="the model file to write ('-': standard output)")
    p.add_argument("--name", help="the model's name (default: build()'s 'name')")
    p.set_defaults(run=_cmd_export)
    p = sub.add_parser("compare", help="compare the original module (float64 and its own dtype) "
                                       "with attnprop's balls (eval --scalar ball) on the import")
    p.add_argument("source", metavar="SCRIPT.py|MODEL.onnx")
    p.add_argument("--inputs", nargs="*", metavar="STR", help="input strings (eos is appended)")
    p.add_argument("--n", help="comma-separated lengths n (eos included) of random inputs")
    p.add_argument("--samples", type=int, default=3, help="random inputs per length (default 3)")
    p.add_argument("--seed", type=int, default=1, help="seed of the random inputs (default 1)")
    p.add_argument("--precision", type=int, default=256, help="attnprop's ball precision in bits "
                                                              "(default 256)")
    p.add_argument("--attnprop", help="the attnprop binary (default: the Python module attnprop "
                                      "when importable, else $ATTNPROP, the checkout's "
                                      "build/bin/attnprop, the installed one, PATH)")
    p.add_argument("--keep", metavar="FILE", help="also write the imported model file here")
    p.add_argument("--tolerance", type=float, help="exit 1 when the float64 relative difference "
                                                   "exceeds this")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--name", help="the model's name")
    _onnx_options(p)
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
