"""attnprop from Python: models, exact and rigorous evaluation, Hahn's bounds and influence sweeps.

    >>> import attnprop
    >>> m = attnprop.load("cc-parity")            # a bundled name, a model file, or a dict
    >>> r = m.eval("0110", scalar="ball")          # an Evaluation
    >>> r.probabilities[1]                          # an Interval: the true value lies inside
    >>> attnprop.load("hard-first").eval("1011").y  # exact rationals: fractions.Fraction

Values keep their meaning: ``fractions.Fraction`` for exact rationals, :class:`Interval`
(midpoint and radius, both exact; certified to contain the true value) for Arb balls and
certified double intervals, ``float`` for doubles, ``decimal.Decimal`` (the digits the
precision supports) for MPFR; vectors are numpy arrays (``dtype=object`` but for doubles).
Reports (:func:`bound`, :func:`influence`) are the documents ``report.json`` holds, as dicts,
with the command line's text in ``.text``. Errors raise :class:`Error` (a ``ValueError``) with
the command line's located message; a value that does not exist is a result
(``Evaluation.undefined``), never a number. Long computations release the GIL and stop on
Ctrl-C (``KeyboardInterrupt``).
"""

import decimal
import fractions
import html
import json
import os

from . import _core

__all__ = ["Error", "UndefinedError", "LimitError", "Interval", "Model", "Evaluation", "Report",
           "InfluenceReport", "load", "models", "scalars", "evaluate", "bound", "influence", "simulate",
           "restrict", "plot", "check", "replay", "properties", "CheckReport", "Counterexample"]


class Error(ValueError):
    """A bad model, input or option: the message attnprop's command line prints (exit 2)."""


class UndefinedError(Error):
    """A value of the model that does not exist (the command line's exit 4)."""


class LimitError(Error):
    """A computation refused before it starts because it would exceed a resource limit."""


_core.set_errors(Error, UndefinedError, LimitError)

# Installed as PREFIX/share/attnprop/python/attnprop: the installation's models are
# PREFIX/share/attnprop/models.
_installed_models = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "..", "..", "models"))
if os.path.basename(os.path.dirname(_installed_models)) == "attnprop" and os.path.isdir(_installed_models):
    _core.set_package_models_dir(_installed_models)


class Interval:
    """A certified enclosure: the true value lies in [mid - rad, mid + rad].

    ``mid`` and ``rad`` are the exact rationals of the enclosure (``fractions.Fraction``);
    ``text`` is how attnprop prints it (the digits the radius certifies).
    """

    __slots__ = ("mid", "rad", "text")

    def __init__(self, mid, rad, text=None):
        self.mid = fractions.Fraction(mid)
        self.rad = fractions.Fraction(rad)
        if self.rad < 0:
            raise ValueError("Interval: negative radius")
        self.text = text if text is not None else "%.17g +/- %.3g" % (float(self.mid), float(self.rad))

    @property
    def lower(self):
        return self.mid - self.rad

    @property
    def upper(self):
        return self.mid + self.rad

    def __contains__(self, x):
        q = fractions.Fraction(x)
        return self.lower <= q <= self.upper

    def __float__(self):
        """The midpoint, rounded to a double (a measurement, not the value)."""
        return float(self.mid)

    def __eq__(self, other):
        return isinstance(other, Interval) and (self.mid, self.rad) == (other.mid, other.rad)

    def __hash__(self):
        return hash((self.mid, self.rad))

    def __repr__(self):
        return "Interval(%s)" % self.text

    def __str__(self):
        return self.text


def _values(kind, mids, rads, texts, digits_texts):
    """The values of one vector of an evaluation, typed by the scalar kind."""
    import numpy
    out = []
    for mid, rad, text, digits in zip(mids, rads, texts, digits_texts):
        if mid == "undefined":
            out.append(None)
        elif kind in ("ball", "interval"):
            out.append(Interval(mid, rad, text))
        elif kind == "exact":
            out.append(fractions.Fraction(mid))
        elif kind == "double":
            out.append(float(fractions.Fraction(mid)))  # the double itself: p/q is exact
        else:  # mpfr: the digits the precision supports
            out.append(decimal.Decimal(digits))
    if kind == "double" and None not in out:
        return numpy.array(out, dtype=numpy.float64)
    arr = numpy.empty(len(out), dtype=object)
    arr[:] = out
    return arr


