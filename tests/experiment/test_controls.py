"""What a control request changes (``_controls.decide``), read against the driver's state
without a driver; and the objective rule that the driver and the phases share."""

from __future__ import annotations

import math
from typing import Any

import pytest

from hyperlab import space as hs
from hyperlab.experiment._controls import Situation, decide
from hyperlab.experiment._objective import ObjectiveRule
from hyperlab.reporting.metrics import MetricsError
from hyperlab.space import SearchSpace
from hyperlab.store import (
    AddTrial,
    ImportData,
    ImportedResult,
    KillTrial,
    SetConcurrency,
    SetMaxTrials,
    StopExperiment,
    UnreadableRequest,
)

SPACE = SearchSpace({"x": hs.uniform(0, 1)})


def situation(**fields: Any) -> Situation:
    """The driver at trial 3 of 10, running 1 and 2 (no record: these requests read none)."""
    now: dict[str, Any] = {
        "record": None,
        "space": SPACE,
        "next_number": 3,
        "max_trials": 10,
        "ending": False,
        "trials": {1, 2},
    }
    return Situation(**{**now, **fields})


def test_a_refused_request_changes_nothing() -> None:
    change = decide(UnreadableRequest("future", "a newer kind"), situation())
    assert not change.outcome.applied and change.outcome.message == "a newer kind"
    assert (change.stop, change.kill, change.add, change.imported, change.options) == (
        False,
        None,
        None,
        (),
        {},
    )


def test_stop_kill_and_budget() -> None:
    assert decide(StopExperiment(), situation()).stop
    assert decide(KillTrial(number=2), situation()).kill == 2
    refused = decide(KillTrial(number=7), situation())
    assert refused.kill is None and refused.outcome.message == "trial 7 is not running"
    change = decide(SetConcurrency(value=4), situation())
    assert change.concurrency == 4 and change.options == {"concurrency": 4}
    assert decide(SetMaxTrials(value=20), situation()).options == {"max_trials": 20}


def test_an_added_trial_takes_the_next_number_within_the_budget() -> None:
    change = decide(AddTrial(params={"x": 0.5}), situation())
    assert change.add == {"x": 0.5} and change.outcome.trial == 3
    assert "params" in decide(AddTrial(params={"x": 2.0}), situation()).outcome.message
    spent = decide(AddTrial(params={"x": 0.5}), situation(next_number=10))
    assert spent.add is None and "max_trials=10" in spent.outcome.message
    ending = decide(AddTrial(params={"x": 0.5}), situation(ending=True))
    assert ending.add is None and "ending" in ending.outcome.message


def test_imported_results_are_checked_all_before_any_is_taken() -> None:
    good, bad = ImportedResult(params={"x": 0.1}, value=1.0), ImportedResult(params={}, value=2.0)
    assert decide(ImportData(results=[good]), situation()).imported == (good,)
    refused = decide(ImportData(results=[good, bad]), situation())
    assert refused.imported == () and refused.outcome.message.startswith("results[1].params")


def test_the_objective_rule() -> None:
    rule = ObjectiveRule("loss")
    assert rule.normalize({"default": 1.5}) == {"loss": 1.5}  # a bare value takes the name
    assert rule.value({"loss": 1.5}) == (1.5, None)
    value, error = rule.value({"acc": 0.5})
    assert value is None and error is not None and "'loss' is missing" in error
    assert rule.value({"loss": math.nan})[0] is None
    assert ObjectiveRule(None, research=True).value({"a": 1, "b": 2}) == (None, None)
    value, error = ObjectiveRule(None).value({"a": 1, "b": 2})
    assert value is None and error is not None and "pass metric=<name>" in error

    with pytest.raises(MetricsError):  # the store cannot hold a set
        rule.normalize({"loss": {1, 2}})
