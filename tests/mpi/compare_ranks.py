#!/usr/bin/python3
"""An attnprop command under mpirun against the same command in one process.

    compare_ranks.py ATTNPROP MPIRUN NP [--kill-worker | --kill-root K [--resume-alone] | --stop]
                     -- ARGS...

Runs `ATTNPROP ARGS --out rep` in one process and `MPIRUN -np NP ATTNPROP ARGS --out rep` in
another empty folder (the same relative --out, so the recorded command lines are equal), then
requires the same exit code, the same standard output and the same report folder: every file
byte for byte. Reports hold no timing or host fields, so nothing is dropped. A run that ends
in an error (exit 2 or 3) must print the same "attnprop..." lines on standard error, once, and
write no report (its units.journal, which holds the units finished before the error, is not
compared: which those are depends on the ranks).

--kill-worker: the MPI run is killed (SIGKILL to rank 1) as soon as its journal holds a
finished unit while the run goes on (influence: a row in rows.json; check and restrict: a record
in units.journal, read and verified here as docs/reports.md describes it); the same command is
then run again, which must reuse exactly the units the journal held (for check: its property
records, and the batches of cases of the properties without one), compute the rest, and end
with the report of the one-process run. For influence that is apart from the marks of reuse
(docs/reports.md): the "reused" and "reused_rows" members of report.json and rows.json (and
rows.json's rows_sha256, a hash over its rows with those marks), the reused column of
influence.csv and " (reused)" in report.md; check and restrict mark nothing, so their folders
must be equal byte for byte, without units.journal, which a complete report removes. Standard
output is then not compared for influence (it says what was reused).

--kill-root K: the MPI run gets ATTNPROP_KILL_AFTER_UNITS=K, so rank 0 kills itself once it
has journaled K units in units.journal (check: property or batch records; influence: the units
of rows, beside the final rows in rows.json) and mpirun ends the whole job; the restart must
reuse exactly those units, as above. With --resume-alone the restart is one process (no
mpirun): restrict's parts journaled under MPI are reused there too.

--stop: SIGUSR1 goes to mpirun (Open MPI forwards it to every rank: attnprop's graceful stop)
as soon as the journal holds a finished unit; the run must end with exit 130 and a report of
the units it finished (influence: report.json; check and restrict: report.json, and the
journal kept beside it, since the report is not complete; restrict writes a report only when
some length had all its parts, else the journal alone); the same command run again must
reuse exactly the units the journal held and end as above.

Exit 0 when everything matches; 1 with the differences otherwise.
"""
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

MPI_ENV = {
    # root runs mpirun in the containers these tests run in; a 2-core machine runs 3 ranks
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    # one machine: shared memory and loopback only, no probing of other networks
    "OMPI_MCA_btl": "self,vader",
}


def run(cmd, cwd, env=None):
    return subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=300)


def mpi_env():
    env = dict(os.environ)
    env.update(MPI_ENV)
    return env


def drop_reuse(value):
    if isinstance(value, dict):
        return {k: drop_reuse(v) for k, v in value.items() if k not in ("reused", "reused_rows", "rows_sha256")}
    if isinstance(value, list):
        return [drop_reuse(v) for v in value]
    return value


def normalise(name, data, reuse_marks):
    if not reuse_marks:
        return data
    if name.endswith(".json"):
        return json.dumps(drop_reuse(json.loads(data)), indent=1).encode()
    if name.endswith(".csv"):
        lines = data.decode().splitlines()
        header = lines[0].split(",")
        if "reused" in header:
            k = header.index("reused")
            lines = [",".join(c for i, c in enumerate(l.split(",")) if i != k) for l in lines]
        return "\n".join(lines).encode()
    if name.endswith(".md"):
        return data.replace(b" (reused)", b"")
    return data


