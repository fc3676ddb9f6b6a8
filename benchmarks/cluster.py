"""Clusters without Ray: trial throughput of the worker pool, the Dask and Ray executors, and
Optuna's processes on one PostgreSQL study (issue 33, 4).

For each kind of trial (``noop``: returns at once; ``sleep``: sleeps 50 ms), each timed run
being ``--trials`` trials of random search over one float, with every trial stored in
PostgreSQL (each run in a new schema of ``--server``, its tables made before the clock starts):

- **pool**: a driver in this process (``hyperlab.Experiment(..., executor="pool",
  concurrency=W)``, started and waited on as ``hyperlab.run`` runs it; the driver must run
  before workers join) and W of ``hyperlab worker ID --storage URL --concurrency 1 --executor
  threads`` in processes of their own, for W in ``--workers`` (default 1, 2, 4). Each worker
  process imports hyperlab first and waits at a barrier (a file), then runs the command's own
  code (``hyperlab.cli.main``) once the driver runs: its interpreter's start-up is not timed,
  its joining is;
- **dask**: ``hyperlab.run(..., executor="dask", executor_args={"dask_cluster": cluster},
  concurrency=W)`` on a ``distributed.LocalCluster`` of W worker processes of one thread each
  (started before the clock); each trial runs in a Python process of its own on its worker
  (docs/cluster.md), so it runs ``--dask-trials`` trials;
- **ray**: ``hyperlab.run(..., executor="ray", concurrency=W)`` on a local Ray instance
  (``ray.init(address="local", num_cpus=max(W))``, started once, before the clock), one CPU per
  trial; skipped, saying why, when Ray cannot start;
- **optuna**: the same script in 4 processes on one PostgreSQL study, as Optuna's docs scale
  it: each process ``optuna.create_study(study_name=..., storage=URL, load_if_exists=True,
  sampler=RandomSampler(seed=i))`` then ``study.optimize(objective, n_trials=N/4)``; the
  processes import Optuna first and start together at a barrier. Compared with the pool's 4
  workers;
- **compat**: that script with its import changed to ``hyperlab.compat.optuna``, in 4
  processes on one study: the first to reach it drives, the others join it as workers
  (docs/cluster.md). Compared with Optuna's 4 processes.

Every contender runs a few trials untimed first (imports, Dask's and Ray's first-use costs). A
run's wall time is from the driver's creation (Optuna: the barrier) to its end (Optuna: the
last process's ``optimize`` returning); trials/s is N over it. CPU is that of this process and
all its descendants (the workers, Dask's processes, the trials' own), from ``/proc`` (each
process's own and its waited-for children's), and, for a server on this machine, of the
PostgreSQL server's processes (all its clients, this benchmark's included). Ray's is not
shown: its worker processes end without their CPU time reaching a process of the tree. Each
run checks that it stored exactly N trials, all succeeded (pool: the workers exited 0 and
together took N; Optuna: N trials, each COMPLETE, in one study); a run that fails a check is
printed with its problems, and the script exits 1.

Bytecode: this process and its children run with ``PYTHONDONTWRITEBYTECODE`` removed and
``PYTHONPYCACHEPREFIX`` set to a temporary folder, so the processes each Dask trial starts
import hyperlab from cached bytecode, as they do once installed.

Targets: the pool's 4 workers >= 3.5x its 1 worker on 50 ms trials; the pool's 4 workers >=
Optuna's 4 processes on the same database (1x). This machine may have fewer cores than the
processes running: compare the ratios of one run, not the absolute figures.

    pip install -e ".[bench,postgres,dask,ray]"
    python benchmarks/cluster.py [--trials 200] [--dask-trials 40] [--workers 1,2,4]
        [--server postgresql://postgres@127.0.0.1:5432/test] [--quick] [--skip-dask] [--skip-ray]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SLEEP = 0.05
"""Seconds the ``sleep`` trials sleep."""
OPTUNA_PROCESSES = 4
"""Processes of the Optuna run, and the pool's workers it is compared with."""
WARMUP_TRIALS = 2
"""Untimed trials each contender runs first."""
DEADLINE = 600.0
"""Seconds a run may take before it counts as hung."""
TARGET_SPEEDUP = 3.5
"""The pool's 4 workers over its 1 worker on ``sleep`` trials, at least."""
TARGET_OPTUNA = 1.0
"""The pool's 4 workers over Optuna's 4 processes, at least (and the same script on
``hyperlab.compat.optuna``'s 4 processes)."""
COMPAT = "hyperlab.compat.optuna"
"""The Optuna script's import, changed."""
KINDS = ("noop", "sleep")


