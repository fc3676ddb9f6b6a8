"""The ``nni`` shim's side of multi-phase trials, with a scripted driver: what it asks, when,
and what its other calls do, as NNI 3.0's ``nni.trial`` does."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from hyperlab.compat import nni
from hyperlab.errors import HyperlabError
from hyperlab.reporting.context import TrialContext, activate, deactivate


class Driver:
    """Answers phase requests with ``{"x": index}`` up to ``phases``, then None; records
    every request and report."""

    def __init__(self, phases: int = 2) -> None:
        self.phases = phases
        self.asked: list[tuple[str, int, str, dict]] = []
        self.reports: list[dict] = []

    def ask(self, ctx: TrialContext, index: int, kind: str, name: str, spec: dict) -> Any:
        self.asked.append((ctx.trial_id, index, kind, spec))
        if "result" in spec or spec["index"] > self.phases:
            return None
        return {"x": spec["index"]}

    def context(self, number: int, ask: bool = True) -> TrialContext:
        return TrialContext(
            number,
            f"exp12345-{number}",
            {"x": 0},
            None,
            None,
            lambda step, metrics: self.reports.append(metrics),
            ask=self.ask if ask else None,
        )


@pytest.fixture()
def driver():
    return Driver()


def in_trial(ctx: TrialContext, call: Any, *args: Any) -> Any:
    token = activate(ctx)
    try:
        return call(*args)
    finally:
        deactivate(token)


def test_later_calls_ask_for_the_next_phase_and_results_close_it(driver):
    ctx = driver.context(3)
    assert in_trial(ctx, nni.get_next_parameter) == {"x": 0}  # phase 0: no request
    in_trial(ctx, nni.report_final_result, {"default": 0.5, "loss": 1.0})
    assert ctx.final == {"default": 0.5, "loss": 1.0}  # phase 0's is the trial's own
    assert driver.asked == []
    assert in_trial(ctx, nni.get_next_parameter) == {"x": 1}
    assert in_trial(ctx, nni.get_current_parameter, "x") == 1
    in_trial(ctx, nni.report_final_result, 0.25)
    assert in_trial(ctx, nni.get_next_parameter) == {"x": 2}
    assert in_trial(ctx, nni.get_next_parameter) is None  # no result for phase 2: allowed
    assert in_trial(ctx, nni.get_current_parameter) is None
    assert in_trial(ctx, nni.get_next_parameter) is None  # asks for phase 3 again
    assert [(index, spec) for _, index, kind, spec in driver.asked if kind == "phase"] == [
        (0, {"index": 1}),
        (1, {"index": 1, "result": {"default": 0.25}}),
        (2, {"index": 2}),
        (3, {"index": 3}),
        (4, {"index": 3}),
    ]
    assert ctx.final == {"default": 0.5, "loss": 1.0}


def test_each_trial_run_has_its_own_phases(driver):
    one, two = driver.context(1), driver.context(2)
    assert in_trial(one, nni.get_next_parameter) == {"x": 0}
    assert in_trial(two, nni.get_next_parameter) == {"x": 0}  # not phase 1 of trial 1
    assert in_trial(one, nni.get_next_parameter) == {"x": 1}
    again = driver.context(1)  # the same trial run again (a new context): from phase 0
    assert in_trial(again, nni.get_next_parameter) == {"x": 0}
    assert [trial for trial, *_ in driver.asked] == ["exp12345-1"]


def test_a_phase_reports_one_final_result(driver):
    ctx = driver.context(4)
    in_trial(ctx, nni.get_next_parameter)
    in_trial(ctx, nni.get_next_parameter)
    in_trial(ctx, nni.report_final_result, 0.1)
    with pytest.raises(HyperlabError) as info:
        in_trial(ctx, nni.report_final_result, 0.2)
    assert str(info.value) == (
        "nni.report_final_result(0.2): phase 1 of trial exp12345-4 already has its final "
        "result; a phase reports one final result (call nni.get_next_parameter() for the "
        "next phase first)"
    )


def test_a_trial_that_cannot_ask_gets_a_clear_error(driver):
    ctx = driver.context(5, ask=False)
    assert in_trial(ctx, nni.get_next_parameter) == {"x": 0}
    with pytest.raises(HyperlabError, match="asks for phase 1, but it runs where trials cannot"):
        in_trial(ctx, nni.get_next_parameter)


def test_reports_are_numbers_or_dicts_with_a_default_as_in_nni(driver):
    ctx = driver.context(6)
    in_trial(ctx, nni.get_next_parameter)
    in_trial(ctx, nni.report_intermediate_result, 0.5)
    in_trial(ctx, nni.report_intermediate_result, {"default": 0.6, "acc": 0.7})
    assert driver.reports == [{"default": 0.5}, {"default": 0.6, "acc": 0.7}]
    ids = [in_trial(ctx, f) for f in (nni.get_trial_id, nni.get_experiment_id)]
    assert ids == ["exp12345-6", "exp12345"]
    assert in_trial(ctx, nni.get_sequence_id) == 6


def test_outside_a_trial_every_call_is_standalone(caplog, monkeypatch):
    monkeypatch.delenv("HYPERLAB_PARAMS_FILE", raising=False)
    with pytest.warns(RuntimeWarning):
        assert nni.get_next_parameter() == {}
    with pytest.warns(RuntimeWarning):
        assert nni.get_next_parameter() == {}  # no phases without NNI's runtime
    with caplog.at_level(logging.INFO, logger="nni"):
        nni.report_final_result(0.1)
        nni.report_final_result(0.2)  # logged, as NNI's standalone channel does
    assert "Final result: 0.1" in caplog.text and "Final result: 0.2" in caplog.text
    assert (nni.get_trial_id(), nni.get_experiment_id(), nni.get_sequence_id()) == (
        "STANDALONE",
        "STANDALONE",
        0,
    )
