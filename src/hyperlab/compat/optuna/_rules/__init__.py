"""Optuna's pruners as hyperlab assessors that decide exactly as Optuna does.

Each rule keeps what Optuna's pruners read of a study, rebuilt from the calls the driver makes
(and replays, in time order, on resume): every trial's intermediate values by step, and which
trials completed (SUCCEEDED, Optuna's COMPLETE). A report at ``step`` is Optuna's
``trial.report(value, step)``, and the decision on it is what ``trial.should_prune()`` returns
right after: the rule judges the trial with all its reports so far, its last step being the
largest step reported, as ``FrozenTrial.last_step``. As in Optuna:

- a second report at a step already reported keeps the first value (a re-run, a later
  ``attempt``, replaces it);
- values may be NaN: a trial whose values are all NaN is pruned by the percentile rules, a NaN
  at a judged step by the others; NaN values of other trials are ignored;
- ``n_warmup_steps`` and ``interval_steps`` decide whether a step is judged with Optuna's
  ``_is_first_in_interval_step``;
- what Optuna's pruners store on the pruner or as trial system attributes (successive halving's
  rung values, ``min_resource="auto"``, Hyperband's brackets) is kept here, and reached again
  on replay.

A trial told to stop stays stopped (its later reports of the same attempt are answered STOP,
and their values kept: an objective that never asks ``should_prune()`` reports on and
completes, and Optuna judges other trials against those values), and nothing is decided after
a trial ended. The rules decide STOP or CONTINUE, never PAUSE.

The rules' modules: ``_base`` (the study, the base rule, the base of the arguments),
``_percentile``, ``_threshold``, ``_halving`` (successive halving and Hyperband) and
``_patient``. Each rule is named by its path in this package,
``"hyperlab.compat.optuna._rules:PercentileRule"``, which the pruners give and experiments
store: keep these names here, so stored experiments resume.
"""

from hyperlab.compat.optuna._rules._base import OptunaRule, RuleArguments, StudyTrials
from hyperlab.compat.optuna._rules._halving import (
    HyperbandArguments,
    HyperbandRule,
    SuccessiveHalvingArguments,
    SuccessiveHalvingRule,
)
from hyperlab.compat.optuna._rules._patient import PatientArguments, PatientRule
from hyperlab.compat.optuna._rules._percentile import PercentileArguments, PercentileRule
from hyperlab.compat.optuna._rules._threshold import ThresholdArguments, ThresholdRule

__all__ = [
    "HyperbandArguments",
    "HyperbandRule",
    "OptunaRule",
    "PatientArguments",
    "PatientRule",
    "PercentileArguments",
    "PercentileRule",
    "RuleArguments",
    "StudyTrials",
    "SuccessiveHalvingArguments",
    "SuccessiveHalvingRule",
    "ThresholdArguments",
    "ThresholdRule",
]
