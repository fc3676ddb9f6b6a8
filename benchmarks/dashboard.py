"""The dashboard at scale: API latency and the experiment page's first meaningful paint, at
1,000, 10,000 and 100,000 trials of 20 reports each, with optuna-dashboard beside it where it
goes (its page loads every trial at once).

For each size, a SQLite store is written directly through the store API (as a driver would:
trials in every status, five parameters, final metrics, 20 intermediate reports each), then a
real server (uvicorn, on 127.0.0.1) serves it and each request is sent over HTTP ``--repeat``
times: the trials page (the table's first page, by number; sorted by value; filtered by a
parameter range and sorted by it) and each plot (curves of the top 10 with their 20 points,
best so far, scatter, parallel coordinates, importance). It prints the first request's time
(cold: nothing cached) and the p50 and p99 of the others.

First meaningful paint: headless Chromium (Debian's ``chromium``, driven by ``playwright``)
opens the experiment's page with its token link; the page marks ``hyperlab:ready`` once its
header, the first table page and the first chart are drawn. Printed: that mark and the first
contentful paint, in ms from navigation start, median of ``--paints`` loads, with an empty
cache (a new browser context each time) and with a warm one (the same context).

optuna-dashboard (``pip install optuna-dashboard``; skipped when missing) serves an in-memory
Optuna study of the same trials and intermediate values; its study API (``/api/studies/0``,
which the page calls first, with every trial) is timed the same way.

Run: ``python benchmarks/dashboard.py [--sizes 1000,10000,100000] [--repeat 50] [--paints 5]``.
Targets: first paint under 1 s and API p99 under 200 ms at 100,000 trials.
"""

from __future__ import annotations

import argparse
import http.client
import math
import random
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from hyperlab.config import ExperimentOptions
from hyperlab.server import serve_in_background
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import ExperimentStatus, Mode, Report, Trial, TrialStatus

EXPERIMENT = "dash0001"
REPORTS = 20
SPACE = {
    "lr": {"_type": "loguniform", "_value": [1e-5, 1e-1]},
    "layers": {"_type": "randint", "_value": [1, 9]},
    "opt": {"_type": "choice", "_value": ["sgd", "adam", "rmsprop"]},
    "momentum": {"_type": "uniform", "_value": [0, 1]},
    "dropout": {"_type": "uniform", "_value": [0, 0.5]},
}
STATUSES = [TrialStatus.SUCCEEDED] * 8 + [TrialStatus.FAILED, TrialStatus.EARLY_STOPPED]
T0 = 1_700_000_000.0
E = f"/api/v1/experiments/{EXPERIMENT}"
REQUESTS = {
    "trials page (by number)": f"{E}/trials?limit=50",
    "trials page (best first)": f"{E}/trials?limit=50&sort=value",
    "trials page (lr range, by lr)": f"{E}/trials?limit=50&param=lr:0.001..0.01&sort=param.lr",
    "changes since a cursor": f"{E}/changes?after=0&limit=200",
    "plot: curves of the top 10": f"{E}/plots/curves?top=10",
    "plot: best so far": f"{E}/plots/best",
    "plot: scatter lr vs value": f"{E}/plots/scatter?x=param.lr",
    "plot: parallel coordinates": f"{E}/plots/parallel",
    "plot: importance": f"{E}/plots/importance",
}


def trial_data(number: int, rng: random.Random) -> tuple[dict[str, Any], TrialStatus, float]:
    params = {
        "lr": 10 ** rng.uniform(-5, -1),
        "layers": rng.randrange(1, 9),
        "opt": rng.choice(["sgd", "adam", "rmsprop"]),
        "momentum": rng.random(),
        "dropout": rng.uniform(0, 0.5),
    }
    loss = abs(math.log10(params["lr"]) + 3) + params["dropout"] + rng.random() * 0.05
    return params, STATUSES[number % len(STATUSES)], loss


def curve(loss: float, step: int) -> float:
    return loss + 2.0 / (step + 1)


