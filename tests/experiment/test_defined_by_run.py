"""The driver's answers to ``hyperlab.suggest`` (``_requests.DefinedByRun``): a spec parsed
once and kept answers as a fresh parse would."""

from __future__ import annotations

from typing import Any

from hyperlab.executors.base import Requested
from hyperlab.experiment._requests import CHECKS_KEPT, DefinedByRun
from hyperlab.space import SearchSpace
from hyperlab.trial import Trial


def ask(by_run: DefinedByRun, number: int, spec: dict[str, Any]) -> tuple[Any, str | None, bool]:
    trial = Trial("e", number, {}, seed=number)
    return by_run.answer(trial, Requested(number, 0.0, 0, "parameter", "p", spec))


def test_specs_that_only_their_types_tell_apart_are_parsed_apart() -> None:
    by_run = DefinedByRun(SearchSpace({}), {})
    ints = {"_type": "choice", "_value": [1, 2]}
    floats = {"_type": "choice", "_value": [1.0, 2.0]}
    for number in range(5):
        value, error, _ = ask(by_run, number, ints)
        assert error is None and type(value) is int
        value, error, _ = ask(by_run, 100 + number, floats)  # equal to ints, not the same
        assert error is None and type(value) is float


def test_a_kept_parse_gives_what_a_fresh_one_gives() -> None:
    spec = {"_type": "loguniform", "_value": [1e-4, 1.0]}
    kept = DefinedByRun(SearchSpace({}), {})
    drawn = [ask(kept, n, spec)[0] for n in range(20)]
    fresh = [ask(DefinedByRun(SearchSpace({}), {"p": spec}), n, spec)[0] for n in range(20)]
    assert drawn == fresh


def test_a_refused_spec_is_refused_each_time_and_what_is_kept_stays_bounded() -> None:
    by_run = DefinedByRun(SearchSpace({"p": {"_type": "uniform", "_value": [0, 1]}}), {})
    for number in range(3):
        _, error, _ = ask(by_run, number, {"_type": "uniform", "_value": [0, 2]})
        assert error is not None and "one name keeps one distribution" in error
    for high in range(CHECKS_KEPT + 10):
        ask(by_run, 0, {"_type": "uniform", "_value": [0, high + 1]})
    assert len(by_run._checked) <= CHECKS_KEPT
