"""Start-up: ``import hyperlab``, ``hyperlab --help`` and ``hyperlab ls`` on a store of 1,000
experiments, each from a fresh process, side by side with Optuna's in the same run.

Each command runs ``--repeat`` times as a new process (after one warm-up run, which writes the
bytecode caches); the median wall time is printed with the increment over a bare interpreter,
``python -c pass``. The machine's own start-up is printed too: ``python -I -c pass`` (no
environment, no user site) and ``python -S -c pass`` (no ``site``: on some machines ``site``
imports packages through ``.pth`` files, certifi for one, for every interpreter).

- ``import hyperlab`` against ``import optuna``;
- ``hyperlab --help`` against ``optuna --help`` (their console scripts, beside this Python);
- ``hyperlab ls`` against ``optuna studies --storage URL``, each on a SQLite file of
  ``--experiments`` experiments (studies) of 3 trials each. So that building the stores takes
  seconds, not minutes, ``--templates`` of them are run through each tool's own API
  (``hyperlab.run``, ``study.optimize``), then copied row by row, every table of the store,
  under fresh ids, names and times, until there are ``--experiments``. Output goes to a pipe, as
  in a script: ``hyperlab ls`` then writes its table's text without rich's layout (the text is
  the same, see ``hyperlab.cli._table``); on a terminal rich lays it out, which ``--terminal``
  times instead (``FORCE_COLOR``/``TTY_COMPATIBLE`` make both tools' libraries treat the pipe as
  a terminal).

Targets (issue 31): ``import hyperlab`` and ``hyperlab --help`` each under 100 ms, ``hyperlab ls``
on 1,000 experiments under 300 ms. They are judged on the wall time of the command, start-up of
the interpreter included, as a user sees it; the increment over ``python -c pass`` is printed
beside it, because on this machine a bare interpreter alone can take most of the budget.

Bytecode: the children run with ``PYTHONDONTWRITEBYTECODE`` removed and ``PYTHONPYCACHEPREFIX``
set to a temporary folder, so that both tools run from cached bytecode, as they do once
installed (where the environment forbids writing bytecode, every run would otherwise compile
hyperlab's sources anew).

    python benchmarks/startup.py [--repeat 15] [--experiments 1000] [--terminal] [--baseline SRC]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent
TRIALS = 3

_MAKE_HYPERLAB = """
import sys, hyperlab
for i in range(int(sys.argv[1])):
    hyperlab.run(lambda p: (p["x"] - 0.3) ** 2 + p["n"] * 0.01,
                 {"x": hyperlab.uniform(-1, 1), "n": hyperlab.randint(0, 5)},
                 max_trials=TRIALS, seed=i, name=f"template-{i}", progress=False)
""".replace("TRIALS", str(TRIALS))

_MAKE_OPTUNA = """
import sys, optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
storage = optuna.storages.RDBStorage(sys.argv[2])
def f(t):
    return (t.suggest_float("x", -1, 1) - 0.3) ** 2 + t.suggest_int("n", 0, 5) * 0.01
for i in range(int(sys.argv[1])):
    optuna.create_study(storage=storage, study_name=f"template-{i}",
                        sampler=optuna.samplers.TPESampler(seed=i)).optimize(f, n_trials=TRIALS)