class Evaluation:
    """One evaluation of a model on one input (``attnprop eval``).

    Attributes: ``model``, ``input`` (without eos), ``n`` (eos included), ``scalar``,
    ``precision`` (bits; 0 for exact), ``y`` (y_n^(L), a numpy array), ``accept``
    (recognizers: "accept", "reject" or "undecided"; else None), ``output_symbols``,
    ``logits`` and ``probabilities`` (softmax readouts, numpy arrays), ``undefined`` (None, or
    the located message of a value that does not exist: then y and the readout are empty),
    ``undecided`` (an argmax an enclosure could not decide), ``notes``.
    """

    def __init__(self, raw):
        k = raw["scalar"]
        self.model = raw["model"]
        self.input = raw["input"]
        self.n = raw["n"]
        self.scalar = k
        self.precision = raw["precision"]
        self.y = _values(k, raw["y_mid"], raw["y_rad"], raw["y_text"], raw["y"])
        self.accept = raw["accept"]
        self.output_symbols = list(raw["output_symbols"])
        self.logits = _values(k, raw["logits_mid"], raw["logits_rad"], raw["logits_text"], raw["logits"])
        # The probabilities of an exact evaluation are Arb balls (softmax needs exp).
        pk = "ball" if k == "exact" else k
        self.probabilities = _values(pk, raw["probabilities_mid"], raw["probabilities_rad"],
                                     raw["probabilities_text"], raw["probabilities"])
        self.undefined = raw["undefined"]
        self.undecided = raw["undecided"]
        self.notes = list(raw["notes"])
        self._texts = (raw["y_text"], raw["logits_text"], raw["probabilities_text"])

    def __str__(self):
        head = "%s on %r (n = %d, %s%s)" % (self.model, self.input, self.n, self.scalar,
                                            ", %d bits" % self.precision if self.precision else "")
        if self.undefined:
            return head + ": undefined: " + self.undefined
        lines = [head, "  y = [" + ", ".join(self._texts[0]) + "]"]
        if self.accept is not None:
            lines.append("  " + self.accept)
        for name, texts in (("logits", self._texts[1]), ("probabilities", self._texts[2])):
            if texts:
                lines.append("  %s: " % name + ", ".join(
                    "%s: %s" % (s, t) for s, t in zip(self.output_symbols, texts)))
        if self.undecided:
            lines.append("  undecided: " + self.undecided)
        lines.extend("  note: " + n for n in self.notes)
        return "\n".join(lines)

    def __repr__(self):
        return "<attnprop.Evaluation %s>" % str(self).replace("\n", ";")


class Report(dict):
    """A report: the document ``report.json`` holds (a dict), with the command line's text."""

    def __init__(self, document, text):
        super().__init__(document)
        self.text = text

    @property
    def verdict(self):
        return self.get("verdict")

    def __repr__(self):
        return "<attnprop.Report %s: %s>" % (self.get("model"), self.verdict)

    def __str__(self):
        return self.text

    def _repr_html_(self):
        return "<pre>" + html.escape(self.text) + "</pre>"


