"""``Verdicts``, the ledger assessors keep of the trials they stopped or saw end."""

from __future__ import annotations

import pytest

from hyperlab.assessors.base import Decision, Verdicts
from hyperlab.trial import Trial, TrialStatus


def ended(number: int, status: TrialStatus) -> Trial:
    return Trial("e", number, {}, status)


def test_a_stopped_attempt_stays_stopped_and_a_new_attempt_is_judged():
    verdicts = Verdicts()
    assert verdicts.known(3, attempt=1) is None
    assert verdicts.stop(3, attempt=1) is Decision.STOP
    assert verdicts.known(3, attempt=1) is Decision.STOP  # reports sent before the stop came
    assert verdicts.known(3, attempt=2) is None  # a re-run is judged afresh
    assert verdicts.known(4, attempt=1) is None


@pytest.mark.parametrize(
    "status",
    [
        TrialStatus.SUCCEEDED,
        TrialStatus.FAILED,
        TrialStatus.EARLY_STOPPED,
        TrialStatus.USER_CANCELED,
    ],
)
def test_a_trial_that_ended_is_not_judged_again_until_it_starts_again(status):
    verdicts = Verdicts()
    assert verdicts.ended(ended(5, status)) and verdicts.done(5)
    assert verdicts.known(5, attempt=1) is Decision.CONTINUE
    verdicts.started(5)  # resumed
    assert not verdicts.done(5) and verdicts.known(5, attempt=1) is None


@pytest.mark.parametrize("status", [TrialStatus.SYS_CANCELED, TrialStatus.PAUSED])
def test_an_interrupted_or_paused_trial_has_not_ended(status):
    verdicts = Verdicts()
    assert not verdicts.ended(ended(6, status))
    assert not verdicts.done(6) and verdicts.known(6, attempt=1) is None