def build_store(path: Path, n: int) -> Store:
    """``n`` trials of ``REPORTS`` reports each, written through the store API."""
    store = Store.open(f"sqlite:///{path}")
    options = ExperimentOptions(metric="loss", mode=Mode.MIN, max_trials=n)
    record = ExperimentRecord(
        EXPERIMENT, "dashboard-bench", ExperimentStatus.DONE, options, SPACE, 1, None, T0
    )
    store.create_experiment(record)
    rng = random.Random(0)
    for number in range(n):
        params, status, loss = trial_data(number, rng)
        steps = REPORTS if status is not TrialStatus.EARLY_STOPPED else REPORTS // 4
        start = T0 + number
        for step in range(steps):
            report = Report(step, {"loss": curve(loss, step)}, start + step * 0.1)
            store.add_report(EXPERIMENT, number, report)
        value = curve(loss, steps - 1) if status is not TrialStatus.FAILED else None
        store.put_trial(
            Trial(
                EXPERIMENT,
                number,
                params,
                status,
                value=value,
                metrics={} if value is None else {"loss": value},
                error="ValueError: diverged" if status is TrialStatus.FAILED else None,
                seed=number,
                created_at=start,
                started_at=start,
                finished_at=start + steps * 0.1,
            )
        )
        if number % 5000 == 4999:
            store.flush()
    store.flush()
    return store


class Client:
    """Keep-alive HTTP requests to one server."""

    def __init__(self, host: str, port: int, headers: dict[str, str] | None = None) -> None:
        self.conn = http.client.HTTPConnection(host, port, timeout=120)
        self.headers = {"Host": f"{host}:{port}", **(headers or {})}

    def get(self, path: str) -> float:
        """Milliseconds to answer ``path`` (the whole body read); fails on a non-200."""
        start = time.perf_counter()
        self.conn.request("GET", path, headers=self.headers)
        response = self.conn.getresponse()
        body = response.read()
        elapsed = (time.perf_counter() - start) * 1000
        if response.status != 200:
            raise RuntimeError(f"GET {path}: {response.status} {body[:200]!r}")
        return elapsed


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


def time_requests(client: Client, paths: dict[str, str], repeat: int) -> dict[str, tuple]:
    results = {}
    for name, path in paths.items():
        cold = client.get(path)
        warm = [client.get(path) for _ in range(repeat)]
        results[name] = (cold, statistics.median(warm), percentile(warm, 0.99))
    return results


def first_paints(url: str, loads: int) -> dict[str, tuple[float, float]] | None:
    """Median ``(hyperlab:ready, first contentful paint)`` in ms: empty and warm cache."""
    if loads <= 0:
        return None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    chromium = shutil.which("chromium")
    if chromium is None:
        return None
    flags = [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ]
    script = """() => {
        const ready = performance.getEntriesByName('hyperlab:ready')[0];
        const fcp = performance.getEntriesByName('first-contentful-paint')[0];
        return [ready ? ready.startTime : null, fcp ? fcp.startTime : null];
    }"""
    out: dict[str, tuple[float, float]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=flags)
        try:
            for cache in ("empty cache", "warm cache"):
                samples = []
                context = browser.new_context(viewport={"width": 1440, "height": 900})
                for _ in range(loads):
                    if cache == "empty cache":
                        context.close()
                        context = browser.new_context(viewport={"width": 1440, "height": 900})
                    page = context.new_page()
                    page.goto(url)
                    page.wait_for_function(
                        "performance.getEntriesByName('hyperlab:ready').length > 0",
                        timeout=60_000,
                    )
                    samples.append(page.evaluate(script))
                    page.close()
                context.close()
                out[cache] = (
                    statistics.median(s[0] for s in samples),
                    statistics.median(s[1] for s in samples if s[1] is not None),
                )
        finally:
            browser.close()
    return out


