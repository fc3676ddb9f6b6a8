"""What one request costs on the largest experiment hyperlab allows: the goal is 2 s and 300 MB
for every plot and listing.

The experiment (``tests/server/largest.py``) has a search space at every limit of
``hyperlab.space`` (1,000 parameters, a choice of 10,000 options, choices nested 10 levels,
close to 1,000,000 characters of JSON) and ``--trials`` trials written directly through the
store. Each request goes through the app in this process (FastAPI's TestClient), first on a new
app (``cold``: the search space is parsed, snapshots are built, scikit-learn is imported for
importance), then again (``warm``). Time is measured without, and the peak of Python's memory
(``tracemalloc``, which slows the request down) in a pass of its own.

Run: ``python benchmarks/api_limits.py [--trials N]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.server.largest

from hyperlab.server import create_app
from hyperlab.store import Store
from tests.server.largest import BIG, write_largest

with warnings.catch_warnings():  # newer Starlette prefers httpx2; httpx still works
    warnings.filterwarnings("ignore", message=r"Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

EXPERIMENT = "limits01"
TOKEN = "benchmark-token"
REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ("plots/scatter", {"x": f"param.{BIG}", "max_points": 20_000}),
    ("plots/scatter", {"x": "param.p0001", "y": "metric.acc", "max_points": 20_000}),
    ("plots/parallel", {"max_points": 20_000}),
    ("plots/importance", {}),
    ("plots/curves", {"top": 100}),
    ("plots/best", {"max_points": 20_000}),
    ("trials", {"limit": 10_000}),
    ("trials", {"sort": "-param.p0000", "limit": 100}),
    ("trials", {"sort": f"param.{BIG}", "limit": 100}),
    ("trials", {"param": f"{BIG}:option-00001,option-09999"}),
    ("changes", {"limit": 10_000}),
    ("reports", {"limit": 10_000}),
    ("", {}),
    # NNI's listings: its API has no paging, its web UI and client read every trial
    ("/api/v1/nni/trial-jobs", {"experiment_id": EXPERIMENT}),
    ("/api/v1/nni/metric-data", {"experiment_id": EXPERIMENT}),
    ("/api/v1/nni/export-data", {"experiment_id": EXPERIMENT}),
]


def _client(url: str) -> TestClient:
    app = create_app(url, session_token=TOKEN)
    return TestClient(app, base_url="http://127.0.0.1:8000", headers={"X-Hyperlab-Token": TOKEN})


def _get(client: TestClient, path: str, params: dict[str, Any]) -> tuple[float, int]:
    started = time.perf_counter()
    address = path if path.startswith("/") else f"/api/v1/experiments/{EXPERIMENT}/{path}"
    response = client.get(address.rstrip("/"), params=params)
    took = time.perf_counter() - started
    if response.status_code != 200:
        raise SystemExit(f"{path} {params}: {response.status_code} {response.text[:300]}")
    return took, len(response.content)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'limits.db'}"
        started = time.perf_counter()
        with Store.open(url) as store:
            write_largest(store, EXPERIMENT, args.trials)
        print(f"wrote {args.trials:,} trials in {time.perf_counter() - started:.1f}s")
        print(f"{'request':58} {'cold':>7} {'warm':>7} {'bytes':>11} {'peak MB':>8}")
        with _client(url) as timed, _client(url) as measured:
            for path, params in REQUESTS:
                cold, size = _get(timed, path, params)
                warm, _ = _get(timed, path, params)
                tracemalloc.start()
                _get(measured, path, params)
                peak = tracemalloc.get_traced_memory()[1] / 1e6
                tracemalloc.stop()
                shown = f"{path or 'experiment'} {params}"[:58]
                print(f"{shown:58} {cold:6.2f}s {warm:6.2f}s {size:11,} {peak:8.1f}")


if __name__ == "__main__":
    main()
