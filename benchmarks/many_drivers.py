"""Many drivers, one database: K driver processes on one PostgreSQL store at once (issue 31, 5).

Each of K processes (as K users or jobs would) runs its own experiment of ``--trials`` no-op
trials with ``hyperlab.run(tuner="random", executor="threads", concurrency=C)`` on the same
PostgreSQL database. The processes import everything first, then wait at a barrier (a file the
parent creates), so the runs start together. Meanwhile the parent asks for the listing the way a
user does, ``hyperlab ls --storage URL`` as a subprocess, and also in-process (the same command
through ``hyperlab.cli.main``, without the interpreter's start-up), and samples
``pg_stat_activity`` for the connections in use.

Afterwards it checks, from the store, that every experiment has exactly ``--trials`` trials
numbered 0..M-1, each SUCCEEDED, that every driver exited 0, and that no driver wrote a lock,
serialization or deadlock error. Then the peer: K processes each running Optuna's own pattern
on the same server (``optuna.create_study(storage=URL)`` with a study of its own, RandomSampler,
``optimize(noop, n_trials=M)``), started at the same kind of barrier.

Each K and each tool runs in a new schema of the database (created and dropped here), made
once by the parent before the drivers start (a store users already have); the tables' creation
is not timed. Aggregate trials/s is K x M over the time from the barrier to the last process's
end; per driver, M over its own run. This machine's cores are shared by all K processes, the
parent's probes and the server (and whatever else runs there: the load average is printed with
each round): compare the two tools' aggregates, not the absolute figures. The ``ls`` subprocess
is printed with its own CPU time: on a loaded machine its wall time is mostly waiting for a core
(the interpreter and its imports), the in-process figure is what the database adds.

Run: ``python benchmarks/many_drivers.py [--drivers 1,4,8,16,32] [--trials 200]
[--server postgresql://postgres@127.0.0.1:5432/DB]``
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine, make_url

LOCK_WORDS = ("deadlock", "serializ", "lock not available", "could not obtain lock")
"""What a driver's stderr must not contain (case-insensitive)."""


def _noop(params: dict[str, Any]) -> float:
    return 0.0


def _space() -> dict[str, Any]:
    return {"x": {"_type": "uniform", "_value": [0.0, 1.0]}}


# --- the child processes --------------------------------------------------------------------


def _wait_for(go: Path) -> None:
    while not go.exists():
        time.sleep(0.002)


def child(args: argparse.Namespace) -> None:
    """One driver: import, say ready, wait for the go file, run, write timings as JSON."""
    if args.child == "hyperlab":
        from hyperlab import run  # its modules, as `import optuna` imports Optuna's

        def work() -> None:
            run(
                _noop,
                _space(),
                storage=args.url,
                id=args.id,
                tuner="random",
                executor="threads",
                concurrency=args.concurrency,
                max_trials=args.trials,
                progress=False,
                seed=args.index,
            )

    else:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)

        def work() -> None:
            study = optuna.create_study(
                storage=args.url,
                study_name=args.id,
                sampler=optuna.samplers.RandomSampler(args.index),
            )
            study.optimize(lambda t: t.suggest_float("x", 0.0, 1.0) * 0.0, n_trials=args.trials)

    Path(args.ready).touch()
    _wait_for(Path(args.go))
    start, cpu = time.time(), time.process_time()
    if args.profile:
        profile = cProfile.Profile()  # wall time of the driver's thread
        profile.runcall(work)
        profile.dump_stats(f"{args.out}.prof")
    else:
        work()
    end, cpu = time.time(), time.process_time() - cpu
    Path(args.out).write_text(json.dumps({"start": start, "end": end, "cpu": cpu}))


# --- the parent -----------------------------------------------------------------------------


def _schema_url(server: str, schema: str) -> str:
    url = make_url(server).update_query_dict({"options": f"-csearch_path={schema}"})
    return url.render_as_string(hide_password=False)


