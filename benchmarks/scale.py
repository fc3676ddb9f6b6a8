"""A million trials: one experiment of ``--trials`` trials x ``--reports`` reports, on SQLite or
PostgreSQL, and what it costs to write, store, read, serve, resume and continue.

Writing: ``--through-driver`` trials (default: all of them, capped at 100,000) run through
hyperlab's real path (``hyperlab.run``: a no-op objective yielding ``--reports`` reports,
``inprocess``, the random tuner, no assessor), which gives the write rate. When that is fewer
than ``--trials``, the store is filled up to ``--trials`` by copying those rows in SQL (trials,
their status events and reports, renumbered: ``INSERT ... SELECT``), so that the readers see a
store of the full size as the driver writes it (copies repeat the parameters of the originals).
On PostgreSQL the tables are then analyzed, as autovacuum would (without statistics, as on a
server run with ``autovacuum = off``, the planner guesses a few thousand rows and picks plans
that read every change or report: seconds per request at a million trials).

Then, each timed once (a fresh process each: wall time, CPU time, and its peak RSS):

- ``hyperlab ls``, ``hyperlab show ID``, ``hyperlab trials ID`` (every trial: it does not page),
  ``hyperlab trials ID --limit 50``, ``hyperlab export ID -o FILE`` (CSV);
- bytes per trial: the SQLite file's size (after a checkpoint), or the sum of
  ``pg_total_relation_size`` of hyperlab's tables, over the number of trials;
- the dashboard's API over HTTP on 127.0.0.1 (``--repeat`` times after a cold first request):
  the experiment, the trials table's first page (by number, best first), a deep page, a trial
  with its reports, the reports after a cursor, the changes after a cursor, and the plots; and
  the experiment page's first paint in Chromium (``benchmarks/dashboard.py`` does both);
- resume: ``hyperlab.resume(ID, max_trials=N)`` (nothing left to run: the replay of the whole
  history into a fresh random tuner, and the driver's start and end), and a continuation by
  ``--more`` trials with ``tuner="tpe"`` (the stored tuner set to ``tpe`` in the config row
  first): wall time and the driver's peak RSS (target: under 1 GB).

Several ``--trials`` (comma-separated) run one after the other; the table gives each figure per
size and the growth ratio from one size to the next (10x more trials: a ratio above ~12
flags a cost that grows faster than the number of trials).

Run: ``python benchmarks/scale.py [--trials 1000000] [--reports 20] [--storage sqlite|postgres]``
(PostgreSQL: ``--pg-url postgresql://postgres@127.0.0.1:5432/scale``, an empty database that the
benchmark empties and fills).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import itertools

from dashboard import Client, first_paints, percentile

EXPERIMENT = "scale001"
SPACE = {
    "lr": {"_type": "loguniform", "_value": [1e-5, 1e-1]},
    "layers": {"_type": "randint", "_value": [1, 9]},
    "opt": {"_type": "choice", "_value": ["sgd", "adam", "rmsprop"]},
    "momentum": {"_type": "uniform", "_value": [0, 1]},
    "dropout": {"_type": "uniform", "_value": [0, 0.5]},
}
TABLES = ("trials", "trial_events", "reports", "experiments", "imported", "controls", "phases")
REPORTS = 20


def objective(params: dict[str, Any]) -> Any:
    """No work: ``REPORTS`` intermediate results, then the last as the final one."""
    loss = params["dropout"] + params["momentum"]
    for step in range(REPORTS):
        yield {"loss": loss + 1.0 / (step + 1)}


def _sql(url: str, statements: list[tuple[str, dict[str, Any]]]) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as conn:
        for sql, params in statements:
            conn.execute(text(sql), params)
    engine.dispose()


def _columns(url: str, table: str) -> list[str]:
    from sqlalchemy import create_engine, inspect

    engine = create_engine(url)
    try:
        return [c["name"] for c in inspect(engine).get_columns(table)]
    finally:
        engine.dispose()


def fill(url: str, written: int, total: int) -> None:
    """Copy the ``written`` trials (and their events and reports) until there are ``total``."""
    copies: list[tuple[str, dict[str, Any]]] = []
    for table in ("trials", "trial_events", "reports"):
        names = [c for c in _columns(url, table) if c != "id"]
        shifted = ", ".join("number + :shift" if c == "number" else c for c in names)
        copies.append(
            (
                f"INSERT INTO {table} ({', '.join(names)}) SELECT {shifted} FROM {table} "
                f"WHERE experiment_id = :e AND number < :n ORDER BY "
                f"{'number' if table == 'trials' else 'id'}",
                {},
            )
        )
    start = written
    while start < total:
        take = min(written, total - start)
        _sql(url, [(sql, {"e": EXPERIMENT, "n": take, "shift": start}) for sql, _ in copies])
        start += take
    _sql(
        url,
        [
            (
                "UPDATE experiments SET config = :config WHERE id = :e",
                {"e": EXPERIMENT, "config": _config(url, max_trials=total)},
            )
        ],
    )


def _config(url: str, **changes: Any) -> str:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.connect() as conn:
        stored = conn.execute(
            text("SELECT config FROM experiments WHERE id = :e"), {"e": EXPERIMENT}
        ).scalar_one()
    engine.dispose()
    config = json.loads(stored) if isinstance(stored, str) else stored
    return json.dumps({**config, **changes})


def write(url: str, n: int) -> float:
    """Seconds to run ``n`` trials through the driver (a fresh process)."""
    code = (
        "import sys, time; sys.path.insert(0, sys.argv[4]); import hyperlab, scale;"
        "scale.REPORTS = int(sys.argv[3]); t = time.perf_counter();"
        "hyperlab.run(scale.objective, scale.SPACE, storage=sys.argv[1], id=scale.EXPERIMENT,"
        " max_trials=int(sys.argv[2]), tuner='random', executor='inprocess', progress=False);"
        "print(time.perf_counter() - t)"
    )
    here = str(Path(__file__).parent)
    out = subprocess.run(
        [sys.executable, "-c", code, url, str(n), str(REPORTS), here],
        check=True,
        capture_output=True,
        text=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def timed_process(argv: list[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MB) of a fresh process running ``argv``
    (output discarded). CPU time is the steadier figure on a busy machine."""
    code = (
        "import resource, subprocess, sys, time; t = time.perf_counter();"
        "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE);"
        "e = time.perf_counter() - t;"
        "sys.exit(r.stderr.decode()[-2000:]) if r.returncode else None;"
        "u = resource.getrusage(resource.RUSAGE_CHILDREN);"
        "print(e, u.ru_utime + u.ru_stime, u.ru_maxrss / 1024)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *argv], check=True, capture_output=True, text=True
    )
    seconds, cpu, rss = out.stdout.split()
    return float(seconds), float(cpu), float(rss)


