"""Cutting the importer's nodes into attnprop layers and writing the model document.

Each attention node has a level: one more than the highest level of what its queries, keys and
values read; every other node has the highest level of its inputs (token and positional features
have level 0). attnprop layer k holds the heads of the attention nodes of level k; its update
computes the nodes of level k; the input map computes those of level 0. The state y^(k) between
layers is the concatenation of every node computed at level <= k that something at a higher
level (or the readout) still reads, padded with zeros to the widest state: d. Heads read their
bases from the state, the update reads its inputs from the state (slices) and from the heads'
outputs (b1 ... bH), and the readout reads the final state.
"""
from fractions import Fraction

from . import formula as fm
from . import ir
from .exact import number

_REFUSED_KIND = {
    "nscale": "a scaling by a number computed from the length is used outside the query or key "
              "of an attention score (attnprop's maps cannot depend on n)",
    "softmax_out": "a softmax over the features of one position is supported only as the "
                   "module's output (the readout's own softmax)",
    "div": "a division by a value computed from the input (attnprop's maps have none; a layer "
           "norm written out is read only in the form (x - mean) / sqrt(var + eps))",
    "sqrt": "a square root of a value computed from the input (only inside a layer norm)",
    "rsqrt": "a reciprocal square root of a value computed from the input (only inside a layer "
             "norm)",
    "recip": "a reciprocal of a value computed from the input",
}


class EmitError(ValueError):
    def __init__(self, errors):
        super().__init__("; ".join(m for _, m in errors))
        self.errors = errors


def _matrix(rows, cols):
    """A MATRIX for exact sparse rows: sparse form when under a quarter is nonzero, an identity
    when it is one, else dense rows."""
    nnz = sum(len(r) for r in rows)
    if len(rows) == cols and cols >= 2 and ir.is_identity(rows, cols):
        return {"identity": cols}
    if nnz * 4 < len(rows) * cols:
        entries = [[r, c, number(w)] for r, row in enumerate(rows) for c, w in sorted(row.items())]
        return {"rows": len(rows), "cols": cols, "entries": entries}
    return [[number(row.get(c, 0)) for c in range(cols)] for row in rows]


def _placed(rows, offset):
    return [{c + offset: w for c, w in r.items()} for r in rows]


def _rebase_heads(base, needed):
    """Heads read, among the nodes their query, key or value is an affine map of, one that the
    state carries anyway (read by a later update or the readout), rather than a node further
    down that would be carried for them alone; returns the nodes needed then."""
    lev = levels(needed)
    used = {base.id}          # carried in a state for an update or the readout
    for x in needed:
        if x.kind != "attn":
            used.update(u.id for u in x.inputs if lev[u.id] < lev[x.id])
    changed = False
    for x in needed:
        if x.kind != "attn":
            continue
        for h in x.heads:
            for f in (h.q, h.k, h.v):
                if f.base.id in used:
                    continue
                for node, rows, bias in f.chain:
                    if node.id in used and node.kind != "nscale":
                        f.base, f.rows, f.bias = node, rows, bias
                        changed = True
                        break
    return ir.topological([base]) if changed else needed


def levels(needed):
    lev = {}
    for x in needed:
        if x.kind == "attn":
            lev[x.id] = 1 + max(lev[f.base.id] for h in x.heads for f in (h.q, h.k, h.v))
        else:
            lev[x.id] = max((lev[u.id] for u in x.inputs), default=0)
    return lev


