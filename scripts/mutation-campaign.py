#!/usr/bin/python3
"""Mutation campaign: hostile model files through every attnprop command, each run under a
memory and a time limit (docs/reliability.md, "Mutation campaign").

    scripts/mutation-campaign.py BIN WORK [--files N] [--start K] [--seed S] [--jobs J]
                                 [--mem-mb M] [--time-s T] [--commands a,b,...]

Model file k (0 <= k < N) is made from a seed file (models/, tests/golden/bad_inputs/,
tests/golden/limits/, tests/data/, and hostile models written here: thousands of layers, an
identity of d = 4096, concatenations that double a width, tiny and huge numbers, a beta that is
not positive, ...) by a few random mutations, JSON-aware (numbers, dimensions, kinds, formulas,
arrays repeated, keys dropped or added) or byte-level (truncation, flipped bytes). The file
depends on the seed and k alone, so a chunk (--start K --files N) can be run again and the
campaign split over several runs; results are appended to WORK/results.jsonl, one line per run.

Every file goes through: format (which decides whether the file is valid: exit 0, or invalid:
exit 2), eval, bound, check --model, influence, restrict, simulate, and replay of a
counterexample folder holding the file (from a template folder made once by check --suite
controls). A run is a finding when it
  - ends by a signal (a crash, an abort), or with exit 3 (internal error);
  - gives a verdict (exit 0, 1, 4 or 5) on a file that format refuses;
  - passes its time limit (killed here), or ends for its memory limit without a refusal that
    names a limit (an "out of memory" exit 2 is counted apart: the budget was not enough).
An exit 2 about the model that names neither the file nor a JSON pointer is listed too.
`--summary` prints the totals of WORK/results.jsonl and the findings.
"""

import argparse
import copy
import hashlib
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMANDS = ["format", "eval", "bound", "check", "influence", "restrict", "simulate", "replay"]


# --- seed models ---------------------------------------------------------------------------

def hostile_models():
    """Models written here, each aimed at a cost a small file can set."""
    def base(kind="hard", d=1, layers=1):
        z = [0] * d
        one = [1] + [0] * (d - 1)
        return {
            "format": "attnprop-model", "version": 1, "name": "hostile", "attention": kind,
            "alphabet": ["0", "1"], "eos": "$", "d": d,
            "token_embedding": {"0": z, "1": one, "$": z},
            "positional": {"kind": "formula", "dim": d, "coordinates": {"0": 0}},
            "input": "add",
            "layers": [{
                "heads": [{"score": {"kind": "dot", "Q": {"identity": d} if d > 1 else [[0]],
                                     "K": {"identity": d} if d > 1 else [[1]]},
                           "value": {"kind": "linear", "V": {"identity": d} if d > 1 else [[1]]}}],
                "update": {"kind": "graph", "nodes": [{"id": "o", "op": "slice", "in": "y",
                                                       "from": 0, "to": d}], "output": "o"}}
                for _ in range(layers)],
            "readout": {"kind": "threshold", "w": one, "t": "1/2"},
        }
    out = {}
    out["deep-hard"] = base("hard", 1, 3000)
    out["deep-soft"] = base("soft", 1, 3000)
    out["wide-identity"] = base("soft", 1024, 1)
    m = base("hard", 2, 1)
    m["layers"][0]["update"] = {"kind": "graph", "nodes": [
        {"id": "c%d" % k, "op": "concat", "in": ["y" if k == 0 else "c%d" % (k - 1)] * 2}
        for k in range(40)] + [{"id": "o", "op": "slice", "in": "c39", "from": 0, "to": 2}],
        "output": "o"}
    out["concat-doubling"] = m
    m = base("hard", 1, 1)
    m["layers"][0]["heads"] = m["layers"][0]["heads"] * 2000
    m["layers"][0]["update"] = {"kind": "graph", "nodes": [
        {"id": "o", "op": "slice", "in": "y", "from": 0, "to": 1}], "output": "o"}
    out["many-heads"] = m
    m = base("soft", 1, 1)
    m["layers"][0]["update"] = {"kind": "mlp", "layers": [
        {"W": [[1, 0]] if k == 0 else [[1]], "activation": "relu"} for k in range(3000)]}
    out["deep-mlp"] = m
    m = base("hard", 1, 1)
    m["readout"]["t"] = "1e-100000"
    m["layers"][0]["heads"][0]["score"]["q_bias"] = ["1e-100000"]
    m["layers"][0]["heads"][0]["value"]["bias"] = ["1e100000"]
    out["long-decimals"] = m
    m = base("hard", 1, 1)
    m["layers"][0]["heads"][0]["score"]["beta"] = -1
    out["beta-negative"] = m
    m = base("soft", 2, 1)
    m["positional"]["coordinates"] = [0, "[i==1]"]
    m["layers"][0]["heads"][0]["score"] = {"kind": "dot", "Q": [[0, 0]], "q_bias": [4e18],
                                          "K": [[0, 1]]}
    m["layers"][0]["heads"][0]["value"] = {"kind": "linear", "V": [[1, 0]]}
    out["mpfr-underflow"] = m
    m = base("soft", 1, 1)
    m["positional"] = {"kind": "formula", "dim": 1,
                       "coordinates": ["(" * 200 + "i" + ")" * 200]}
    out["nested-formula"] = m
    return out