class Probe:
    """Samples, in threads of the parent, ``hyperlab ls`` latencies and connections in use."""

    def __init__(self, url: str, admin: Engine, schema: str, *, listing: bool) -> None:
        self.url = url
        self.admin = admin
        self.schema = schema
        self.listing = listing
        self.ls_cli: list[float] = []
        self.ls_cli_cpu: list[float] = []
        self.ls_inproc: list[float] = []
        self.ls_inproc_cpu: list[float] = []
        self.ls_failures: list[str] = []
        self.connections = 0
        self.server_connections = 0
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._connections, daemon=True)]
        if listing:
            self._threads.append(threading.Thread(target=self._ls, daemon=True))
            self._threads.append(threading.Thread(target=self._ls_in_process, daemon=True))

    def __enter__(self) -> Probe:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()

    def _connections(self) -> None:
        query = text(
            "SELECT count(*) FILTER (WHERE query NOT LIKE '%pg_stat_activity%'), count(*) "
            "FROM pg_stat_activity WHERE datname = current_database() AND backend_type = "
            "'client backend'"
        )
        with self.admin.connect() as conn:
            while not self._stop.is_set():
                ours, everyone = conn.execute(query).one()
                self.connections = max(self.connections, int(ours) - 1)  # less the probe's
                self.server_connections = max(self.server_connections, int(everyone))
                self._stop.wait(0.05)

    def _ls(self) -> None:
        command = [sys.executable, "-m", "hyperlab", "ls", "--storage", self.url]
        while not self._stop.is_set():
            start = time.perf_counter()
            proc = subprocess.Popen(
                command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
            )
            err = proc.stderr.read() if proc.stderr else ""
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            self.ls_cli.append(time.perf_counter() - start)
            self.ls_cli_cpu.append(usage.ru_utime + usage.ru_stime)
            if proc.returncode != 0:
                self.ls_failures.append(err.strip()[-300:])
            self._stop.wait(0.2)

    def _ls_in_process(self) -> None:
        while not self._stop.is_set():
            cpu = time.thread_time()
            code, seconds, err = list_in_process(self.url)
            self.ls_inproc.append(seconds)
            self.ls_inproc_cpu.append(time.thread_time() - cpu)
            if code != 0:
                self.ls_failures.append(err.strip()[-300:])
            self._stop.wait(0.2)


def list_in_process(url: str) -> tuple[int, float, str]:
    """``hyperlab ls --storage url`` in this process: its exit code, seconds and stderr."""
    from hyperlab.cli import main as cli_main

    start = time.perf_counter()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(["ls", "--storage", url])
    return code, time.perf_counter() - start, err.getvalue()


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _percentiles(values: list[float]) -> str:
    if not values:
        return "-"
    return (
        f"p50 {_quantile(values, 0.5) * 1000:.0f} / p99 {_quantile(values, 0.99) * 1000:.0f} / "
        f"max {max(values) * 1000:.0f} ms (n={len(values)})"
    )


def _check_hyperlab(admin: Engine, schema: str, ids: list[str], m: int) -> list[str]:
    problems = []
    with admin.connect() as conn:
        rows = conn.execute(
            text(
                f'SELECT experiment_id, number, status FROM "{schema}".trials '
                "WHERE experiment_id = ANY(:ids)"
            ),
            {"ids": ids},
        ).all()
        statuses: dict[str, str] = dict(
            conn.execute(
                text(f'SELECT id, status FROM "{schema}".experiments WHERE id = ANY(:ids)'),
                {"ids": ids},
            ).all()
        )
    by_experiment: dict[str, list[tuple[int, str]]] = {i: [] for i in ids}
    for eid, number, status in rows:
        by_experiment[eid].append((number, status))
    for eid, found in by_experiment.items():
        numbers = sorted(n for n, _ in found)
        if numbers != list(range(m)):
            problems.append(f"{eid}: {len(numbers)} trials, numbers not 0..{m - 1}")
        bad = [(n, s) for n, s in found if s != "SUCCEEDED"]
        if bad:
            problems.append(f"{eid}: {len(bad)} trials not SUCCEEDED, e.g. {bad[:3]}")
        if statuses.get(eid) != "DONE":
            problems.append(f"{eid}: experiment {statuses.get(eid)}, not DONE")
    return problems


def _check_optuna(admin: Engine, schema: str, ids: list[str], m: int) -> list[str]:
    problems = []
    with admin.connect() as conn:
        rows = conn.execute(
            text(
                f'SELECT s.study_name, t.number, t.state FROM "{schema}".trials t '
                f'JOIN "{schema}".studies s ON s.study_id = t.study_id'
            )
        ).all()
    by_study: dict[str, list[tuple[int, str]]] = {i: [] for i in ids}
    for name, number, state in rows:
        by_study[name].append((number, state))
    for name, found in by_study.items():
        if sorted(n for n, _ in found) != list(range(m)):
            problems.append(f"{name}: {len(found)} trials, numbers not 0..{m - 1}")
        if any(s != "COMPLETE" for _, s in found):
            problems.append(f"{name}: trials not COMPLETE")
    return problems