""".replace("TRIALS", str(TRIALS))


def _columns(db: sqlite3.Connection, table: str) -> list[tuple[str, bool]]:
    """Each column of ``table`` with whether it is an integer primary key of its own."""
    info = db.execute(f"pragma table_info({table})").fetchall()
    keys = [row for row in info if row[5]]
    own_key = len(keys) == 1 and keys[0][2].upper() == "INTEGER"
    return [(row[1], own_key and bool(row[5])) for row in info]


def _copy(
    db: sqlite3.Connection, table: str, where: str, key: object, new: dict[str, Any]
) -> list[tuple[int, int]]:
    """Copy the rows of ``table`` whose ``where`` column is ``key``, with the values of ``new``
    (a value, or a function of the old row's value) and fresh integer keys; each copied row's
    old and new integer key (none when the table has no integer key of its own)."""
    columns = _columns(db, table)
    key_column = [name for name, own in columns if own]
    names = [name for name, own in columns if not own]
    rows = db.execute(
        f"select {', '.join(key_column + names)} from {table} where {where} = ?", (key,)
    ).fetchall()
    made = []
    for row in rows:
        values = list(row[len(key_column) :])
        for i, name in enumerate(names):
            if name in new:
                values[i] = new[name](values[i]) if callable(new[name]) else new[name]
        cursor = db.execute(
            f"insert into {table} ({', '.join(names)}) values ({', '.join('?' * len(names))})",
            values,
        )
        if key_column:
            made.append((row[0], cursor.lastrowid or 0))
    return made


def copy_hyperlab(path: Path, total: int) -> None:
    """Copy the store's experiments, round robin, until it has ``total``."""
    db = sqlite3.connect(path)
    templates = [row[0] for row in db.execute("select id from experiments order by created_at")]
    tables = [
        row[0]
        for row in db.execute("select name from sqlite_master where type = 'table'")
        if row[0] != "experiments" and "experiment_id" in [c for c, _ in _columns(db, row[0])]
    ]
    for i in range(total - len(templates)):
        source, new_id = templates[i % len(templates)], f"copy{i:04d}"
        _copy(
            db,
            "experiments",
            "id",
            source,
            {"id": new_id, "name": f"copy-{i}", "created_at": lambda t, i=i: t + i + 1},
        )
        for table in tables:
            _copy(db, table, "experiment_id", source, {"experiment_id": new_id})
    db.commit()
    db.close()


def copy_optuna(path: Path, total: int) -> None:
    """Copy the storage's studies, round robin, until it has ``total``."""
    db = sqlite3.connect(path)
    templates = [row[0] for row in db.execute("select study_id from studies order by study_id")]
    tables = [row[0] for row in db.execute("select name from sqlite_master where type = 'table'")]
    by_study = [
        t
        for t in tables
        if t not in ("studies", "trials") and "study_id" in [c for c, _ in _columns(db, t)]
    ]
    by_trial = [
        t for t in tables if t != "trials" and "trial_id" in [c for c, _ in _columns(db, t)]
    ]
    for i in range(total - len(templates)):
        source = templates[i % len(templates)]
        cursor = db.execute("insert into studies (study_name) values (?)", (f"copy-{i}",))
        study = cursor.lastrowid
        for table in by_study:
            _copy(db, table, "study_id", source, {"study_id": study})
        for old, new in _copy(db, "trials", "study_id", source, {"study_id": study}):
            for table in by_trial:
                _copy(db, table, "trial_id", old, {"trial_id": new})
    db.commit()
    db.close()


def run_child(argv: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    """The wall time and the CPU time (user and system) of one run of ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def median_time(argv: Sequence[str], env: dict[str, str], repeat: int) -> tuple[float, float]:
    """Median wall and CPU times over ``repeat`` runs, after one warm-up run (bytecode
    caches, the page cache)."""
    run_child(argv, env)
    walls, cpus = zip(*(run_child(argv, env) for _ in range(repeat)), strict=True)
    return statistics.median(walls), statistics.median(cpus)


def script(name: str) -> list[str]:
    found = BIN / name
    if found.exists():
        return [str(found)]
    found_on_path = shutil.which(name)
    if found_on_path is None:
        raise SystemExit(f"{name}: no console script beside {sys.executable} nor on PATH")
    return [found_on_path]


def verdict(seconds: float, target: float | None) -> str:
    if target is None:
        return ""
    return f"{'met' if seconds < target else 'MISSED'} (< {1000 * target:.0f} ms)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15, help="fresh processes per command")
    parser.add_argument("--experiments", type=int, default=1000)
    parser.add_argument("--templates", type=int, default=10, help="experiments really run")
    parser.add_argument("--terminal", action="store_true", help="ls as if on a terminal")
    parser.add_argument(
        "--baseline",
        metavar="SRC",
        help="also time hyperlab's commands with PYTHONPATH=SRC (another checkout's src), "
        "in the same run: before and after",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env |= {"PYTHONPYCACHEPREFIX": str(work / "pycache"), "HYPERLAB_HOME": str(work / "home")}
        env.pop("COLUMNS", None)
        if args.terminal:
            env |= {"FORCE_COLOR": "1", "TTY_COMPATIBLE": "1", "COLUMNS": "200"}

        start = time.perf_counter()
        hyperlab_db, optuna_db = work / "home" / "hyperlab.db", work / "optuna.db"
        python = [sys.executable, "-c"]
        subprocess.run([*python, _MAKE_HYPERLAB, str(args.templates)], check=True, env=env)
        copy_hyperlab(hyperlab_db, args.experiments)
        optuna_url = f"sqlite:///{optuna_db}"
        subprocess.run(
            [*python, _MAKE_OPTUNA, str(args.templates), optuna_url], check=True, env=env
        )
        copy_optuna(optuna_db, args.experiments)
        print(
            f"stores of {args.experiments} experiments / studies ({args.templates} run, the "
            f"rest copied) built in {time.perf_counter() - start:.1f} s"
        )

        bare, bare_cpu = median_time([sys.executable, "-c", "pass"], env, args.repeat)
        isolated, isolated_cpu = median_time([sys.executable, "-I", "-c", "pass"], env, args.repeat)
        no_site, no_site_cpu = median_time([sys.executable, "-S", "-c", "pass"], env, args.repeat)
        print(
            f"\nmedian of {args.repeat} fresh processes, Python {sys.version.split()[0]}, "
            f"{os.cpu_count()} CPUs; output piped{' as a terminal' if args.terminal else ''}; "
            "wall time, and CPU time (user + system, steadier on a busy machine) in brackets"
        )
        print(
            f"  python -c pass     {1000 * bare:7.1f} ms ({1000 * bare_cpu:5.1f})   "
            "(the increments below are over it)"
        )
        print(f"  python -I -c pass  {1000 * isolated:7.1f} ms ({1000 * isolated_cpu:5.1f})")
        print(
            f"  python -S -c pass  {1000 * no_site:7.1f} ms ({1000 * no_site_cpu:5.1f})   "
            "(no site: the machine's own start-up)"
        )

        ls_name = "hyperlab ls (1,000)" if args.experiments == 1000 else "hyperlab ls"
        rows = [
            (
                "import hyperlab",
                [*python, "import hyperlab"],
                [*python, "import optuna"],
                "import optuna",
                0.100,
            ),
            (
                "hyperlab --help",
                [*script("hyperlab"), "--help"],
                [*script("optuna"), "--help"],
                "optuna --help",
                0.100,
            ),
            (
                ls_name,
                [*script("hyperlab"), "ls"],
                [*script("optuna"), "studies", "--storage", optuna_url],
                "optuna studies",
                0.300,
            ),
        ]
        print(
            f"\n  {'command':<20}{'wall (cpu)':>17}{'over bare':>11}   {'peer':<15}"
            f"{'wall (cpu)':>17}{'over bare':>11}{'peer/ours':>10}   target (wall)"
        )
        for name, ours_argv, theirs_argv, peer, target in rows:
            ours, ours_cpu = median_time(ours_argv, env, args.repeat)
            theirs, theirs_cpu = median_time(theirs_argv, env, args.repeat)
            if args.baseline:
                old, old_cpu = median_time(
                    ours_argv, env | {"PYTHONPATH": args.baseline}, args.repeat
                )
                print(f"  {name + ' (baseline)':<31}{1000 * old:8.1f} ({1000 * old_cpu:6.1f})")
            print(
                f"  {name:<20}{1000 * ours:8.1f} ({1000 * ours_cpu:6.1f})"
                f"{1000 * (ours - bare):9.1f}ms   {peer:<15}"
                f"{1000 * theirs:8.1f} ({1000 * theirs_cpu:6.1f})"
                f"{1000 * (theirs - bare):9.1f}ms{theirs / ours:9.1f}x   {verdict(ours, target)}",
                flush=True,
            )


if __name__ == "__main__":
    main()