def cli(url: str, *args: str) -> tuple[float, float, float]:
    return timed_process([sys.executable, "-m", "hyperlab", "--storage", url, *args])


def size_bytes(url: str, path: Path | None) -> int:
    if path is not None:
        _sql(url, [("PRAGMA wal_checkpoint(TRUNCATE)", {})])
        return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.connect() as conn:
        found = conn.execute(
            text("SELECT sum(pg_total_relation_size(t)) FROM unnest(CAST(:t AS text[])) AS t"),
            {"t": list(TABLES)},
        ).scalar_one()
    engine.dispose()
    return int(found)


def api(url: str, repeat: int, paints: int, n: int) -> dict[str, tuple[float, ...]]:
    """(cold, p50, p99) ms of the dashboard's requests, and the first paint's (ready, fcp)."""
    from hyperlab.server import serve_in_background
    from hyperlab.store import Store

    e = f"/api/v1/experiments/{EXPERIMENT}"
    requests = {
        "api: experiment": e,
        "api: trials page 1": f"{e}/trials?limit=50",
        "api: trials best first": f"{e}/trials?limit=50&sort=value",
        "api: trials deep page": f"{e}/trials?limit=50&offset={max(n - 100, 0)}",
        "api: trial + reports": f"{e}/trials/{n // 2}",
        "api: changes after 0": f"{e}/changes?after=0&limit=1000",
        "api: reports after 0": f"{e}/reports?after=0&limit=1000",
        "api: plot best": f"{e}/plots/best",
        "api: plot curves top 10": f"{e}/plots/curves?top=10",
        "api: plot scatter": f"{e}/plots/scatter?x=param.lr",
        "api: plot parallel": f"{e}/plots/parallel",
        "api: plot importance": f"{e}/plots/importance",
    }
    store = Store.open(url)
    out: dict[str, tuple[float, ...]] = {}
    try:
        with serve_in_background(store, 0, token="scale-token") as server:
            client = Client(server.host, server.port)
            for name, path in requests.items():
                try:
                    cold = client.get(path)
                    warm = [client.get(path) for _ in range(repeat)]
                except RuntimeError as exc:
                    print(f"  {name}: {exc}", file=sys.stderr)
                    client = Client(server.host, server.port)
                    continue
                out[name] = (cold, statistics.median(warm), percentile(warm, 0.99))
            found = first_paints(server.link(EXPERIMENT), paints)
            for cache, (ready, fcp) in (found or {}).items():
                out[f"page: ready mark, {cache}"] = (ready, ready, ready)
                out[f"page: first paint, {cache}"] = (fcp, fcp, fcp)
    finally:
        store.close()
    return out