def one_round(
    tool: str, k: int, args: argparse.Namespace, admin: Engine, work: Path
) -> dict[str, Any]:
    """Run K processes of ``tool`` at once; their timings, the probes and the checks."""
    schema = f"many_{tool[:2]}_{k}_{uuid.uuid4().hex[:6]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = _schema_url(args.server, schema)
    try:
        if tool == "hyperlab":
            from hyperlab.store import Store

            Store.open(url).close()  # the store users already have: its tables
        else:
            import optuna

            optuna.storages.RDBStorage(url).remove_session()
        return _round(tool, k, args, admin, work / schema, url, schema)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))


def _round(
    tool: str, k: int, args: argparse.Namespace, admin: Engine, work: Path, url: str, schema: str
) -> dict[str, Any]:
    work.mkdir(parents=True)
    m = args.trials if tool == "hyperlab" else args.peer_trials
    go = work / "go"
    ids = [f"d{i:03d}" for i in range(k)]
    procs = []
    for i, eid in enumerate(ids):
        command = [
            sys.executable, __file__, "--child", tool, "--url", url, "--id", eid,
            "--index", str(i), "--trials", str(m), "--concurrency",
            str(args.concurrency), "--ready", str(work / f"{eid}.ready"), "--go", str(go),
            "--out", str(work / f"{eid}.json"), *(["--profile"] if args.profile else []),
        ]  # fmt: skip
        stderr = (work / f"{eid}.err").open("w")
        procs.append(subprocess.Popen(command, stderr=stderr, stdout=subprocess.DEVNULL))
        stderr.close()
    deadline = time.monotonic() + 300
    while not all((work / f"{eid}.ready").exists() for eid in ids):
        if any(p.poll() not in (None, 0) for p in procs) or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    if tool == "hyperlab" and args.ls:
        list_in_process(url)  # its imports, once
    with Probe(url, admin, schema, listing=args.ls and tool == "hyperlab") as probe:
        t0 = time.time()
        go.touch()
        codes = [p.wait() for p in procs]
    errors = {eid: (work / f"{eid}.err").read_text() for eid in ids}
    if args.profile:
        profiles = [str(p) for p in sorted(work.glob("*.json.prof"))]
        if profiles:
            print(f"  {tool} K={k}: the drivers' main threads, wall time, summed:")
            pstats.Stats(*profiles).sort_stats("cumulative").print_stats(args.profile_lines)
    timings = []
    for eid in ids:
        out = work / f"{eid}.json"
        if out.exists():
            timings.append(json.loads(out.read_text()))
    problems = [
        f"{eid}: exit {c}: {errors[eid][-400:]}" for eid, c in zip(ids, codes, strict=True) if c
    ]
    problems += [
        f"{eid}: stderr mentions a lock error: {errors[eid][-300:]}"
        for eid in ids
        if any(w.lower() in errors[eid].lower() for w in LOCK_WORDS)
    ]
    check = _check_hyperlab if tool == "hyperlab" else _check_optuna
    problems += check(admin, schema, ids, m)
    problems += [f"ls failed: {f}" for f in probe.ls_failures[:3]]
    wall = max(t["end"] for t in timings) - t0 if timings else float("nan")
    per_driver = [m / (t["end"] - t["start"]) for t in timings]
    return {
        "tool": tool,
        "drivers": k,
        "aggregate": k * m / wall if timings else 0.0,
        "wall_s": wall,
        "per_driver_median": statistics.median(per_driver) if per_driver else 0.0,
        "per_driver_min": min(per_driver) if per_driver else 0.0,
        "cpu_ms_per_trial": 1000 * sum(t["cpu"] for t in timings) / (k * m),
        "cpu_busy": sum(t["cpu"] for t in timings) / wall if timings else 0.0,
        "ls_cli": probe.ls_cli,
        "ls_cli_cpu": probe.ls_cli_cpu,
        "ls_inproc": probe.ls_inproc,
        "ls_inproc_cpu": probe.ls_inproc_cpu,
        "connections": probe.connections,
        "server_connections": probe.server_connections,
        "problems": problems,
        "load": os.getloadavg()[0],
    }