def tree(root):
    out = {}
    for base, _, files in os.walk(root):
        for f in files:
            p = os.path.join(base, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = fh.read()
    return out


def compare_trees(a, b, reuse_marks, expect_report=True):
    problems = []
    ta, tb = tree(a), tree(b)
    if not expect_report:
        # A run that ended in an error keeps the journal of the units finished before it, which
        # depend on how the ranks shared the work; it writes no report.
        for t in (ta, tb):
            t.pop("units.journal", None)
    for name in sorted(set(ta) | set(tb)):
        if name not in ta or name not in tb:
            problems.append(f"{name}: only in the {'one-process' if name in ta else 'MPI'} report")
            continue
        if normalise(name, ta[name], reuse_marks) != normalise(name, tb[name], reuse_marks):
            problems.append(f"{name}: differs")
    if not ta and expect_report:
        problems.append("the one-process run wrote no report")
    return problems


def rows_done(path):
    return len(rows_ns(path))


def rows_ns(path):
    """The lengths n of the rows in rows.json."""
    try:
        with open(path) as fh:
            return {row["n"] for row in json.load(fh)["rows"]}
    except (OSError, ValueError, KeyError, TypeError):
        return set()


def journal_records(path):
    """The units of the complete records of units.journal whose SHA-256 matches (a torn or
    damaged record ends the list), read independently of attnprop's reader."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return []
    end = data.find(b"\n")
    if end < 0:
        return []
    try:
        fingerprint = json.loads(data[:end])["fingerprint"].encode()
    except (ValueError, KeyError):
        return []
    at, units = end + 1, []
    while len(data) - at >= 48:
        u = int.from_bytes(data[at:at + 8], "little")
        r = int.from_bytes(data[at + 8:at + 16], "little")
        if u + r > len(data) - at - 48:
            break
        unit = data[at + 48:at + 48 + u]
        result = data[at + 48 + u:at + 48 + u + r]
        if hashlib.sha256(fingerprint + b"\n" + data[at:at + 16] + unit + result).digest() != data[at + 16:at + 48]:
            break
        units.append(unit.decode())
        at += 48 + u + r
    return units


def units_done(work, command):
    if command == "influence":
        return rows_done(os.path.join(work, "rep", "rows.json"))
    return len(journal_records(os.path.join(work, "rep", "units.journal")))


def reusable_units(work, command):
    """The units a restart can reuse from the journal: every record, but for check the batch
    records ("suite/name@first+count") of a property whose own record is there too (its
    report is reused whole). restrict under MPI journals parts of lengths ("N restriction",
    "N language", "N block B"), each reused."""
    units = journal_records(os.path.join(work, "rep", "units.journal"))
    if command == "influence":
        # Rows of rows.json, and under MPI the units ("n=N attempt=A unit=U") of the others.
        final = rows_ns(os.path.join(work, "rep", "rows.json"))
        return len(final) + len([u for u in units if int(u.split()[0][2:]) not in final])
    whole = {u for u in units if "@" not in u}
    return len(whole) + len([u for u in units if "@" in u and u.rsplit("@", 1)[0] not in whole])


def reused_units(work, command, stderr):
    """How many units the restart reused: influence's reused_rows and the count in
    "influence: reused K units of M unfinished lengths from ...", or the counts in the lines
    "check: reused K of N properties from ..." and "check: reused B batches of cases of M
    unfinished properties from ..." ("restrict: reused K of N lengths ...", "restrict: reused K
    units of M unfinished lengths from ...")."""
    reused = 0
    if command == "influence":
        with open(os.path.join(work, "rep", "report.json")) as fh:
            reused = json.load(fh).get("reused_rows")
    for line in stderr.decode(errors="replace").splitlines():
        if line.startswith(command + ": reused "):
            reused += int(line.split()[2])
    return reused


def rank_pids(mpirun_pid, rank):
    """The pids of the processes below mpirun whose OMPI_COMM_WORLD_RANK is `rank`."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as fh:
                env = fh.read().split(b"\0")
            with open(f"/proc/{d}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if f"OMPI_COMM_WORLD_RANK={rank}".encode() in env and ppid == mpirun_pid:
            pids.append(int(d))
    return pids


def kill_then_resume(attnprop, mpirun, np, args, work, kill_root, stop=False, alone=False):
    command = args[0]
    cmd = [mpirun, "-np", str(np), attnprop] + args + ["--out", "rep"]
    env = mpi_env()
    if kill_root:
        env["ATTNPROP_KILL_AFTER_UNITS"] = str(kill_root)
    proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    killed = None
    ranks = []
    while not kill_root and time.time() < deadline and proc.poll() is None:
        # Read once per turn: the journal may gain its first unit between two reads.
        done = units_done(work, command)
        if done >= 1 and stop:
            proc.send_signal(signal.SIGUSR1)
            killed = f"SIGUSR1 to mpirun when the journal held {done} units"
            break
        if done >= 1:
            ranks = rank_pids(proc.pid, 0)
            for pid in rank_pids(proc.pid, 1):
                os.kill(pid, signal.SIGKILL)
                killed = f"rank 1 (pid {pid}) when the journal held {done} units"
            break
        time.sleep(0.02)
    code = proc.wait(timeout=120)
    # mpirun may exit before the ranks it terminated are gone: a restart is a later command,
    # so wait until the killed run's rank 0 has ended (it may be between writing a file and
    # renaming it, which leaves a temporary file for the restart to clear).
    while ranks and time.time() < deadline:
        ranks = [pid for pid in ranks if os.path.exists(f"/proc/{pid}")]
        time.sleep(0.02)
    if kill_root:
        killed = f"rank 0 after {kill_root} units"
    if killed is None:
        return [f"no worker was killed (the run ended first, exit {code}): give it more work"], None
    before = units_done(work, command)
    reusable = reusable_units(work, command)
    journaled = len(journal_records(os.path.join(work, "rep", "units.journal")))
    problems = []
    if stop:
        if code != 130:
            problems.append(f"mpirun exited {code} after SIGUSR1, not 130 (interrupted)")
        if command == "restrict" and not os.path.exists(os.path.join(work, "rep", "report.json")):
            # Over ranks a length is complete when every part is in (its restriction first,
            # then its certificate blocks): a stop among the restrictions finishes no length,
            # writes no report and keeps the journal for the rerun.
            if not os.path.exists(os.path.join(work, "rep", "units.journal")):
                problems.append("the stopped run kept no journal of the units it finished")
        elif not os.path.exists(os.path.join(work, "rep", "report.json")):
            problems.append("the stopped run wrote no report of the units it finished")
    elif code == 0:
        problems.append("mpirun exited 0 although a rank was killed")
    elif command != "influence" and os.path.exists(os.path.join(work, "rep", "report.json")):
        problems.append("the killed run wrote a report")
    print(f"killed {killed}; mpirun exited {code}; the journal holds {before} units, "
          f"{reusable} of them reusable")
    again = run([attnprop] + args + ["--out", "rep"], work) if alone else run(cmd, work, mpi_env())
    sys.stdout.write(again.stderr.decode(errors="replace")[-2000:] if again.returncode not in (0, 1) else "")
    reused = reused_units(work, command, again.stderr)
    print(f"restart exited {again.returncode}, reused {reused} units")
    if reused != reusable:
        problems.append(f"the restart reused {reused} units, the journal held {reusable} reusable")
    if reusable < 1:
        problems.append("no unit was kept from the killed run")
    if kill_root and journaled != kill_root:
        problems.append(f"rank 0 was to be killed after {kill_root} units, the journal holds {journaled}")
    if command != "influence" and os.path.exists(os.path.join(work, "rep", "units.journal")):
        problems.append("units.journal is left beside the complete report")
    return problems, again.returncode


def main():
    argv = sys.argv[1:]
    if "--" not in argv or len(argv) < 4:
        print(__doc__)
        return 2
    sep = argv.index("--")
    attnprop, mpirun, np = argv[0], argv[1], int(argv[2])
    kill = "--kill-worker" in argv[3:sep]
    kill_root = int(argv[argv.index("--kill-root") + 1]) if "--kill-root" in argv[3:sep] else 0
    stop = "--stop" in argv[3:sep]
    alone = "--resume-alone" in argv[3:sep]
    args = argv[sep + 1:]
    with tempfile.TemporaryDirectory(prefix="attnprop-mpi-") as tmp:
        one, many = os.path.join(tmp, "one"), os.path.join(tmp, "many")
        os.makedirs(one)
        os.makedirs(many)
        plain = run([attnprop] + args + ["--out", "rep"], one)
        problems = []
        if kill or kill_root or stop:
            problems, code = kill_then_resume(attnprop, mpirun, np, args, many, kill_root, stop, alone)
            if code is not None and code != plain.returncode:
                problems.append(f"exit code {code} after the restart, {plain.returncode} in one process")
        else:
            mpi = run([mpirun, "-np", str(np), attnprop] + args + ["--out", "rep"], many, mpi_env())
            if mpi.returncode != plain.returncode:
                problems.append(f"exit code {mpi.returncode} under mpirun, {plain.returncode} in one "
                                f"process\n{mpi.stderr.decode(errors='replace')[-3000:]}")
            if mpi.stdout != plain.stdout:
                problems.append("standard output differs:\n--- one process\n" +
                                plain.stdout.decode(errors="replace")[-2000:] + "\n--- mpirun\n" +
                                mpi.stdout.decode(errors="replace")[-2000:])
            # An error (exit 2 or 3) writes no report: its message must be the same, once.
            if plain.returncode in (2, 3):
                said = lambda r: [l for l in r.stderr.decode(errors="replace").splitlines()
                                  if l.startswith("attnprop")]
                if said(plain) != said(mpi):
                    problems.append(f"the error differs: {said(plain)} in one process, "
                                    f"{said(mpi)} under mpirun")
        # Only influence marks reuse in its report; check's and restrict's must be equal as they are.
        reuse_marks = (kill or kill_root or stop) and args[0] == "influence"
        problems += compare_trees(os.path.join(one, "rep"), os.path.join(many, "rep"), reuse_marks,
                                  plain.returncode not in (2, 3))
        what = " ".join(args)
        if problems:
            print(f"FAIL ({what}, np = {np}):")
            for p in problems:
                print("  " + p)
            return 1
        print(f"identical ({what}, np = {np}; exit {plain.returncode}; "
              f"{len(tree(os.path.join(one, 'rep')))} report files)")
        return 0


if __name__ == "__main__":
    sys.exit(main())