def build(I, base, readout_doc, meta):
    """The model document for readout base node `base` (readout_doc: a function of the base's
    offset and d giving the readout object)."""
    needed = _rebase_heads(base, ir.topological([base]))
    errors = []
    for x in needed:
        if x.kind not in ir.EMITTABLE:
            errors.append((x.where, _REFUSED_KIND.get(x.kind, "%s is not supported" % x.kind)))
        elif x.kind == "scale" and x.factor is None:
            errors.append((x.where, "a value computed from the input scaled by an irrational "
                                    "constant (only attention scores may be, by square roots)"))
    if errors:
        raise EmitError(errors)
    lev = levels(needed)
    L = lev[base.id]
    carry = {}

    def need(u, upto):
        lo = lev[u.id]
        for k in range(lo, upto + 1):
            carry.setdefault(k, {})[u.id] = u

    for x in needed:
        if x.kind == "attn":
            for h in x.heads:
                for f in (h.q, h.k, h.v):
                    need(f.base, lev[x.id] - 1)
        else:
            for u in x.inputs:
                if lev[u.id] < lev[x.id]:
                    need(u, lev[x.id] - 1)
    need(base, L)
    states = [sorted(carry.get(k, {}).values(), key=lambda n: n.id) for k in range(L + 1)]
    offsets = []
    for st in states:
        off, k = {}, 0
        for u in st:
            off[u.id] = k
            k += u.dim
        offsets.append((off, k))
    d = max(max(w for _, w in offsets), 1)

    toks = [x for x in needed if x.kind == "tok"]
    poss = [x for x in needed if x.kind == "pos"]
    token_embedding, v_off, d_tok = _token_embedding(toks, meta)
    positional, p_off, d_pos = _positional(I, poss)

    # input map
    g = _Graph()
    refs = {}
    for x in toks:
        refs[x.id] = g.slice_of("v", v_off[x.id], x.dim, d_tok)
    for x in poss:
        refs[x.id] = g.slice_of("p", p_off[x.id], x.dim, d_pos)
    for x in needed:
        if lev[x.id] == 0 and x.kind not in ("tok", "pos"):
            refs[x.id] = g.node(x, refs)
    out = g.state(states[0], refs, d, "v", d_tok)
    if not g.nodes and out == "v" and d_tok == d and not poss:
        positional = {"kind": "formula", "dim": d, "coordinates": [0] if d == 1 else {}}
        input_map = "add"
    else:
        if not g.nodes:
            out = g.add({"op": "scale", "in": out, "factor": 1}, "same")
        input_map = _input_map(g, out, toks, poss, d, d_tok, d_pos)

    layers = []
    for k in range(1, L + 1):
        attns = sorted([x for x in needed if x.kind == "attn" and lev[x.id] == k],
                       key=lambda n: n.id)
        g = _Graph()
        refs = {}
        off, width = offsets[k - 1]
        prev = states[k - 1]
        for u in prev:
            refs[u.id] = g.slice_of("y", off[u.id], u.dim, d) if not (
                len(prev) == 1 and u.dim == d) else "y"
        heads = []
        causal = [h.causal for x in attns for h in x.heads]
        if any(causal) and not all(causal):
            raise EmitError([(attns[0].where, "heads of one layer with and without a causal "
                                              "mask (attnprop's mask is per layer)")])
        if any(causal) and meta.get("eos_position", "last") != "last":
            raise EmitError([(attns[0].where, "a causal mask with eos first (attnprop puts eos "
                                              "last, where a causal mask lets it see every "
                                              "position)")])
        for x in attns:
            names = []
            for h in x.heads:
                heads.append(_head(h, offsets[k - 1][0], d))
                names.append("b%d" % len(heads))
            if len(attns) == 1 and len(names) > 1:
                refs[x.id] = "b"  # all the layer's heads, in order
            else:
                refs[x.id] = names[0] if len(names) == 1 else g.add(
                    {"op": "concat", "in": names}, "attn%d" % x.id)
        for x in needed:
            if lev[x.id] == k and x.kind != "attn":
                refs[x.id] = g.node(x, refs)
        out = g.state(states[k], refs, d, "y", d)
        if not g.nodes:  # a graph needs a node: the state passes through unchanged
            out = g.add({"op": "scale", "in": out, "factor": 1}, "same")
        update = {"kind": "graph", "nodes": g.nodes, "output": out}
        layer = {"mask": "causal"} if causal and all(causal) else {}
        layer.update({"heads": heads, "update": update})
        layers.append(layer)

    off, _ = offsets[L]
    readout = readout_doc(off[base.id], d)
    doc = {"format": "attnprop-model", "version": 1, "name": meta["name"],
           "description": meta["description"], "source": meta["source"], "attention": "soft",
           "alphabet": list(meta["alphabet"]), "eos": meta["eos"], "d": d,
           "token_embedding": token_embedding, "positional": positional, "input": input_map,
           "layers": layers, "readout": readout}
    _no_floats(doc)
    return doc


def _no_floats(v, where="the document"):
    """A Python float in the document would be written inexactly by json.dump: an internal
    error, never a silent rounding."""
    if isinstance(v, float):
        raise RuntimeError("internal error: a float (%r) in %s" % (v, where))
    if isinstance(v, dict):
        for k, x in v.items():
            _no_floats(x, "%s/%s" % (where, k))
    elif isinstance(v, list):
        for k, x in enumerate(v):
            _no_floats(x, "%s/%d" % (where, k))


def _token_embedding(toks, meta):
    symbols = list(meta["alphabet"]) + [meta["eos"]]
    off, k = {}, 0
    for x in toks:
        off[x.id] = k
        k += x.dim
    vecs = {}
    for s, sym in enumerate(symbols):
        vec = []
        for x in toks:
            vec.extend(x.rows[s])
        vecs[sym] = [number(q) for q in vec] if vec else [0]
    return vecs, off, max(k, 1)