def _print_round(r: dict[str, Any]) -> None:
    print(
        f"  {r['tool']:8} K={r['drivers']:2}: {r['aggregate']:8.0f} trials/s aggregate "
        f"({r['wall_s']:.1f} s), per driver median {r['per_driver_median']:.0f} "
        f"(min {r['per_driver_min']:.0f}) trials/s, peak connections {r['connections']} "
        f"(server {r['server_connections']}); drivers' CPU {r['cpu_ms_per_trial']:.2f} ms "
        f"per trial, {r['cpu_busy']:.2f} cores busy; load average {r['load']:.0f}",
        flush=True,
    )
    if r["tool"] == "hyperlab":
        print(f"      hyperlab ls (subprocess): {_percentiles(r['ls_cli'])}")
        print(f"      its own CPU time:         {_percentiles(r['ls_cli_cpu'])}")
        print(f"      hyperlab ls (in-process): {_percentiles(r['ls_inproc'])}")
        print(f"      its thread's CPU time:    {_percentiles(r['ls_inproc_cpu'])}")
    for problem in r["problems"]:
        print(f"      PROBLEM: {problem}")


def _ms(values: list[float], q: float) -> str:
    return f"{_quantile(values, q) * 1000:.0f}" if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drivers", default="32", help="comma-separated counts, e.g. 1,4,8,16,32")
    parser.add_argument("--trials", type=int, default=200, help="trials per driver (M)")
    parser.add_argument(
        "--peer-trials",
        type=int,
        default=20,
        help="trials per Optuna process (its trials cost ~100x more on PostgreSQL)",
    )
    parser.add_argument("--concurrency", type=int, default=2, help="threads per driver")
    parser.add_argument(
        "--server",
        default=os.environ.get(
            "HYPERLAB_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/drivers"
        ),
        help="a PostgreSQL database; each round uses a new schema of it",
    )
    parser.add_argument("--no-peer", dest="peer", action="store_false", help="skip Optuna")
    parser.add_argument("--no-ls", dest="ls", action="store_false", help="no ls probes")
    parser.add_argument(
        "--profile", action="store_true", help="print the drivers' profiles (cProfile, summed)"
    )
    parser.add_argument("--profile-lines", type=int, default=40, help=argparse.SUPPRESS)
    parser.add_argument("--json", type=Path, help="write the results here too")
    # the child processes' own arguments
    parser.add_argument("--child", choices=("hyperlab", "optuna"), help=argparse.SUPPRESS)
    for name in ("--url", "--id", "--ready", "--go", "--out"):
        parser.add_argument(name, help=argparse.SUPPRESS)
    parser.add_argument("--index", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    admin = create_engine(
        make_url(args.server).set(drivername="postgresql+psycopg"), isolation_level="AUTOCOMMIT"
    )
    with admin.connect() as conn:
        limit = conn.execute(text("SHOW max_connections")).scalar()
    counts = [int(k) for k in args.drivers.split(",")]
    print(
        f"{args.trials} no-op trials per driver ({args.peer_trials} for Optuna), "
        f"threads x {args.concurrency}, random tuner; "
        f"server max_connections {limit}; {os.cpu_count()} cores",
        flush=True,
    )
    results = []
    with tempfile.TemporaryDirectory(prefix="many-drivers-") as tmp:
        for k in counts:
            for tool in ("hyperlab", "optuna") if args.peer else ("hyperlab",):
                result = one_round(tool, k, args, admin, Path(tmp))
                _print_round(result)
                results.append(result)
    admin.dispose()
    print(
        "\n| drivers | hyperlab trials/s | Optuna trials/s | ratio | ls p50 / p99 (subprocess) "
        "| ls p50 / p99 (in-process) | peak connections | problems |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for k in counts:
        ours = next(r for r in results if r["drivers"] == k and r["tool"] == "hyperlab")
        peer = next((r for r in results if r["drivers"] == k and r["tool"] == "optuna"), None)
        ratio = "-"
        if peer and peer["aggregate"]:
            ratio = f"{ours['aggregate'] / peer['aggregate']:.1f}x"
        problems = len(ours["problems"]) + (len(peer["problems"]) if peer else 0)
        print(
            f"| {k} | {ours['aggregate']:.0f} | {peer['aggregate'] if peer else 0:.0f} | {ratio} | "
            f"{_ms(ours['ls_cli'], 0.5)} / {_ms(ours['ls_cli'], 0.99)} ms | "
            f"{_ms(ours['ls_inproc'], 0.5)} / {_ms(ours['ls_inproc'], 0.99)} ms | "
            f"{ours['connections']} | {problems} |"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    if any(r["problems"] for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
