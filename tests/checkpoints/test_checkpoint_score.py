"""``checkpoint_score``: a trial keeps its best ``checkpoint_keep`` checkpoints by a reported
metric (and its newest), on every executor, as Ray's ``CheckpointConfig`` does."""

from __future__ import annotations

import json
import math
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hyperlab
from hyperlab.errors import ConfigError
from hyperlab.executors import CommandTrial
from hyperlab.reporting.checkpoints import prune, write_checkpoint
from tests.checkpoints import objectives
from tests.executors.harness import PYTHON

SCORED = (
    "import hyperlab\n"
    f"for index, acc in enumerate({objectives.SCORES!r}):\n"
    "    hyperlab.report(acc=acc)\n"
    "    hyperlab.checkpoint({'index': index})\n"
)


def kept_indices(folder: Path) -> list[int]:
    """The ``index`` each kept checkpoint of ``folder`` saved, oldest first."""
    return [
        pickle.loads((path / "state.pkl").read_bytes())["index"]
        for path in sorted(folder.iterdir())
        if path.name.startswith("checkpoint-")
    ]


def write_scored(folder: Path, scores: list[object], keep: int, score) -> None:
    for index, value in enumerate(scores):
        report = {} if value is None else {"acc": value}
        payload = pickle.dumps({"index": index})
        write_checkpoint(folder, {"step": index, "report": report}, payload=payload)
        prune(folder, keep, score)


def expected(scores: list[object], keep: int, order: str) -> list[int]:
    """The reference rule: the best ``keep`` (unscored last, newer first among equals) and
    the newest, each rule applied after every checkpoint as the trial writes them."""
    alive: list[int] = []
    for index in range(len(scores)):
        alive.append(index)

        def rank(i: int) -> tuple[bool, float, int]:
            value = scores[i]
            if not isinstance(value, float) or not math.isfinite(value):
                return (False, 0.0, i)
            return (True, value if order == "max" else -value, i)

        best = sorted(alive, key=rank, reverse=True)[:keep]
        alive = [i for i in alive if i in best or i == index]
    return alive


def test_the_best_by_the_score_and_the_newest_are_kept(tmp_path):
    write_scored(tmp_path / "max", [0.5, 0.9, 0.1, 0.7, 0.3], 2, ("acc", "max"))
    assert kept_indices(tmp_path / "max") == [1, 3, 4]
    write_scored(tmp_path / "min", [0.5, 0.9, 0.1, 0.7, 0.3], 2, ("acc", "min"))
    assert kept_indices(tmp_path / "min") == [2, 4]  # 0.1 and 0.3, the newest too
    write_scored(tmp_path / "missing", [None, 0.2, float("nan"), 0.1, None], 1, ("acc", "max"))
    assert kept_indices(tmp_path / "missing") == [1, 4]  # unscored rank last, the newest stays


@settings(max_examples=60, deadline=None)
@given(
    scores=st.lists(
        st.one_of(st.none(), st.sampled_from([0.0, 1.0, 2.0, float("nan")]), st.floats(-5, 5)),
        min_size=1,
        max_size=8,
    ),
    keep=st.integers(1, 4),
    order=st.sampled_from(["min", "max"]),
)
def test_pruning_by_score_follows_the_rule(tmp_path_factory, scores, keep, order):
    folder = tmp_path_factory.mktemp("scored")
    write_scored(folder, scores, keep, ("acc", order))
    assert kept_indices(folder) == expected(scores, keep, order)


def run_scored(tmp_path: Path, executor: str, **options) -> Path:
    command = CommandTrial(f'{PYTHON} -c "{SCORED}"')
    objective: Any = command if executor == "command" else objectives.scored
    result = hyperlab.run(
        objective,
        {"x": hyperlab.choice([1])},
        executor=executor,
        metric="acc",
        mode="max",
        max_trials=1,
        checkpoint_keep=2,
        storage=f"sqlite:///{tmp_path / 'runs.db'}",
        working_dir=str(tmp_path / "work"),
        progress=False,
        **options,
    )
    (folder,) = (tmp_path / "work").glob("*/trials/0/checkpoints")
    assert len(result.trials) == 1
    return folder


@pytest.mark.parametrize("executor", ["inprocess", "threads", "processes", "command"])
def test_every_executor_keeps_the_best_checkpoints_by_the_score(tmp_path, executor):
    folder = run_scored(tmp_path, executor, checkpoint_score="acc")
    assert kept_indices(folder) == [1, 3, 4]  # acc 0.9 and 0.7, and the newest
    meta = json.loads((folder / "checkpoint-000001" / "meta.json").read_text())
    assert meta["report"] == {"acc": 0.9}


def test_the_score_mode_may_differ_from_the_experiments(tmp_path):
    folder = run_scored(tmp_path, "inprocess", checkpoint_score="acc", checkpoint_score_mode="min")
    assert kept_indices(folder) == [2, 4]  # acc 0.1 and 0.3, the newest


def test_without_a_score_the_newest_are_kept(tmp_path):
    assert kept_indices(run_scored(tmp_path, "inprocess")) == [3, 4]


def test_a_score_mode_without_a_score_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"checkpoint_score_mode.*needs checkpoint_score"):
        run_scored(tmp_path, "inprocess", checkpoint_score_mode="min")