# --- the objectives ---------------------------------------------------------------------------


def noop(params: dict[str, Any]) -> float:
    return float(params["x"])


def sleep(params: dict[str, Any]) -> float:
    time.sleep(SLEEP)
    return float(params["x"])


OBJECTIVES: dict[str, Callable[[dict[str, Any]], float]] = {"noop": noop, "sleep": sleep}


def optuna_objective(kind: str) -> Callable[[Any], float]:
    def objective(trial: Any) -> float:
        x = float(trial.suggest_float("x", 0.0, 1.0))
        if kind == "sleep":
            time.sleep(SLEEP)
        return x

    return objective


SEARCH = {"tuner": "random", "seed": 0, "progress": False}
"""How every hyperlab contender searches: the same random proposals, no progress lines."""


def _space() -> dict[str, Any]:
    import hyperlab

    return {"x": hyperlab.uniform(0.0, 1.0)}


# --- CPU time from /proc ----------------------------------------------------------------------

TICKS = os.sysconf("SC_CLK_TCK")


def _processes() -> dict[int, tuple[int, str, float]]:
    """Each process: its parent, its name, and the CPU seconds of it and of its children it
    waited for (``/proc/PID/stat``: utime, stime, cutime, cstime)."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:  # it ended meanwhile
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        cpu = sum(int(v) for v in fields[11:15]) / TICKS
        found[int(entry.name)] = (int(fields[1]), name, cpu)
    return found


def _tree_cpu(processes: dict[int, tuple[int, str, float]], roots: list[int]) -> float:
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in processes.items():
        children.setdefault(parent, []).append(pid)
    total, todo = 0.0, list(roots)
    while todo:
        pid = todo.pop()
        total += processes[pid][2] if pid in processes else 0.0
        todo.extend(children.get(pid, []))
    return total


@dataclass
class Cpu:
    """CPU seconds so far of this process's tree and of the local PostgreSQL server's."""

    ours: float
    server: float | None

    @classmethod
    def now(cls, local_server: bool) -> Cpu:
        processes = _processes()
        servers = [
            pid
            for pid, (parent, name, _) in processes.items()
            if name == "postgres" and processes.get(parent, (0, "", 0.0))[1] != "postgres"
        ]
        return cls(
            _tree_cpu(processes, [os.getpid()]),
            _tree_cpu(processes, servers) if local_server else None,
        )


# --- timings ----------------------------------------------------------------------------------


@dataclass
class Timing:
    """One timed run."""

    trials: int
    wall: float
    cpu: float | None
    server_cpu: float | None
    problems: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.trials / self.wall


class Clock:
    """Wall and CPU time of one run, from ``start`` to ``stop``."""

    def __init__(self, local_server: bool) -> None:
        self.local_server = local_server

    def start(self) -> None:
        self.cpu = Cpu.now(self.local_server)
        self.begin = time.perf_counter()

    def stop(self) -> float:
        """The wall seconds; call ``timing`` once the processes whose CPU counts ended."""
        self.wall = time.perf_counter() - self.begin
        return self.wall

    def timing(self, trials: int, problems: list[str], *, count_cpu: bool = True) -> Timing:
        cpu = Cpu.now(self.local_server)
        ours = cpu.ours - self.cpu.ours if count_cpu else None
        server = None
        if cpu.server is not None and self.cpu.server is not None:
            server = cpu.server - self.cpu.server
        return Timing(trials, self.wall, ours, server, problems)


def _check(result: Any, trials: int) -> list[str]:
    import hyperlab

    problems = []
    if len(result.trials) != trials:
        problems.append(f"{len(result.trials)} trials stored, not {trials}")
    bad = [t.status.name for t in result.trials if t.status is not hyperlab.TrialStatus.SUCCEEDED]
    if bad:
        problems.append(f"{len(bad)} trials not SUCCEEDED: {sorted(set(bad))}")
    return problems


# --- PostgreSQL: a schema per run -------------------------------------------------------------


class Server:
    """The PostgreSQL database whose new schemas the runs use."""

    def __init__(self, url: str) -> None:
        from sqlalchemy import create_engine
        from sqlalchemy.engine import make_url

        self.url = make_url(url)
        self.admin = create_engine(
            self.url.set(drivername="postgresql+psycopg"), isolation_level="AUTOCOMMIT"
        )
        self.local = self.url.host in (None, "", "127.0.0.1", "localhost", "::1")

    @contextlib.contextmanager
    def schema(self, prefix: str) -> Iterator[str]:
        """A new schema, dropped afterwards: the URL of the database with it as search path."""
        from sqlalchemy import text

        name = f"cluster_{prefix}_{uuid.uuid4().hex[:6]}"
        with self.admin.connect() as conn:
            conn.execute(text(f'CREATE SCHEMA "{name}"'))
        url = self.url.set(drivername="postgresql+psycopg").update_query_dict(
            {"options": f"-csearch_path={name}"}
        )
        try:
            yield url.render_as_string(hide_password=False)
        finally:
            with self.admin.connect() as conn:
                conn.execute(text(f'DROP SCHEMA IF EXISTS "{name}" CASCADE'))


# --- the child processes ----------------------------------------------------------------------


def _wait_for(go: Path) -> None:
    while not go.exists():
        time.sleep(0.002)


def child(args: argparse.Namespace) -> int:
    """A pool worker (``hyperlab worker``) or an Optuna process: import, say ready, wait for
    the go file, run."""
    if args.child == "worker":
        from hyperlab.cli import main as cli_main

        Path(args.ready).touch()
        _wait_for(Path(args.go))
        command = ["worker", args.id, "--storage", args.url, "--concurrency", "1"]
        return cli_main([*command, "--executor", args.worker_executor])
    optuna = importlib.import_module(args.library)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    Path(args.ready).touch()
    _wait_for(Path(args.go))
    start = time.time()
    study = optuna.create_study(
        study_name="cluster",
        storage=args.url,
        load_if_exists=True,
        sampler=optuna.samplers.RandomSampler(seed=args.index),
    )
    study.optimize(optuna_objective(args.kind), n_trials=args.trials)
    Path(args.out).write_text(json.dumps({"start": start, "end": time.time()}))
    return 0


def _spawn(work: Path, name: str, arguments: list[str]) -> subprocess.Popen[str]:
    command = [sys.executable, __file__, *arguments, "--ready", str(work / f"{name}.ready")]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_ready(work: Path, names: list[str], procs: list[subprocess.Popen[str]]) -> None:
    deadline = time.monotonic() + 120
    while not all((work / f"{name}.ready").exists() for name in names):
        if any(p.poll() is not None for p in procs) or time.monotonic() > deadline:
            return  # the run will see it
        time.sleep(0.01)


def _finish(procs: list[subprocess.Popen[str]]) -> list[tuple[int, str, str]]:
    """Each process's exit code, stdout and stderr; a process still running is killed."""
    ended = []
    for proc in procs:
        try:
            out, err = proc.communicate(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        ended.append((proc.returncode, out, err))
    return ended


# --- the contenders ---------------------------------------------------------------------------


def run_pool(
    kind: str, workers: int, trials: int, url: str, work: Path, clock: Clock, executor: str
) -> Timing:
    """A driver here and ``workers`` worker processes of one trial each."""
    import hyperlab

    eid = f"pool-{kind}-{workers}-{uuid.uuid4().hex[:6]}"
    work = work / eid
    work.mkdir(parents=True)
    go = work / "go"
    names = [f"w{i}" for i in range(workers)]
    arguments = ["--child", "worker", "--url", url, "--id", eid, "--go", str(go)]
    arguments += ["--worker-executor", executor]
    procs = [_spawn(work, name, arguments) for name in names]
    problems: list[str] = []
    try:
        _wait_ready(work, names, procs)
        clock.start()
        experiment = hyperlab.Experiment(
            OBJECTIVES[kind],
            _space(),
            id=eid,
            storage=url,
            executor="pool",
            concurrency=workers,
            max_trials=trials,
            working_dir=str(work),
            **SEARCH,
        )
        experiment.start()
        go.touch()
        result = experiment.wait(timeout=DEADLINE)
        clock.stop()
        if experiment.running:
            problems.append(f"still running after {DEADLINE:g} s: stopped")
            experiment.stop()
            experiment.wait()
        problems += _check(result, trials)
    finally:
        go.touch()  # a worker still waiting (the driver failed) exits: nothing to join
        ended = _finish(procs)
    took = 0
    for name, (code, out, err) in zip(names, ended, strict=True):
        if code != 0:
            problems.append(f"worker {name} exited {code}: {err.strip()[-300:]}")
        elif out.startswith("worker: "):
            took += int(out.split()[1])  # "worker: N trials of experiment ... ran here"
    if took != trials:
        problems.append(f"the workers took {took} trials, not {trials}")
    return clock.timing(trials, problems)


def run_executor(
    kind: str,
    trials: int,
    url: str,
    work: Path,
    clock: Clock,
    *,
    executor: str,
    concurrency: int,
    executor_args: dict[str, Any] | None = None,
) -> Timing:
    """``hyperlab.run`` with ``executor`` (dask, ray) at ``concurrency``."""
    import hyperlab

    folder = work / f"{executor}-{kind}-{concurrency}-{uuid.uuid4().hex[:6]}"
    folder.mkdir(parents=True)
    clock.start()
    result = hyperlab.run(
        OBJECTIVES[kind],
        _space(),
        storage=url,
        executor=executor,
        executor_args=executor_args or {},
        concurrency=concurrency,
        max_trials=trials,
        working_dir=str(folder),
        **SEARCH,
    )
    clock.stop()
    return clock.timing(trials, _check(result, trials), count_cpu=executor != "ray")


def run_optuna(
    kind: str, trials: int, url: str, work: Path, clock: Clock, library: str = "optuna"
) -> Timing:
    """The same Optuna script in ``OPTUNA_PROCESSES`` processes on one study, on ``library``
    (Optuna, or ``hyperlab.compat.optuna``: the script with its import changed)."""
    optuna = importlib.import_module(library)
    if library == "optuna":
        optuna.storages.RDBStorage(url).remove_session()  # its tables, before the clock
    else:
        from hyperlab.store import Store

        Store.open(url).close()  # its tables, before the clock
    work = work / f"{library}-{kind}-{uuid.uuid4().hex[:6]}"
    work.mkdir(parents=True)
    go = work / "go"
    names = [f"p{i}" for i in range(OPTUNA_PROCESSES)]
    each = trials // OPTUNA_PROCESSES
    procs = []
    for i, name in enumerate(names):
        arguments = ["--child", "optuna", "--library", library, "--url", url, "--kind", kind]
        arguments += ["--index", str(i), "--trials", str(each), "--go", str(go)]
        arguments += ["--out", str(work / f"{name}.json")]
        procs.append(_spawn(work, name, arguments))
    _wait_ready(work, names, procs)
    clock.start()
    begin = time.time()
    go.touch()
    ended = _finish(procs)
    ends = [
        json.loads((work / f"{n}.json").read_text())["end"]
        for n in names
        if (work / f"{n}.json").exists()
    ]
    clock.wall = (max(ends) if ends else time.time()) - begin
    problems = [
        f"process {name} exited {code}: {err.strip()[-300:]}"
        for name, (code, _, err) in zip(names, ended, strict=True)
        if code != 0
    ]
    studies = optuna.get_all_study_names(storage=url)
    stored = optuna.load_study(study_name="cluster", storage=url).trials if studies else []
    if len(stored) != trials:
        problems.append(f"{len(stored)} trials stored, not {trials}")
    if len({t.number for t in stored}) != len(stored):
        problems.append("a trial number stored twice")
    if any(t.state.name != "COMPLETE" for t in stored):
        problems.append("trials not COMPLETE")
    if len(studies) != 1:
        problems.append(f"{len(studies)} studies, not 1")
    return clock.timing(trials, problems)


# --- the run ----------------------------------------------------------------------------------


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _log(key: tuple[str, int, str], timing: Timing) -> None:
    contender, workers, kind = key
    print(
        f"  {contender} x{workers} {kind}: {timing.trials} trials in {timing.wall:.2f} s "
        f"({timing.rate:.1f}/s), CPU {_seconds(timing.cpu)} s, server CPU "
        f"{_seconds(timing.server_cpu)} s",
        file=sys.stderr,
        flush=True,
    )
    for problem in timing.problems:
        print(f"    PROBLEM: {problem}", file=sys.stderr, flush=True)


def measure(args: argparse.Namespace, server: Server, work: Path) -> dict[tuple, Timing]:
    """Every run, keyed by (contender, workers, kind)."""
    clock = Clock(server.local)
    timings: dict[tuple[str, int, str], Timing] = {}

    def record(key: tuple[str, int, str], timing: Timing) -> None:
        timings[key] = timing
        _log(key, timing)

    levels, executor = args.workers, args.worker_executor
    with server.schema("warm") as url:  # imports and first-use costs, untimed
        for kind in KINDS:
            run_pool(kind, 1, WARMUP_TRIALS, url, work, clock, executor)
    for kind in KINDS:  # the pool's 4 workers and Optuna's 4 processes one after the other
        for workers in levels:
            with server.schema("pool") as url:
                record(
                    ("pool", workers, kind),
                    run_pool(kind, workers, args.trials, url, work, clock, executor),
                )
        if not args.skip_optuna:
            with server.schema("optuna") as url:
                timing = run_optuna(kind, args.trials, url, work, clock)
            record(("optuna", OPTUNA_PROCESSES, kind), timing)
            with server.schema("compat") as url:
                timing = run_optuna(kind, args.trials, url, work, clock, COMPAT)
            record(("compat", OPTUNA_PROCESSES, kind), timing)
    if not args.skip_dask:
        measure_dask(args, server, work, clock, record)
    if not args.skip_ray:
        measure_ray(args, server, work, clock, record)
    return timings


def measure_dask(
    args: argparse.Namespace,
    server: Server,
    work: Path,
    clock: Clock,
    record: Callable[[tuple[str, int, str], Timing], None],
) -> None:
    try:
        import distributed
    except ImportError as exc:
        print(f"dask: skipped ({exc}; pip install 'hyperlab[dask]')", flush=True)
        return
    for name in ("distributed", "distributed.worker", "distributed.scheduler"):
        logging.getLogger(name).setLevel(logging.ERROR)
    for workers in args.workers:
        with distributed.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            worker_dashboard_address=":0",
        ) as cluster:
            options = {"executor": "dask", "concurrency": workers}
            options["executor_args"] = {"dask_cluster": cluster}
            with server.schema("dask") as url:
                run_executor("noop", WARMUP_TRIALS, url, work, clock, **options)
                for kind in KINDS:
                    timing = run_executor(kind, args.dask_trials, url, work, clock, **options)
                    record(("dask", workers, kind), timing)


