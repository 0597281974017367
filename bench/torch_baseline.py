#!/usr/bin/python3
"""PyTorch float64 baseline of attnprop's soft forward-pass benchmark.

Usage: torch_baseline.py MODEL.json INPUT

Reads an attnprop model file of the benchmark's shape (a positional table added to the token
embedding, dot-product heads with linear query/key/value maps and the default scale
1/sqrt(d_k), an affine update of [y, b_1, ..., b_H] per layer) and the input (a string of
alphabet symbols; eos is appended), builds the same computation in torch.float64 on one
thread -- every row of every layer, attention as PyTorch computes it (matmul, softmax, matmul)
-- and then serves timing requests on standard input:

    run      -> one forward pass; prints "<cpu seconds> <y_n coordinates...>"
    quit     -> exits

The first line it prints is "ready" (or "skipped: <reason>" when torch is not installed, after
which it exits with status 0). Every number of the model file is an exact rational; it is
rounded to the nearest double, as attnprop's --scalar double does.
"""
import json
import sys
import time
from fractions import Fraction


def value(v):
    if isinstance(v, str):
        return float(Fraction(v))
    return float(Fraction(str(v)))


def main():
    try:
        import torch
    except ImportError:
        print("skipped: python3-torch not installed", flush=True)
        return 0
    if len(sys.argv) != 3:
        print("skipped: usage: torch_baseline.py MODEL.json INPUT", flush=True)
        return 0
    torch.set_num_threads(1)
    with open(sys.argv[1]) as f:
        m = json.load(f)
    text = sys.argv[2]
    t = lambda rows: torch.tensor([[value(x) for x in r] for r in rows], dtype=torch.float64)
    vec = lambda r: torch.tensor([value(x) for x in r], dtype=torch.float64)
    emb = {s: vec(v) for s, v in m["token_embedding"].items()}
    symbols = list(text) + [m["eos"]]
    n = len(symbols)
    if m["positional"]["kind"] != "table" or m.get("input", "add") != "add":
        print("skipped: the baseline reads table positions and the add input map only", flush=True)
        return 0
    pos = t(m["positional"]["rows"])[:n]
    y0 = torch.stack([emb[s] for s in symbols]) + pos
    layers = []
    for layer in m["layers"]:
        heads = []
        for h in layer["heads"]:
            sc = h["score"]
            Q, K, V = t(sc["Q"]), t(sc["K"]), t(h["value"]["V"])
            heads.append((Q, K, V, 1.0 / float(Q.shape[0]) ** 0.5))
        up = layer["update"]
        if up.get("kind") == "affine":
            update = ("affine", t(up["W"]), vec(up["b"]))
        elif up.get("kind") == "graph" and all(
                nd["op"] in ("linear", "add", "relu") for nd in up["nodes"]):
            nodes = []
            for nd in up["nodes"]:
                ins = nd["in"] if isinstance(nd["in"], list) else [nd["in"]]
                W = t(nd["W"]) if "W" in nd else None
                b = vec(nd["b"]) if "b" in nd else None
                nodes.append((nd["id"], nd["op"], ins, W, b))
            update = ("graph", nodes, up["output"])
        else:
            print("skipped: the baseline reads affine updates and linear/add/relu graphs only",
                  flush=True)
            return 0
        layers.append((heads, update))

    def apply_update(update, y, b):
        if update[0] == "affine":
            return torch.cat([y] + b, dim=1) @ update[1].T + update[2]
        val = {"y": y, "b": torch.cat(b, dim=1)}
        for i, h in enumerate(b):
            val["b%d" % (i + 1)] = h
        for nid, op, ins, W, bias in update[1]:
            if op == "linear":
                x = val[ins[0]] @ W.T
                val[nid] = x + bias if bias is not None else x
            elif op == "add":
                x = val[ins[0]]
                for other in ins[1:]:
                    x = x + val[other]
                val[nid] = x
            else:
                val[nid] = torch.relu(val[ins[0]])
        return val[update[2]]

    def forward():
        y = y0
        for heads, update in layers:
            outs = []
            for Q, K, V, scale in heads:
                q = y @ Q.T
                k = y @ K.T
                v = y @ V.T
                w = torch.softmax((q @ k.T) * scale, dim=-1)
                outs.append(w @ v)
            y = apply_update(update, y, outs)
        return y[-1]

    print("ready", flush=True)
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "quit":
            break
        if cmd != "run":
            continue
        t0 = time.thread_time()
        with torch.no_grad():
            y = forward()
        dt = time.thread_time() - t0
        print(repr(dt), " ".join(repr(float(c)) for c in y), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