class InfluenceReport(Report):
    """The report of an influence sweep across n (``attnprop influence``): ``rows`` (one dict per
    n), ``verdict``, ``slope``; :meth:`arrays` gives the columns as numpy arrays."""

    @property
    def rows(self):
        return self["rows"]

    def arrays(self):
        """The rows as numpy arrays: ``n`` (int), ``max_influence``, ``n_max_influence`` and
        ``mean_ce_bits`` (float: the approximate doubles of the report, NaN where a row is
        undefined or has no cross-entropy), ``undefined`` (bool)."""
        import numpy

        def num(x):
            return float(x) if x is not None else float("nan")

        rows = self.rows
        ce = [r.get("cross_entropy") for r in rows]
        return {
            "n": numpy.array([r["n"] for r in rows], dtype=numpy.int64),
            "max_influence": numpy.array([num(r["max_influence_approx"]) for r in rows]),
            "n_max_influence": numpy.array([num(r["n_max_influence_approx"]) for r in rows]),
            "mean_ce_bits": numpy.array([num(c["mean_ce_approx"]) if c else float("nan") for c in ce]),
            "undefined": numpy.array([r["undefined"] is not None for r in rows], dtype=bool),
        }

    def _repr_html_(self):
        head = ["n", "max Δ(n)", "n·max Δ(n)", "bound", "mean CE (bits)", "undefined"]
        out = ["<table><tr>" + "".join("<th>%s</th>" % h for h in head) + "</tr>"]
        for r in self.rows:
            ce = r.get("cross_entropy")
            cells = [r["n"], r["max_influence_approx"], r["n_max_influence_approx"], r["bound"],
                     ce["mean_ce_bits"] if ce else "", r["undefined"] or ""]
            out.append("<tr>" + "".join("<td>%s</td>" % html.escape(str(c if c is not None else "")) for c in cells) + "</tr>")
        out.append("</table><p>verdict: %s</p>" % html.escape(str(self.verdict)))
        return "".join(out)


class Counterexample:
    """A failed property's counterexample in a check report: ``property`` ("suite/name"),
    ``message``, ``inputs``, ``numbers`` (exact strings), ``precision``, ``reproduce`` (the
    command that reruns the property), ``folder`` (the counterexample folder, with case.json
    and model.json); :meth:`replay` reruns it from that folder alone."""

    def __init__(self, prop, entry, folder):
        self.property = prop
        self.message = entry["message"]
        self.inputs = list(entry["inputs"])
        self.numbers = dict(entry["numbers"])
        self.precision = entry["precision"]
        self.reproduce = entry["reproduce"]
        self.shrink_steps = entry["shrink_steps"]
        self.folder = folder

    def replay(self, allow_edited=False):
        """``attnprop replay FOLDER``: the case rerun from its folder (a :class:`Report`)."""
        return replay(self.folder, allow_edited=allow_edited)

    def __repr__(self):
        return "<attnprop.Counterexample %s: %s>" % (self.property, self.message)


class CheckReport(Report):
    """The report of property suites (``attnprop check``): the document report.json holds
    (``properties``, ``summary``, ...), ``verdict`` ("failed", "error", "undefined" or
    "passed"), ``folder`` (where the report was written) and :attr:`counterexamples`."""

    def __init__(self, document, text, verdict, folder, keep=None):
        super().__init__(document, text)
        self._verdict = verdict
        self.folder = folder
        self._keep = keep  # a temporary folder that lives as long as the report

    @property
    def verdict(self):
        return self._verdict

    @property
    def counterexamples(self):
        """The counterexamples of the failed properties, in report order."""
        out = []
        for p in self.get("properties", []):
            cx = p.get("counterexample")
            if cx:
                out.append(Counterexample(p["suite"] + "/" + p["name"], cx,
                                          os.path.join(self.folder, cx["folder"])))
        return out

    def __repr__(self):
        model = self.get("model")
        name = model["name"] if isinstance(model, dict) else "random models"
        return "<attnprop.CheckReport %s: %s, %d properties>" % (
            name, self.verdict, len(self.get("properties", [])))

    def _repr_html_(self):
        head = ["property", "status", "passed", "undecided", "undefined", "counterexample"]
        out = ["<table><tr>" + "".join("<th>%s</th>" % h for h in head) + "</tr>"]
        for p in self.get("properties", []):
            cx = p.get("counterexample")
            cells = [p["suite"] + "/" + p["name"], p["status"], p["passed"], p["undecided"],
                     p["undefined"], cx["message"] if cx else ""]
            out.append("<tr>" + "".join("<td>%s</td>" % html.escape(str(c)) for c in cells) + "</tr>")
        out.append("</table><p>verdict: %s</p>" % html.escape(str(self.verdict)))
        return "".join(out)


def _lengths(n):
    if n is None:
        return []
    if isinstance(n, int):
        return [n]
    return [int(x) for x in n]