def _positional(I, poss):
    off, k = {}, 0
    elems = []
    for x in poss:
        off[x.id] = k
        k += x.dim
        mapping = x.mapping
        for f in x.elems:
            elems.append((f, mapping, x.pad_row))
    if not elems:
        return {"kind": "formula", "dim": 1, "coordinates": [0]}, off, 1
    if any(fm.uses_table(f) for f, _, _ in elems):
        return _table(I, elems), off, k
    base = _sinusoidal_base(elems)
    if base is not None:
        pos = {"kind": "sinusoidal", "dim": len(elems)}
        if base != 10000:
            pos["base"] = number(base)
        return pos, off, k
    coords = []
    for f, mapping, _ in elems:
        p = fm.sub(fm.var("i"), fm.ONE) if mapping == "last" else \
            fm.mul(fm.var("i"), fm.cmp("<", fm.var("i"), fm.N))
        g = fm.subst(f, {"p": p})
        extra = fm.variables(g) - {"i", "n"}
        if extra:
            raise EmitError([(None, "a positional feature uses an unknown variable")])
        coords.append(0 if g == fm.ZERO else (number(g.value) if g.kind == "num" else
                                                fm.render(g)))
    nonzero = sum(1 for c in coords if c != 0)
    if nonzero * 2 < len(coords):
        coordinates = {str(j): c for j, c in enumerate(coords) if c != 0}
    else:
        coordinates = coords
    return {"kind": "formula", "dim": len(coords), "coordinates": coordinates}, off, k