def measure_ray(
    args: argparse.Namespace,
    server: Server,
    work: Path,
    clock: Clock,
    record: Callable[[tuple[str, int, str], Timing], None],
) -> None:
    try:
        import ray

        for name in ("ray", "ray.util"):
            logging.getLogger(name).setLevel(logging.ERROR)
        # address="local": an instance of this process's own, even when another runs here
        ray.init(
            address="local",
            num_cpus=max(args.workers),
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
        )
    except Exception as exc:  # not installed, or it cannot start here: say why, go on
        print(f"ray: skipped, it could not start ({type(exc).__name__}: {exc})", flush=True)
        return
    try:
        with server.schema("ray") as url:
            run_executor("noop", WARMUP_TRIALS, url, work, clock, executor="ray", concurrency=1)
            for kind in KINDS:
                for workers in args.workers:
                    options = {"executor": "ray", "concurrency": workers}
                    timing = run_executor(kind, args.trials, url, work, clock, **options)
                    record(("ray", workers, kind), timing)
    finally:
        ray.shutdown()


def verdict(value: float, target: float) -> str:
    return "met" if value >= target else "MISSED"


def report(args: argparse.Namespace, timings: dict[tuple, Timing]) -> None:
    import hyperlab

    versions = [f"hyperlab {hyperlab.__version__}"]
    for module in ("optuna", "distributed", "ray"):
        with contextlib.suppress(ImportError):
            versions.append(f"{module} {__import__(module).__version__}")
    print(
        f"\n{', '.join(versions)}; {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f}; random search over 1 float, every trial stored in "
        f"PostgreSQL; {args.trials} trials per run (dask: {args.dask_trials}); pool workers "
        f"run `--concurrency 1 --executor {args.worker_executor}`, the driver's concurrency "
        "is the number of workers"
    )
    header = f"{'contender':<10}{'workers':>8}"
    for kind in KINDS:
        label = "noop" if kind == "noop" else f"{SLEEP * 1000:g} ms"
        header += f" | {label + ' trials/s':>16}{'wall s':>8}{'CPU s':>7}{'PG CPU s':>9}"
    print(header)
    contenders = dict.fromkeys((c, w) for c, w, _ in timings)
    for contender, workers in contenders:
        line = f"{contender:<10}{workers:>8}"
        for kind in KINDS:
            t = timings.get((contender, workers, kind))
            if t is None:
                line += f" | {'-':>16}{'':>8}{'':>7}{'':>9}"
            else:
                cpu, server = _seconds(t.cpu), _seconds(t.server_cpu)
                line += f" | {t.rate:>16.1f}{t.wall:>8.2f}{cpu:>7}{server:>9}"
        print(line)

    print("\nratios (trials/s over trials/s):")
    for contender in ("pool", "dask", "ray"):
        for kind in KINDS:
            one, four = timings.get((contender, 1, kind)), timings.get((contender, 4, kind))
            if one is None or four is None:
                continue
            ratio = four.rate / one.rate
            target = ""
            if contender == "pool" and kind == "sleep":
                target = f"  target >= {TARGET_SPEEDUP:g}x: {verdict(ratio, TARGET_SPEEDUP)}"
            print(f"  {contender} 4 workers / 1 worker, {kind}: {ratio:.2f}x{target}")
    for contender, what in (("pool", "pool 4 workers"), ("compat", "compat 4 processes")):
        for kind in KINDS:
            ours = timings.get((contender, OPTUNA_PROCESSES, kind))
            peer = timings.get(("optuna", OPTUNA_PROCESSES, kind))
            if ours is None or peer is None:
                continue
            ratio = ours.rate / peer.rate
            print(
                f"  {what} / optuna 4 processes, {kind}: {ratio:.2f}x  target >= "
                f"{TARGET_OPTUNA:g}x: {verdict(ratio, TARGET_OPTUNA)}"
            )
    if not any(("pool", 4, kind) in timings for kind in KINDS):
        print("  (the targets need 4 in --workers, and 1 for the speed-up)")
    problems = [(key, p) for key, t in timings.items() for p in t.problems]
    for (contender, workers, kind), problem in problems:
        print(f"PROBLEM {contender} x{workers} {kind}: {problem}")