class Model:
    """A model: its name, attention kind, alphabet, width ``d`` and number of layers; evaluated
    with :meth:`eval`, bounded with :meth:`bound`, swept with :meth:`influence`."""

    def __init__(self, core):
        self._core = core

    name = property(lambda self: self._core.name)
    source = property(lambda self: self._core.source)
    attention = property(lambda self: self._core.attention)
    alphabet = property(lambda self: list(self._core.alphabet))
    eos = property(lambda self: self._core.eos)
    d = property(lambda self: self._core.d)
    layers = property(lambda self: self._core.layers)
    description = property(lambda self: self._core.description)

    def to_dict(self):
        """The model file, as a dict (numbers as exact strings)."""
        return json.loads(self._core.to_json())

    def eval(self, input, scalar="auto", precision=256, digits=0):
        """Evaluates on ``input`` (symbols of the alphabet; eos is appended). ``scalar``: "auto"
        (exact for hard models, else balls), "exact", "double", "mpfr", "ball", "interval"."""
        return Evaluation(_core.evaluate(self._core, input, scalar, precision, digits))

    def bound(self, n=None, precision=256, classes=512, every_n=True):
        """Hahn's Lemma 5 (``attnprop bound``): hypotheses, K, and the bounds over every input
        at the lengths ``n`` (an int or a list) and over every n."""
        doc, text = _core.bound(self._core, _lengths(n), precision, classes, every_n)
        return Report(json.loads(doc), text)

    def influence(self, n, inputs=4, positions=8, language=None, precision=128,
                  precision_cap=None, scalar="auto", seed=1, threads=0, every_input=True, out=None,
                  progress=None, figure_text=False):
        """The one-symbol influence across n (``attnprop influence``). ``positions``: a count or
        "all"; ``language``: "parity", "2dyck", ...; ``every_input``: also the bounds over every
        input of each n (as the command; ``--no-every-input``); ``out``: a folder to write the report into
        (report.json, report.md, influence.csv and the figures; their titles and captions in
        report.md, in the images too with ``figure_text``); ``progress``: called with each
        row (a dict) as soon as it is final."""
        pos = 0 if positions == "all" else int(positions)
        cap = precision if precision_cap is None else precision_cap
        cb = None if progress is None else (lambda row: progress(json.loads(row)))
        doc, text = _core.influence(self._core, _lengths(n), inputs, pos, language or "", precision,
                                    cap, scalar, seed, threads, every_input, str(out) if out else "",
                                    figure_text, cb)
        return InfluenceReport(json.loads(doc), text)

    def simulate(self, beta, n, patterns=(), cube=False, inputs=None, seed=1, precision=128,
                 precision_cap=4096, interval=False, every_input=True, out=None, progress=None,
                 figure_text=False):
        """A hard or average-hard model against its soft counterpart at the inverse temperatures
        ``beta`` (a formula in n, or a list of them) (``attnprop simulate``). ``inputs``: random
        inputs per n (default 4, or 0 with ``patterns`` or ``cube``); ``out``: a folder for the
        report and its figures (leak, and the smallest certified β against n; titles and
        captions in report.md, in the images too with ``figure_text``); ``progress``:
        called with each n when it is done. The report's ``findings`` counts measured values
        certainly above their certified bound (the command's exit 1)."""
        betas = [beta] if isinstance(beta, str) else [str(b) for b in beta]
        patterns = [patterns] if isinstance(patterns, str) else list(patterns)
        if inputs is None:
            inputs = 4 if not patterns and not cube else 0
        doc, text = _core.simulate(self._core, betas, _lengths(n), patterns, cube, inputs, seed,
                                   precision, precision_cap, interval, every_input,
                                   str(out) if out else "", figure_text, progress)
        return Report(json.loads(doc), text)

    def restrict(self, n, free_fraction="1/2", language=None, seed=1, trials=0, samples=32,
                 fan_out=False, threads=0, out=None, figure_text=False):
        """Hahn's restriction of a hard model (``attnprop restrict``) at each length of ``n``:
        the report's ``runs`` hold, per n, what ``restrict --json`` prints (the restriction,
        its certificate, the language's counterexample). ``out``: a folder for the sweep's
        report and figure (its title and caption in report.md, in the image too with
        ``figure_text``)."""
        doc, text = _core.restrict(self._core, _lengths(n), str(free_fraction), language or "", seed,
                                   trials, samples, fan_out, threads, str(out) if out else "",
                                   figure_text)
        return Report(json.loads(doc), text)

    def check(self, properties=None, **kw):
        """``check(self, properties, **kw)``: the properties that make a claim about this model."""
        return check(self, properties, **kw)

    def __repr__(self):
        return "<attnprop.Model %s: %s attention, alphabet %s, d = %d, %d layers>" % (
            self.name, self.attention, "".join(self.alphabet), self.d, self.layers)