def optuna_dashboard(n: int, repeat: int) -> tuple | None:
    """(cold, p50, p99) ms of optuna-dashboard's study API over ``n`` trials, or None."""
    try:
        import optuna
        import optuna_dashboard
        from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
        from optuna.trial import TrialState, create_trial
    except ImportError:
        return None
    import socket
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = optuna.storages.InMemoryStorage()
    study = optuna.create_study(storage=storage, study_name="bench")
    distributions = {
        "lr": FloatDistribution(1e-5, 1e-1, log=True),
        "layers": IntDistribution(1, 8),
        "opt": CategoricalDistribution(["sgd", "adam", "rmsprop"]),
        "momentum": FloatDistribution(0, 1),
        "dropout": FloatDistribution(0, 0.5),
    }
    rng = random.Random(0)
    trials = []
    for number in range(n):
        params, status, loss = trial_data(number, rng)
        steps = REPORTS if status is not TrialStatus.EARLY_STOPPED else REPORTS // 4
        state = {
            TrialStatus.SUCCEEDED: TrialState.COMPLETE,
            TrialStatus.FAILED: TrialState.FAIL,
            TrialStatus.EARLY_STOPPED: TrialState.PRUNED,
        }[status]
        trials.append(
            create_trial(
                state=state,
                value=curve(loss, steps - 1) if state is TrialState.COMPLETE else None,
                params=params,
                distributions=distributions,
                intermediate_values={s: curve(loss, s) for s in range(steps)},
            )
        )
    study.add_trials(trials)

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    app = optuna_dashboard.wsgi(storage)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = make_server("127.0.0.1", port, app, handler_class=Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        client = Client("127.0.0.1", port)
        timed = time_requests(client, {"study": "/api/studies/0?after=0"}, repeat)
        return timed["study"]
    finally:
        server.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--paints", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows: dict[str, dict[int, tuple]] = {}
    paints: dict[int, Any] = {}
    optuna_rows: dict[int, tuple | None] = {}
    for n in sizes:
        folder = Path(tempfile.mkdtemp(prefix="hyperlab-dash-"))
        start = time.perf_counter()
        store = build_store(folder / "bench.db", n)
        print(f"{n:,} trials x {REPORTS} reports written in {time.perf_counter() - start:.1f} s")
        with serve_in_background(store, 0, token="bench-token") as server:
            client = Client(server.host, server.port)
            for name, timed in time_requests(client, REQUESTS, args.repeat).items():
                rows.setdefault(name, {})[n] = timed
            paints[n] = first_paints(server.link(EXPERIMENT), args.paints)
        store.close()
        shutil.rmtree(folder, ignore_errors=True)
        if n <= 10_000:
            optuna_rows[n] = optuna_dashboard(n, args.repeat)
    print(f"\nms over HTTP on 127.0.0.1: cold / p50 / p99 of {args.repeat} repeats")
    header = "".join(f"{n:>24,}" for n in sizes)
    print(f"{'request':<34}{header}")
    for name, by_size in rows.items():
        cells = "".join(
            f"{' / '.join(f'{ms:.1f}' for ms in by_size[n]):>24}" if n in by_size else f"{'-':>24}"
            for n in sizes
        )
        print(f"{name:<34}{cells}")
    for n in sizes:
        theirs = optuna_rows.get(n)
        if theirs is not None:
            ours = rows["trials page (by number)"][n]
            print(
                f"optuna-dashboard's study API (its page's first request: every trial), {n:,} "
                f"trials: {theirs[0]:.1f} / {theirs[1]:.1f} / {theirs[2]:.1f} ms; p50 "
                f"{theirs[1] / ours[1]:.1f}x hyperlab's trials page (which pages on the server)"
            )
    print("\nexperiment page, ms from navigation start (median): ready mark / first paint")
    for n in sizes:
        found = paints.get(n)
        if not found:
            print(f"  {n:>7,} trials: not measured (needs playwright and chromium)")
            continue
        cells = ", ".join(f"{cache} {r:.0f} / {f:.0f}" for cache, (r, f) in found.items())
        print(f"  {n:>7,} trials: {cells}")
    big = max(sizes)
    if paints.get(big):
        worst_p99 = max(by_size[big][2] for by_size in rows.values())
        ready = max(r for r, _ in paints[big].values())
        print(
            f"\ntargets at {big:,} trials: first paint {ready:.0f} ms (< 1000: "
            f"{'met' if ready < 1000 else 'missed'}), worst API p99 {worst_p99:.0f} ms (< 200: "
            f"{'met' if worst_p99 < 200 else 'missed'})"
        )


if __name__ == "__main__":
    main()