def seed_files(root=ROOT):
    seeds = []
    for sub in ["models", "tests/golden/bad_inputs", "tests/golden/limits", "tests/data"]:
        d = os.path.join(root, sub)
        for name in sorted(os.listdir(d)):
            if name.endswith(".json"):
                with open(os.path.join(d, name), "rb") as f:
                    seeds.append((sub + "/" + name, f.read()))
    for name, m in sorted(hostile_models().items()):
        for _ in range(3):  # weighted: each is aimed at a cost
            seeds.append(("hostile/" + name, json.dumps(m).encode()))
    return seeds


def seeds_digest(seeds):
    """The seed list's fingerprint: file k depends on it, the seed and k. Files added to the
    seed folders change it (and so every file k), which is why a campaign folder records it."""
    h = hashlib.sha256()
    for name, data in seeds:
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()[:16]


def check_campaign(work, seed, digest):
    """A campaign folder is one seed list and one seed: appending rows of another would mix two
    numberings of the files. The first run writes WORK/campaign.json; later runs must match."""
    path = os.path.join(work, "campaign.json")
    if not os.path.exists(path):
        with open(path, "w") as f:
            json.dump({"seed": seed, "seeds_digest": digest}, f)
            f.write("\n")
        return
    with open(path) as f:
        known = json.load(f)
    if known.get("seed") != seed or known.get("seeds_digest") != digest:
        print("mutation-campaign: %s was made with seed %s and seed list %s; this run has seed %s "
                 "and seed list %s (the seed folders changed: give --root a checkout of the "
                 "campaign's commit, or use a new folder)" % (work, known.get("seed"),
                 known.get("seeds_digest"), seed, digest), file=sys.stderr)
        sys.exit(2)


# --- mutations -----------------------------------------------------------------------------

NUMBERS = [0, 1, -1, 2, "1/3", "-7/2", 0.5, "1e-100000", "1e100000", "1e-100001", 1e300,
           10 ** 30, 2 ** 64, -(2 ** 63), "0x10", "010", "1/0", "", "nan", 4096, 1048576,
           1048577, 16385, 65536, "2^20", 3.5, -0.0, "1e-5", 1e-12]
STRINGS = ["hard", "soft", "average-hard", "dot", "map", "linear", "affine", "mlp", "graph",
           "table", "hash", "identity", "relu", "tanh", "gelu", "erf", "step", "floor",
           "layer_norm", "concat", "add", "sub", "mul", "slice", "scale", "threshold",
           "softmax", "log", "formula", "sinusoidal", "", "$", "0", "1", "y", "b", "b1"]