def models():
    """The names of the bundled models."""
    return [name for name, _ in _core.bundled()]


def scalars():
    """The scalar kinds ``eval`` accepts."""
    return list(_core.scalar_names())


def load(source, name=None):
    """A model from a bundled name ("cc-parity"), a model file's path, or a dict in the model
    format (what ``attnprop_torch.import_model`` returns)."""
    if isinstance(source, Model):
        return source
    if isinstance(source, dict):
        return Model(_core.load_text(json.dumps(source), name or "<dict>"))
    return Model(_core.load_path(str(source)))


def evaluate(model, input, **kw):
    """``load(model).eval(input, **kw)``."""
    return load(model).eval(input, **kw)


def bound(model, **kw):
    """``load(model).bound(**kw)``."""
    return load(model).bound(**kw)


def influence(model, n, **kw):
    """``load(model).influence(n, **kw)``."""
    return load(model).influence(n, **kw)


def plot(dirs, out, name=None, title="", caption=False, width=640):
    """``attnprop plot``: report folders of one command (``influence``, ``simulate`` or
    ``restrict`` with ``out=DIR``) overlaid on shared axes, one colour per folder, written as
    OUT/NAME.svg, .pdf and .png with report.md (title, verdicts, notes) beside them; ``name``
    defaults to "influence", "beta" (simulate: the smallest certified β against n) or
    "restrict". Returns the paths written; a PDF or PNG the renderer
    (rsvg-convert) could not make is named in ``report.md`` and left out."""
    if isinstance(dirs, (str, os.PathLike)):
        dirs = [dirs]
    files, _notes = _core.plot([str(d) for d in dirs], str(out), name or "", title, caption, width)
    return [os.path.join(str(out), f) for f in files]


def simulate(model, beta, n, **kw):
    """``load(model).simulate(beta, n, **kw)``."""
    return load(model).simulate(beta, n, **kw)


def restrict(model, n, **kw):
    """``load(model).restrict(n, **kw)``."""
    return load(model).restrict(n, **kw)


def _binary():
    """The attnprop executable check and replay run in: $ATTNPROP, else the build tree's or the
    installed one of this module."""
    env = os.environ.get("ATTNPROP")
    if env:
        return env
    for path in _core.binaries():
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise Error("check and replay run the attnprop executable, which is not at %s; set ATTNPROP "
                "to its path" % " or ".join(_core.binaries()))


def _run(args, on_line=None):
    """(exit code, standard output) of the executable with `args`; `on_line` is called with each
    line of its standard error as it comes. Ctrl-C (KeyboardInterrupt) is passed on to it, and
    raised once it has stopped; exit 2 raises Error with its message."""
    import subprocess
    import threading
    proc = subprocess.Popen([_binary()] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    out = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()))
    reader.start()
    err = []
    try:
        for line in proc.stderr:
            err.append(line)
            if on_line is not None:
                on_line(line.rstrip("\n"))
        proc.wait()
    except BaseException:
        import signal
        proc.send_signal(signal.SIGINT)
        proc.wait()
        raise
    finally:
        reader.join()
    if proc.returncode == 130:
        raise KeyboardInterrupt
    if proc.returncode == 2:
        text = "".join(err).strip()
        for prefix in ("attnprop: error: ", "attnprop: "):
            if text.startswith(prefix):
                text = text[len(prefix):]
        raise Error(text)
    return proc.returncode, "".join(out)


_PROGRESS = __import__("re").compile(
    r"^\[(\d+)/(\d+)\] (\S+): (\S+) \((\d+) passed, (\d+) undecided(?:, (\d+) undefined)?(, reused)?")


