"""ASHA at scale: the stop variant's cut read off each rung's sorted losses decides as ranking
the whole rung does (ties included), and a rung's cost per report does not grow with it."""

from __future__ import annotations

import random

from hyperlab.assessors import ASHA, Decision, create_assessor
from hyperlab.trial import Mode, Report, Trial, TrialStatus


def asha(**args) -> ASHA:
    assessor = create_assessor("asha", mode=Mode.MIN, metric="loss", seed=0, args=args)
    assert isinstance(assessor, ASHA)
    return assessor


def ranked_whole(rung: list[float], loss: float, eta: int) -> bool:
    """The rule as the docstring states it: among the best ``max(1, n // eta)`` of the rung
    (itself included), ties with the last of them going on."""
    cutoff = sorted(rung)[max(1, len(rung) // eta) - 1]
    return loss <= cutoff


def test_the_stop_cut_matches_ranking_the_whole_rung_with_ties():
    rng = random.Random(7)
    assessor = asha(min_resource=1, max_resource=27)
    rungs: list[list[float]] = [[], []]
    for number in range(600):
        trial = Trial("scale", number, {"x": number})
        assessor.on_start(trial, 0.0)
        decision = Decision.CONTINUE
        for step in range(9):
            loss = float(rng.choice([0.1, 0.2, 0.3, rng.random()]))  # many ties
            decision = assessor.on_report(trial, Report(step, {"loss": loss}, 0.0), 0.0)
            k = {0: 0, 2: 1}.get(step)
            if k is not None:
                rungs[k].append(loss)
                expected = ranked_whole(rungs[k], loss, 3)
                assert (decision is Decision.CONTINUE) is expected, (number, step)
            if decision is not Decision.CONTINUE:
                break
        status = (
            TrialStatus.SUCCEEDED if decision is Decision.CONTINUE else TrialStatus.EARLY_STOPPED
        )
        assessor.on_end(Trial("scale", number, {"x": number}, status), 0.0)


def test_a_report_costs_no_pass_over_the_rung(monkeypatch):
    """Counted, not timed: the losses a report sorts (a ranking of the whole rung sorts every
    loss of it at each report, quadratic in the rung's size; the kept order sorts none)."""
    import builtins

    from hyperlab.assessors import _asha

    sorted_items = []

    def counting_sorted(items, *args, **kwargs):
        listed = builtins.sorted(items, *args, **kwargs)
        sorted_items.append(len(listed))
        return listed

    monkeypatch.setattr(_asha, "sorted", counting_sorted, raising=False)
    assessor = asha(min_resource=1, max_resource=None)
    trials = 2000
    for number in range(trials):
        trial = Trial("scale", number, {"x": number})
        assessor.on_start(trial, 0.0)
        for step in range(3):  # rungs 1 and 3: every trial reaches both, all tied
            assessor.on_report(trial, Report(step, {"loss": 0.0}, 0.0), 0.0)
    assert sum(sorted_items) <= trials  # linear at most; a whole-rung pass would be ~4,000,000
