"""``show``, ``trials --limit`` and ``export`` read a large experiment without its trial list
(issue 31): the database counts, sorts and pages, and export streams batches. What they print
is what the list gave."""

from __future__ import annotations

import argparse
import io
import json
import math
import sys
from pathlib import Path

import pytest

from hyperlab.cli import main
from hyperlab.cli._common import write_export
from hyperlab.cli._export import stream_export
from hyperlab.cli._front import constraint_line, sort_trials
from hyperlab.config import ExperimentOptions
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import ExperimentStatus, Mode, Trial, TrialStatus

STATUSES = [
    TrialStatus.SUCCEEDED,
    TrialStatus.FAILED,
    TrialStatus.SUCCEEDED,
    TrialStatus.EARLY_STOPPED,
    TrialStatus.RUNNING,
    TrialStatus.SUCCEEDED,
]


def make_store(path: Path, mode: Mode, constraints: bool = False) -> tuple[Store, str]:
    store = Store.open(f"sqlite:///{path}")
    options = ExperimentOptions(metric="loss", mode=mode, max_trials=60)
    record = ExperimentRecord("big", "big", ExperimentStatus.DONE, options, {}, 1, None, 1.0)
    store.create_experiment(record)
    for number in range(60):
        status = STATUSES[number % len(STATUSES)]
        value = None if status is not TrialStatus.SUCCEEDED else float((number * 7) % 11)
        if number == 12:
            value = math.inf  # stored as NULL: no value
        error = None
        if status is TrialStatus.FAILED:
            error = "KeyError: k" if number == 1 else f"ValueError: boom {number}"
        store.put_trial(
            Trial(
                "big",
                number,
                {"x": number / 60, "kind": ["a", "b"][number % 2], "deep": {"y": number}},
                status,
                value=value,
                metrics={} if value is None else {"loss": value, f"m{number % 3}": 1.0},
                error=error,
                created_at=10.0 + number,
                started_at=10.0 + number,
                finished_at=None if status is TrialStatus.RUNNING else 11.5 + number,
                constraints=(number % 5 - 2.0, -1.0) if constraints else None,
            )
        )
    store.flush()
    return store, "big"


def run_cli(capsys: pytest.CaptureFixture[str], path: Path, *argv: str) -> str:
    capsys.readouterr()
    assert main(["--storage", f"sqlite:///{path}", *argv]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("mode", [Mode.MIN, Mode.MAX])
@pytest.mark.parametrize(
    "extra",
    [
        [],
        ["--sort=-number"],
        ["--sort", "metric"],
        ["--sort=-metric"],
        ["--sort", "metric", "--desc"],
        ["--status", "failed"],
        ["--status", "succeeded", "--sort", "metric"],
    ],
)
def test_a_limited_trials_table_is_the_sorted_list_cut(tmp_path, capsys, monkeypatch, mode, extra):
    monkeypatch.setenv("COLUMNS", "200")
    path = tmp_path / "s.db"
    store, experiment = make_store(path, mode)
    trials = store.get_trials(experiment, reports=False)
    given = [a.removeprefix("--sort=") for a in extra if a.startswith("--sort=")]
    sort = extra[extra.index("--sort") + 1] if "--sort" in extra else (given or ["number"])[0]
    if "--status" in extra:
        wanted = TrialStatus(extra[extra.index("--status") + 1].upper())
        trials = [t for t in trials if t.status is wanted]
    expected = sort_trials(
        trials, store.get_experiment(experiment).options, sort, descending="--desc" in extra
    )[:7]
    printed = run_cli(capsys, path, "trials", experiment, "--limit", "7", *extra)
    rows = [line.split("│")[1].strip() for line in printed.splitlines() if line.startswith("│")]
    assert rows == [str(t.number) for t in expected]


@pytest.mark.parametrize("mode", [Mode.MIN, Mode.MAX])
def test_show_counts_and_ranks_as_the_trial_list_does(tmp_path, capsys, monkeypatch, mode):
    monkeypatch.setenv("COLUMNS", "200")
    path = tmp_path / "s.db"
    store, experiment = make_store(path, mode, constraints=True)
    trials = store.get_trials(experiment, reports=False)
    printed = run_cli(capsys, path, "show", experiment)
    counts: dict[str, int] = {}
    for t in trials:
        counts[str(t.status)] = counts.get(str(t.status), 0) + 1
    assert ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) in printed
    assert constraint_line(store.get_experiment(experiment).options, trials) in printed
    assert "10 failed, most often ValueError (9x; trial 7: ValueError: boom 7)" in printed
    top = [t for t in mode.ranked(trials) if t.value is not None][:10]
    rows = [line.split("│")[1].strip() for line in printed.splitlines() if line.startswith("│")]
    assert rows == [str(t.number) for t in top]


def test_the_store_counts_statuses_failures_and_constraints(tmp_path):
    store, experiment = make_store(tmp_path / "s.db", Mode.MIN, constraints=True)
    trials = store.get_trials(experiment, reports=False)
    expected: dict[TrialStatus, int] = {}
    for t in trials:
        expected[t.status] = expected.get(t.status, 0) + 1
    assert store.status_counts(experiment) == expected
    failed = [(t.number, t.error) for t in trials if t.status is TrialStatus.FAILED]
    assert store.failed_errors(experiment) == failed
    infeasible = sum(not t.feasible for t in trials)
    assert store.constraint_counts(experiment) == (len(trials), infeasible)
    assert store.status_counts("nothing") == {}
    assert store.constraint_counts("nothing") == (0, 0)


ROWS = [
    {"number": 0, "value": 1.5, "params.x": 0.1, "params.l": [1, 2]},
    {"number": 1, "value": None, "error": 'ValueError: a\nb "q"', "params.x": 0.2},
    {"number": 2, "value": math.inf, "metrics.m": {"a": 1}, "params.ü": "é"},
]


@pytest.mark.parametrize("fmt", ["csv", "json"])
@pytest.mark.parametrize("with_env", [False, True])
@pytest.mark.parametrize("sizes", [(3,), (1, 0, 2), (1, 1, 1), ()])
def test_export_streams_what_the_whole_list_writes(tmp_path, fmt, with_env, sizes):
    if with_env and fmt == "csv":
        pytest.skip("the environment goes with JSON only")
    rows = ROWS[: sum(sizes)]
    batches, start = [], 0
    for size in sizes:
        batches.append(rows[start : start + size])
        start += size
    record = argparse.Namespace(id="e1", name="n", environment={"python": "3", "k": [1, {"a": 2}]})
    written = {}
    for how in ("list", "stream"):
        out = tmp_path / f"{how}.{fmt}"
        args = argparse.Namespace(output=str(out), format=fmt, with_env=with_env)
        if how == "list":
            columns: list[str] = []
            for row in rows:
                columns.extend(c for c in row if c not in columns)
            write_export(args, record, rows, columns, "trials")
        else:
            stream_export(args, record, iter(batches), "trials")
        written[how] = out.read_bytes()
    assert written["stream"] == written["list"]
    if fmt == "json":
        parsed = json.loads(written["stream"])
        assert (parsed["trials"] if with_env else parsed) == json.loads(
            json.dumps(rows, default=str)
        )


def test_export_to_stdout(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    args = argparse.Namespace(output=None, format="json", with_env=False)
    stream_export(args, None, iter([ROWS[:1]]), "trials")
    assert json.loads(out.getvalue()) == [ROWS[0]]