def _counts(text: str) -> list[int]:
    counts = [int(part) for part in text.split(",") if part]
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"expected counts >= 1 such as 1,2,4, got {text!r}")
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=200, help="trials per run (a multiple of 4)")
    parser.add_argument(
        "--dask-trials",
        type=int,
        default=40,
        help="trials per Dask run (each starts a Python process; its rate needs fewer)",
    )
    parser.add_argument("--workers", type=_counts, default=[1, 2, 4], help="e.g. 1,2,4")
    parser.add_argument(
        "--worker-executor",
        choices=("threads", "processes"),
        default="threads",
        help="the pool workers' --executor",
    )
    parser.add_argument(
        "--server",
        default=os.environ.get(
            "HYPERLAB_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
        ),
        help="a PostgreSQL database; each run uses a new schema of it",
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 16 trials (dask 4), workers 1,4"
    )
    parser.add_argument("--skip-dask", action="store_true")
    parser.add_argument("--skip-ray", action="store_true")
    parser.add_argument("--skip-optuna", action="store_true")
    # the child processes' own arguments
    parser.add_argument("--child", choices=("worker", "optuna"), help=argparse.SUPPRESS)
    for name in ("--url", "--id", "--ready", "--go", "--out", "--kind"):
        parser.add_argument(name, help=argparse.SUPPRESS)
    parser.add_argument("--index", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--library", default="optuna", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sys.exit(child(args))
    if args.quick:
        args.trials, args.dask_trials, args.workers = 16, 4, [1, 4]
    if args.trials < OPTUNA_PROCESSES or args.trials % OPTUNA_PROCESSES:
        parser.error(f"--trials: a multiple of {OPTUNA_PROCESSES}, got {args.trials}")

    with tempfile.TemporaryDirectory(prefix="cluster-bench-") as tmp:
        work = Path(tmp)
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
        os.environ["HYPERLAB_HOME"] = str(work / "home")
        logging.getLogger("hyperlab").setLevel(logging.WARNING)
        server = Server(args.server)
        try:
            timings = measure(args, server, work)
        finally:
            server.admin.dispose()
    report(args, timings)
    if any(t.problems for t in timings.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