def properties():
    """The properties ``check`` knows: a dict "suite/name" -> statement, in registration order
    (``attnprop check --list``)."""
    _, out = _run(["check", "--list"])
    names, lines = {}, out.splitlines()
    for name, statement in zip(lines[0::2], lines[1::2]):
        names[name.split()[0]] = statement.strip()
    return names


def check(model=None, properties=None, tests=100, max_n=256, seed=1, precision=128,
          precision_cap=4096, search=16, out=None, force=False, progress=None):
    """``attnprop check``: property suites with RapidCheck on random models, or with ``model``
    (a :class:`Model` or what :func:`load` takes) on that model (n, inputs and positions drawn;
    the properties that make no claim about it are listed under ``not_applicable``).

    ``properties``: a suite name ("soft-influence"), a property ("suite/name") or a list of
    both; None: every suite but "controls". ``search``: with a model, inputs searched per case
    for the largest one-symbol change (0: none). ``out``: the report folder (report.json,
    report.md, counterexamples/), under the command's rules for ``--out`` (``force``:
    ``--force``); None: a temporary folder that lives as long as the report. ``progress``:
    called with a dict (property, index, of, status, passed, undecided, undefined, reused) as
    each property finishes. Returns a :class:`CheckReport`; a failure is a result (``verdict``
    "failed", with :attr:`CheckReport.counterexamples`), never an exception."""
    import tempfile
    if isinstance(properties, str):
        properties = [properties]
    keep = None
    if out is None:
        keep = tempfile.TemporaryDirectory(prefix="attnprop-check-")
        folder = os.path.join(keep.name, "report")
    else:
        folder = str(out)
    args = ["check", "--json", "--tests", str(int(tests)), "--max-n", str(int(max_n)),
            "--seed", str(int(seed)), "--precision", str(int(precision)),
            "--precision-cap", str(int(precision_cap)), "--out", folder]
    if force:
        args.append("--force")
    if properties is not None:
        if not properties:
            raise Error("properties: name at least one suite or property (None: every suite)")
        for p in properties:
            args += ["--property" if "/" in p else "--suite", p]
    if model is not None:
        m = load(model)
        source = m.source
        if not os.path.isfile(source):
            # A model from a dict: its canonical file, beside the report.
            if keep is None:
                keep = tempfile.TemporaryDirectory(prefix="attnprop-check-")
            source = os.path.join(keep.name, "%s.json" % m.name)
            with open(source, "w") as f:
                f.write(m._core.to_json())
        args += ["--model", source, "--search", str(int(search))]

    def on_line(line):
        hit = _PROGRESS.match(line)
        if hit and progress is not None:
            progress({"property": hit.group(3), "index": int(hit.group(1)), "of": int(hit.group(2)),
                      "status": hit.group(4), "passed": int(hit.group(5)),
                      "undecided": int(hit.group(6)), "undefined": int(hit.group(7) or 0),
                      "reused": bool(hit.group(8))})

    code, doc = _run(args, on_line)
    verdict = {0: "passed", 1: "failed", 3: "error", 4: "undefined"}.get(code)
    if verdict is None or not doc.strip().startswith("{"):
        raise Error("attnprop check ended with exit %d" % code)
    text = ""
    try:
        with open(os.path.join(folder, "report.md")) as f:
            text = f.read()
    except OSError:
        pass
    return CheckReport(json.loads(doc), text, verdict, folder, keep)


def replay(path, allow_edited=False):
    """``attnprop replay``: reruns a counterexample folder (or a report folder holding exactly
    one) and compares with its record. Returns a :class:`Report` (what ``replay --json``
    prints): ``verdict`` now, ``recorded_verdict``, ``reproduced``, ``numbers``, ``replay`` (one
    line). A folder that cannot be read, or was edited (unless ``allow_edited``), raises
    :class:`Error`."""
    args = ["replay", str(path), "--json"] + (["--allow-edited"] if allow_edited else [])
    code, doc = _run(args)
    if code not in (0, 1, 4, 5) or not doc.strip().startswith("{"):
        raise Error("attnprop replay ended with exit %d" % code)
    d = json.loads(doc)
    text = "property   %s\nverdict    %s (recorded: %s)\nreplay     %s\n" % (
        d["property"], d["verdict"], d["recorded_verdict"], d["replay"])
    return Report(d, text)