def resume(url: str, n: int, more: int, tuner: str) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS MB) of a driver resuming the experiment to
    ``n + more`` trials."""
    if tuner != "random":
        _sql(
            url,
            [
                (
                    "UPDATE experiments SET config = :config WHERE id = :e",
                    {"e": EXPERIMENT, "config": _config(url, tuner=tuner)},
                )
            ],
        )
    _sql(url, [("UPDATE experiments SET status = 'STOPPED' WHERE id = :e", {"e": EXPERIMENT})])
    here = str(Path(__file__).parent)
    code = (
        "import sys, warnings; sys.path.insert(0, sys.argv[3]); import hyperlab, scale;"
        "warnings.simplefilter('ignore');"
        "hyperlab.resume(scale.EXPERIMENT, storage=sys.argv[1], objective=scale.objective,"
        " max_trials=int(sys.argv[2]), progress=False)"
    )
    return timed_process([sys.executable, "-c", code, url, str(n + more), here])


def one_size(args: argparse.Namespace, n: int) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="hyperlab-scale-"))
    path: Path | None = None
    if args.storage == "sqlite":
        path = folder / "scale.db"
        url = f"sqlite:///{path}"
    else:
        url = args.pg_url
        _sql(url, [(f"DROP TABLE IF EXISTS {t} CASCADE", {}) for t in (*TABLES, "hyperlab_meta")])
    row: dict[str, Any] = {}
    try:
        through = min(n, args.through_driver)
        seconds = write(url, through)
        row["write: trials/s (driver)"] = through / seconds
        row["write: reports/s (driver)"] = through * REPORTS / seconds
        if through < n:
            start = time.perf_counter()
            fill(url, through, n)
            print(f"  filled {through:,} -> {n:,} in {time.perf_counter() - start:.0f} s")
        if path is None:  # the planner's statistics, as autovacuum keeps them (a test server
            _sql(url, [("ANALYZE", {})])  # may run without it: then every plan guesses)
        row["bytes per trial"] = size_bytes(url, path) / n
        print(f"  {n:,} trials: written, {row['bytes per trial']:.0f} bytes/trial", flush=True)
        export = folder / "export.csv"
        for name, argv in (
            ("cli: ls", ["ls"]),
            ("cli: show", ["show", EXPERIMENT]),
            ("cli: trials --limit 50", ["trials", EXPERIMENT, "--limit", "50"]),
            ("cli: trials (all)", ["trials", EXPERIMENT]),
            ("cli: export csv", ["export", EXPERIMENT, "-o", str(export)]),
        ):
            if name == "cli: trials (all)" and n > args.all_trials_up_to:
                continue
            row[f"{name} s"], row[f"{name} cpu s"], row[f"{name} MB"] = cli(url, *argv)
            print(f"  {name}: {row[f'{name} s']:.2f} s, {row[f'{name} MB']:.0f} MB", flush=True)
        for name, timed in api(url, args.repeat, args.paints, n).items():
            row[name] = timed
            print(f"  {name}: {' / '.join(f'{t:.1f}' for t in timed)} ms", flush=True)
        key = "resume (random, replay only)"
        row[f"{key} s"], row[f"{key} cpu s"], row[f"{key} MB"] = resume(url, n, 0, "random")
        print(f"  resume: {row[f'{key} s']:.1f} s, {row[f'{key} MB']:.0f} MB", flush=True)
        key = f"continue +{args.more} (tpe)"
        row[f"{key} s"], row[f"{key} cpu s"], row[f"{key} MB"] = resume(url, n, args.more, "tpe")
        print(f"  {key}: {row[f'{key} s']:.1f} s, {row[f'{key} MB']:.0f} MB", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", default="1000000", help="sizes, comma-separated")
    parser.add_argument("--reports", type=int, default=20)
    parser.add_argument("--storage", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/scale")
    parser.add_argument("--through-driver", type=int, default=100_000)
    parser.add_argument("--all-trials-up-to", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--paints", type=int, default=3)
    parser.add_argument("--more", type=int, default=20, help="trials the tpe continuation adds")
    args = parser.parse_args()
    global REPORTS
    REPORTS = args.reports
    sizes = [int(s) for s in args.trials.split(",")]
    rows = {}
    for n in sizes:
        print(f"{n:,} trials x {REPORTS} reports on {args.storage}", flush=True)
        rows[n] = one_size(args, n)
    names = list(dict.fromkeys(k for row in rows.values() for k in row))
    print(f"\n{args.storage}: {REPORTS} reports per trial; api rows: cold / p50 / p99 ms")
    header = "".join(f"{n:>26,}" for n in sizes)
    growth = "".join(f"{f'{a // 1000}k->{b // 1000}k':>12}" for a, b in itertools.pairwise(sizes))
    print(f"{'':<34}{header}{growth}")
    for name in names:
        cells, ratios = "", ""
        for n in sizes:
            value = rows[n].get(name)
            if value is None:
                cells += f"{'-':>26}"
            elif isinstance(value, tuple):
                cells += f"{' / '.join(f'{v:.1f}' for v in value):>26}"
            else:
                cells += f"{value:>26,.2f}"
        for a, b in itertools.pairwise(sizes):
            va, vb = rows[a].get(name), rows[b].get(name)
            if va is None or vb is None:
                ratios += f"{'-':>12}"
                continue
            va, vb = (va[-1], vb[-1]) if isinstance(va, tuple) else (va, vb)
            ratios += f"{vb / va if va else float('nan'):>11.1f}x"
        print(f"{name:<34}{cells}{ratios}")
    if len(sizes) > 1:
        print("(growth: the later size's figure over the earlier's; p99 for api rows)")


if __name__ == "__main__":
    os.environ.setdefault("HYPERLAB_HOME", tempfile.mkdtemp(prefix="hyperlab-scale-home-"))
    main()