def _sinusoidal_base(elems):
    """b when the coordinates are exactly attnprop's sinusoidal kind with base b (PE(pos, 2k) =
    sin(pos / b^(2k/dim)), PE(pos, 2k+1) = cos(...), pos = i - 1), else None."""
    dim = len(elems)
    if dim < 1 or any(m != "last" for _, m, _ in elems):
        return None
    base = Fraction(10000)
    if dim >= 3:
        f = elems[2][0]
        if f.kind != "fn" or f.name != "sin" or f.args[0].kind != "div":
            return None
        den = f.args[0].args[1]
        if den.kind != "pow" or den.args[0].kind != "num":
            return None
        base = den.args[0].value
        if base <= 1:
            return None
    p = fm.var("p")
    for c, (f, _, _) in enumerate(elems):
        e = Fraction(2 * (c // 2), dim)
        arg = fm.div(p, fm.power(fm.num(base), fm.num(e)))
        if f != fm.func("sin" if c % 2 == 0 else "cos", arg):
            return None
    return base


def _table_rank(f):
    if f.kind == "table":
        return len(f.args)
    return max((_table_rank(a) for a in f.args), default=0)


def _table(I, elems):
    """A positional table: every coordinate evaluated exactly at rows p = 0, 1, ... as long as
    every table it reads has the row."""
    rows = []
    pad = any(p for _, _, p in elems)
    for f, mapping, _ in elems:
        if _table_rank(f) > 1:
            raise EmitError([(None, "a table read at two positions is used as a positional "
                                    "feature")])
        if "n" in fm.variables(f):
            raise EmitError([(None, "a positional table combined with a formula in n cannot be "
                                    "written (attnprop's positional table is one row per "
                                    "position, the same for every n)")])
    r = 0
    limit = max(t.shape[0] for t in I.tables.values()) + 1
    while r < limit:
        row = []
        try:
            for f, _, _ in elems:
                row.append(fm.evaluate(f, {"p": r}, I.tables, exact=True))
        except fm.Undefined:
            break
        except ValueError:
            raise EmitError([(None, "a positional table combined with a formula that is not "
                                    "rational cannot be written as a table")])
        rows.append([number(q) for q in row])
        r += 1
    if pad:
        rows.append([0] * len(elems))
    if not rows:
        raise EmitError([(None, "a positional table with no rows")])
    return {"kind": "table", "rows": rows}


def _input_map(g, out, toks, poss, d, d_tok, d_pos):
    if len(g.nodes) == 1 and out == g.nodes[0]["id"]:
        n = g.nodes[0]
        if n["op"] == "add" and n["in"] == ["v", "p"] and d_tok == d_pos == d:
            return "add"
        if n["op"] == "concat" and n["in"] == ["v", "p"] and d_tok + d_pos == d:
            return "concat"
    return {"kind": "map", "map": {"kind": "graph", "nodes": g.nodes, "output": out}}


def _head(h, off, d):
    def place(form):
        o = off[form.base.id]
        return _matrix(_placed(form.rows, o), d)

    dk = len(h.q.rows)
    score = {"kind": "dot", "Q": place(h.q), "K": place(h.k)}
    r, s = h.scale
    qb = list(h.q.bias)
    qrows = h.q.rows
    if r < 0:
        qrows = [{c: -w for c, w in row.items()} for row in qrows]
        qb = [-b for b in qb]
        r = -r
        score["Q"] = _matrix(_placed(qrows, off[h.q.base.id]), d)
    if any(b != 0 for b in qb):
        score["q_bias"] = [number(b) for b in qb]
    if any(b != 0 for b in h.k.bias):
        score["k_bias"] = [number(b) for b in h.k.bias]
    if r == 0:
        score["Q"] = {"rows": dk, "cols": d, "entries": []}
        score.pop("q_bias", None)
    elif not (r * r * s == Fraction(1, dk)):
        if s == 1:
            score["scale"] = number(r)
        else:
            score["scale"] = {"factor": number(r * s), "inv_sqrt": number(s)}
    if h.beta is not None:
        if h.beta == fm.func("log", fm.N):
            score["length_scale"] = "log"
        else:
            if fm.variables(h.beta) - {"n"}:
                raise EmitError([(h.where, "an attention scale that depends on more than n")])
            score["beta"] = number(h.beta.value) if h.beta.kind == "num" else fm.render(h.beta)
    value = {"kind": "linear", "V": place(h.v)}
    if any(b != 0 for b in h.v.bias):
        value["bias"] = [number(b) for b in h.v.bias]
    return {"score": score, "value": value}


_NAMED_MODULES = ("nn.Linear", "nn.LayerNorm", "nn.MultiheadAttention", "nn.ReLU", "nn.GELU",
                  "nn.Tanh", "nn.Sigmoid")


def _node_name(x):
    """A graph id that says where the node comes from: the attribute name of the torch module
    that computed it (norm1, linear1, self_attn, ...) or the kind of operation (add, relu)."""
    op = x.where
    module = getattr(op, "module", None)
    if module is not None and module[1] in _NAMED_MODULES and module[0]:
        name = module[0].split(".")[-1]
        if name and not name.isdigit() and name.replace("_", "").isalnum():
            return name
    return x.kind


class _Graph:
    """The nodes of one graph map being written."""

    def __init__(self):
        self.nodes = []
        self.ids = set()

    def add(self, node, name):
        base, k = name, 1
        while name in self.ids or name in ("y", "v", "p", "b") or \
                (name.startswith("b") and name[1:].isdigit()):
            k += 1
            name = "%s_%d" % (base, k)
        node = dict({"id": name}, **node)
        self.nodes.append(node)
        self.ids.add(name)
        return name

    def slice_of(self, src, off, dim, width):
        if off == 0 and dim == width:
            return src
        return self.add({"op": "slice", "in": src, "from": off, "to": off + dim},
                        "%s%d_%d" % (src, off, off + dim))

    def node(self, x, refs):
        k = x.kind
        name = _node_name(x)
        ins = [refs[u.id] for u in x.inputs]
        if k == "linear":
            node = {"op": "linear", "in": ins[0], "W": _matrix(x.rows, x.inputs[0].dim)}
            if x.bias is not None and any(b != 0 for b in x.bias):
                node["b"] = [number(b) for b in x.bias]
            return self.add(node, name)
        if k in ("add", "sub", "mul"):
            return self.add({"op": k, "in": ins}, name)
        if k == "concat":
            return self.add({"op": "concat", "in": ins}, name)
        if k == "scale":
            return self.add({"op": "scale", "in": ins[0], "factor": number(x.factor)}, name)
        if k in ("relu", "tanh", "gelu", "erf", "step", "floor"):
            return self.add({"op": k, "in": ins[0]}, name)
        if k == "sigmoid":
            # sigmoid(x) = (1 + tanh(x/2)) / 2, exactly
            half = number(Fraction(1, 2))
            h = self.add({"op": "scale", "in": ins[0], "factor": half}, name + "_half")
            t = self.add({"op": "tanh", "in": h}, name + "_tanh")
            return self.add({"op": "linear", "in": t, "W": {"identity": x.dim, "scale": half},
                             "b": [half] * x.dim}, name)
        if k == "layer_norm":
            node = {"op": "layer_norm", "in": ins[0], "eps": number(x.eps)}
            if x.gamma is not None:
                node["gamma"] = [number(q) for q in x.gamma]
            if x.beta is not None:
                node["beta"] = [number(q) for q in x.beta]
            return self.add(node, name)
        raise EmitError([(x.where, "%s cannot be written" % k)])

    def state(self, nodes, refs, d, anchor, anchor_dim):
        """The id of the state: the nodes concatenated, padded with zeros to d."""
        ins = [refs[u.id] for u in nodes]
        width = sum(u.dim for u in nodes)
        if width < d:
            ins.append(self.add({"op": "linear", "in": anchor,
                                 "W": {"rows": d - width, "cols": anchor_dim, "entries": []}},
                                "zeros"))
        if len(ins) == 1:
            return ins[0]
        return self.add({"op": "concat", "in": ins}, "state")