FORMULAS = ["i", "n", "i/n", "(-1)^i", "[i==1]", "1/(i-2)", "floor(log(0))", "i^i^i",
            "2^(10^6*i)", "sqrt(-1)", "sin(i)/0", "exp(n*n*n)", "log(n)", "1e-100000*i",
            "(((((((((((((((((((i)))))))))))))))))))", "i" + "+i" * 2000, "3^3^33", "0^(-1)"]


def walk(doc, path=()):
    """Every (path, value) of a JSON document."""
    yield path, doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from walk(v, path + (k,))
    elif isinstance(doc, list):
        for k, v in enumerate(doc):
            yield from walk(v, path + (k,))


def get(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def put(doc, path, value):
    if not path:
        return value
    parent = get(doc, path[:-1])
    parent[path[-1]] = value
    return doc


SANE = [0, 1, -1, 2, 3, "1/3", "-2/7", 0.5, 0.25, 10, -4, "1e-3", 100]


def mutate_json(doc, rnd):
    nodes = list(walk(doc))
    path, val = rnd.choice(nodes)
    # Most mutations keep the file valid (a number changed to another), so that the commands
    # get past the reader; the rest break it on purpose.
    if rnd.random() < 0.45:
        numbers = [(p, v) for p, v in nodes if isinstance(v, (int, float)) and not isinstance(v, bool)
                   or (isinstance(v, str) and v[:1].isdigit())]
        if numbers:
            p, _ = rnd.choice(numbers)
            return put(doc, p, rnd.choice(SANE if rnd.random() < 0.8 else NUMBERS))
    op = rnd.randrange(12)
    if op == 0 and not isinstance(val, (dict, list)):
        return put(doc, path, rnd.choice(NUMBERS))
    if op == 1 and isinstance(val, str):
        return put(doc, path, rnd.choice(STRINGS + FORMULAS))
    if op == 2 and isinstance(val, list) and val:
        k = rnd.randrange(len(val))
        times = rnd.choice([1, 1, 1, 2, 10, 100, 1000])
        val[k:k + 1] = [copy.deepcopy(val[k]) for _ in range(times + 1)]
        return doc
    if op == 3 and isinstance(val, list) and val:
        del val[rnd.randrange(len(val))]
        return doc
    if op == 4 and isinstance(val, dict) and val:
        del val[rnd.choice(list(val))]
        return doc
    if op == 5 and isinstance(val, dict):
        val[rnd.choice(["extra", "beta", "b", "scale", "length_scale", "q_bias", "gamma",
                        "identity", "eps", "from", "to", "default"])] = rnd.choice(NUMBERS + [[1], [[1]]])
        return doc
    if op == 6 and isinstance(val, (list, dict)):
        return put(doc, path, {"identity": rnd.choice([1, 2, 64, 1024, 4096, 5000]),
                               "scale": rnd.choice(NUMBERS)})
    if op == 7 and isinstance(val, (int, float)) and not isinstance(val, bool):
        return put(doc, path, rnd.choice([0, -1, 2, 3, 64, 1024, 4096, 16384, 16385,
                                          1 << 20, (1 << 20) + 1, 1 << 40]))
    if op == 8:
        return put(doc, path, rnd.choice(FORMULAS))
    if op == 9 and isinstance(val, list) and val and isinstance(val[0], (int, float, str)):
        return put(doc, path, val * rnd.choice([2, 16]))
    if op == 10 and isinstance(val, dict) and "layers" in val and isinstance(val["layers"], list) and val["layers"]:
        val["layers"] = val["layers"] * rnd.choice([2, 50, 2000])
        return doc
    if op == 11 and isinstance(val, (dict, list)):
        # Nest deeper.
        return put(doc, path, [val] if rnd.random() < 0.5 else {"kind": "graph", "nodes": [val]})
    return put(doc, path, rnd.choice(NUMBERS + STRINGS + [None, True, [], {}]))


def mutate_bytes(data, rnd):
    b = bytearray(data)
    op = rnd.randrange(4)
    if op == 0 and b:
        del b[rnd.randrange(len(b)):]
    elif op == 1 and b:
        for _ in range(rnd.randrange(1, 8)):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
    elif op == 2:
        k = rnd.randrange(len(b) + 1)
        b[k:k] = rnd.choice([b"[", b"{", b"\"", b"\\u0000", b"1e999999", b"-", b",", b"]]]]",
                             b"\xff\xfe", b"0" * 1000])
    elif b:
        k = rnd.randrange(len(b))
        b[k:k] = b[k:k + rnd.randrange(1, 64)] * rnd.randrange(1, 20)
    return bytes(b)


def make_file(seeds, seed, k):
    rnd = random.Random(seed * 1000003 + k)
    name, data = seeds[rnd.randrange(len(seeds))]
    desc = [name]
    for _ in range(rnd.choice([0, 1, 1, 1, 2, 3])):
        if rnd.random() < 0.9:
            try:
                doc = json.loads(data)
                doc = mutate_json(doc, rnd)
                data = json.dumps(doc, separators=(",", ":")).encode()
                desc.append("json")
                continue
            except (ValueError, RecursionError, TypeError, IndexError, KeyError):
                pass
        data = mutate_bytes(data, rnd)
        desc.append("bytes")
    return data, "+".join(desc)


# --- running -------------------------------------------------------------------------------

def alphabet_input(data):
    try:
        doc = json.loads(data)
        syms = [s for s in doc.get("alphabet", []) if isinstance(s, str) and len(s) == 1]
        if syms:
            return "".join(syms[k % len(syms)] for k in range(5))
    except (ValueError, RecursionError, AttributeError, TypeError):
        pass
    return "01010"


def limiter(mem_mb):
    def apply():
        os.setpgrp()
        os.nice(10)
        resource.setrlimit(resource.RLIMIT_AS, (mem_mb << 20, mem_mb << 20))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


def run(bin_, args, cwd, mem_mb, time_s):
    """Runs attnprop under the limits; its exit code (negative: the signal), whether it was
    killed here for its time, its peak resident memory (wait4) and the tail of its stderr."""
    start = time.monotonic()
    env = dict(os.environ, ATTNPROP_SVG_RENDERER="", ATTNPROP_MODELS_DIR=os.path.join(ROOT, "models"))
    err_path = os.path.join(cwd, "stderr")
    with open(err_path, "wb") as err:
        p = subprocess.Popen([bin_] + args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err,
                             preexec_fn=limiter(mem_mb), env=env)
    killed = False
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - start > time_s and not killed:
            killed = True
            os.killpg(p.pid, signal.SIGKILL)
        time.sleep(0.01)
    p.returncode = os.waitstatus_to_exitcode(status)
    with open(err_path, "rb") as f:
        text = f.read()
    return {"code": p.returncode, "killed": killed, "seconds": round(time.monotonic() - start, 3),
            "cpu": round(ru.ru_utime + ru.ru_stime, 3),
            "stderr": text.decode("utf-8", "replace")[-600:], "maxrss_kb": ru.ru_maxrss}


def command_args(cmd, model, inp, out, case_dir):
    if cmd == "format":
        return ["format", "--model", model]
    if cmd == "eval":
        return ["eval", "--model", model, "--input", inp]
    if cmd == "bound":
        return ["bound", "--model", model]
    if cmd == "check":
        return ["check", "--model", model, "--tests", "2", "--max-n", "12", "--search", "2",
                "--out", out]
    if cmd == "influence":
        return ["influence", "--model", model, "--n", "4,6", "--inputs", "1", "--positions", "2",
                "--threads", "1", "--out", out]
    if cmd == "restrict":
        return ["restrict", "--model", model, "--n", "6", "--samples", "4", "--threads", "1",
                "--out", out]
    if cmd == "simulate":
        return ["simulate", "--model", model, "--beta", "1", "--beta", "8", "--n", "4",
                "--inputs", "1", "--out", out]
    if cmd == "replay":
        return ["replay", "--allow-edited", case_dir]
    raise ValueError(cmd)


def is_located(msg):
    """An exit-2 message names its file and place when it has 'FILE: error:' or a pointer."""
    return ": error:" in msg and (".json" in msg or "(at /" in msg)


def one_file(opts, seeds, templates, k):
    data, desc = make_file(seeds, opts.seed, k)
    work = os.path.join(opts.work, "f%06d" % k)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    model = os.path.join(work, "model.json")
    with open(model, "wb") as f:
        f.write(data)
    # A counterexample folder holding the file (the template's case.json, its model replaced).
    tpl = templates[k % len(templates)] if templates else None
    case_dir = os.path.join(work, "case")
    if tpl:
        shutil.copytree(tpl, case_dir)
        with open(os.path.join(case_dir, "model.json"), "wb") as f:
            f.write(data)
    inp = alphabet_input(data)
    rows = []
    valid = None
    for cmd in opts.commands:
        if cmd == "replay" and not tpl:
            continue
        out = os.path.join(work, "out-" + cmd)
        r = run(opts.bin, command_args(cmd, model, inp, out, case_dir), work, opts.mem_mb, opts.time_s)
        if cmd == "format":
            valid = r["code"] == 0
        finding = []
        code = r["code"]
        if r["killed"]:
            finding.append("time limit")
        elif code < 0:
            finding.append("signal %d" % -code)
        elif code == 3:
            finding.append("exit 3")
        elif valid is False and code in (0, 1, 4, 5):
            finding.append("verdict on an invalid file")
        elif code == 2 and "out of memory" in r["stderr"]:
            finding.append("memory limit")
        unlocated = (code == 2 and cmd != "format" and valid is True and
                     not is_located(r["stderr"]) and "limit" not in r["stderr"])
        rows.append({"file": k, "seed": desc, "bytes": len(data), "valid": valid, "command": cmd,
                     "code": code, "seconds": r["seconds"], "cpu": r["cpu"],
                     "maxrss_kb": r["maxrss_kb"],
                     "finding": finding,
                     "unlocated": unlocated,
                     "stderr": r["stderr"] if (finding or code == 2) else ""})
    if not any(r["finding"] for r in rows) and not opts.keep:
        shutil.rmtree(work, ignore_errors=True)
    return rows


def make_templates(opts):
    """Counterexample folders to carry mutated models into replay: check --suite controls."""
    out = os.path.join(opts.work, "templates")
    if not os.path.isdir(out):
        subprocess.run([opts.bin, "check", "--suite", "controls", "--tests", "20", "--out", out],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                       env=dict(os.environ, ATTNPROP_SVG_RENDERER=""))
    cx = os.path.join(out, "counterexamples")
    if not os.path.isdir(cx):
        return []
    return [os.path.join(cx, d) for d in sorted(os.listdir(cx))
            if os.path.isfile(os.path.join(cx, d, "case.json"))]


def summary(work):
    path = os.path.join(work, "results.jsonl")
    totals, findings, unlocated, files, valid = {}, [], {}, set(), set()
    slowest, memory, cpu = [], [], 0.0
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            files.add(r["file"])
            if r["valid"]:
                valid.add(r["file"])
            key = (r["command"], r["code"])
            totals[key] = totals.get(key, 0) + 1
            if r["finding"]:
                findings.append(r)
            if r.get("unlocated"):
                msg = r["stderr"].strip().splitlines()[-1] if r["stderr"].strip() else ""
                unlocated.setdefault(msg[:160], r)
            slowest.append((r["seconds"], r["command"], r["file"]))
            if r.get("maxrss_kb"):
                memory.append((r["maxrss_kb"], r["bytes"], r["command"], r["file"], r["code"]))
            cpu += r.get("cpu", 0)
    runs = sum(totals.values())
    print("files: %d (%d valid, %d refused by format); runs: %d" % (len(files), len(valid),
                                                                    len(files) - len(valid), runs))
    for cmd in COMMANDS:
        codes = {c: n for (k, c), n in totals.items() if k == cmd}
        if codes:
            print("  %-9s %s" % (cmd, ", ".join("exit %d: %d" % (c, n) for c, n in sorted(codes.items()))))
    kinds = {}
    for r in findings:
        for x in r["finding"]:
            kinds[x] = kinds.get(x, 0) + 1
    print("findings: %d %s" % (len(findings), kinds))
    for r in findings[:40]:
        print("  file %d (%s) %s: exit %d %s: %s" % (r["file"], r["seed"], r["command"], r["code"],
                                                   r["finding"], r["stderr"].strip()[-300:]))
    print("exit-2 messages without the file or a JSON pointer: %d kinds" % len(unlocated))
    for msg, r in list(unlocated.items())[:60]:
        print("  file %d %s: %s" % (r["file"], r["command"], msg))
    slowest.sort(reverse=True)
    print("slowest runs (s, command, file):", slowest[:8])
    print("CPU time of all runs: %.0f s" % cpu)
    if memory:
        memory.sort(reverse=True)
        print("largest peak memory (MB, file bytes, command, file, exit):",
              [(round(m / 1024), b, c, f, e) for m, b, c, f, e in memory[:8]])
        # The statement of docs/reliability.md: peak <= FIXED + K * file bytes. The largest K
        # any run needed with FIXED = 64 MB (what a command takes on any small file).
        fixed = 64 * 1024
        ratio = sorted((((m - fixed) * 1024) / max(b, 1), m, b, c, f) for m, b, c, f, e in memory
                       if m > fixed)
        print("runs above 64 MB: %d; largest (peak - 64 MB) per byte of the file: %s" %
              (len(ratio), [(round(x), round(m / 1024), b, c, f) for x, m, b, c, f in ratio[-5:]]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bin")
    ap.add_argument("work")
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--mem-mb", type=int, default=3072)
    ap.add_argument("--time-s", type=float, default=120)
    ap.add_argument("--commands", default=",".join(COMMANDS))
    ap.add_argument("--keep", action="store_true", help="keep every file's folder")
    ap.add_argument("--root", default=ROOT,
                    help="the checkout whose seed folders make the files (default: this one); a "
                         "campaign's file k is rebuilt from the checkout it was run on")
    ap.add_argument("--summary", action="store_true")
    opts = ap.parse_args()
    if opts.summary:
        summary(opts.work)
        return 0
    opts.bin = os.path.abspath(opts.bin)
    opts.work = os.path.abspath(opts.work)
    opts.commands = [c for c in opts.commands.split(",") if c]
    os.makedirs(opts.work, exist_ok=True)
    seeds = seed_files(os.path.abspath(opts.root))
    check_campaign(opts.work, opts.seed, seeds_digest(seeds))
    templates = make_templates(opts) if "replay" in opts.commands else []
    results = os.path.join(opts.work, "results.jsonl")
    done = 0
    with open(results, "a") as out, ThreadPoolExecutor(opts.jobs) as pool:
        for rows in pool.map(lambda k: one_file(opts, seeds, templates, k),
                             range(opts.start, opts.start + opts.files)):
            for r in rows:
                out.write(json.dumps(r) + "\n")
            out.flush()
            done += 1
            if any(r["finding"] for r in rows):
                print("file %d: %s" % (rows[0]["file"], [(r["command"], r["finding"]) for r in rows if r["finding"]]),
                      flush=True)
            if done % 50 == 0:
                print("%d/%d files" % (done, opts.files), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
