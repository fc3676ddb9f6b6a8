"""A user's own NNI tuner and assessor, written as NNI's examples write them
(``examples/tuners/customized_tuner``: a random tuner with a state of its own, and an assessor
that stops trials whose results fall below a threshold). Each records every call NNI's
dispatcher makes into it, with its arguments, as one JSON line in the file ``log``.

This module imports ``nni`` as a user's module does; hyperlab loads it from its folder
(``codeDirectory``), so it is not a module of the tests package.
"""

import json
import random

from nni import NoMoreTrialError
from nni.assessor import Assessor, AssessResult
from nni.tuner import Tuner
from nni.utils import OptimizeMode, extract_scalar_history, extract_scalar_reward


def record(log, *call):
    with open(log, "a") as file:
        file.write(json.dumps(list(call)) + "\n")


class DemoTuner(Tuner):
    """Random search from each parameter id's own seed, keeping the best result it heard of;
    raises ``NoMoreTrialError`` after ``max_params`` parameter sets."""

    def __init__(self, log, optimize_mode="maximize", seed=0, max_params=None):
        self.log = log
        self.optimize_mode = OptimizeMode(optimize_mode)
        self.seed = seed
        self.max_params = max_params
        self.space = None
        self.generated = 0
        self.best = None
        record(log, "tuner.__init__", optimize_mode, seed, max_params)

    def update_search_space(self, search_space):
        record(self.log, "update_search_space", search_space)
        self.space = search_space

    def generate_parameters(self, parameter_id, **kwargs):
        record(self.log, "generate_parameters", parameter_id, sorted(kwargs))
        if self.max_params is not None and self.generated >= self.max_params:
            raise NoMoreTrialError("no more")
        self.generated += 1
        rng = random.Random(self.seed * 100_003 + parameter_id)
        params = {}
        for name, spec in self.space.items():
            low, high = spec["_value"]
            params[name] = rng.uniform(low, high)
        return params

    def receive_trial_result(self, parameter_id, parameters, value, **kwargs):
        record(self.log, "receive_trial_result", parameter_id, parameters, value, kwargs)
        reward = extract_scalar_reward(value)
        better = self.best is None or (
            reward > self.best
            if self.optimize_mode is OptimizeMode.Maximize
            else reward < self.best
        )
        if better:
            self.best = reward

    def trial_end(self, parameter_id, success, **kwargs):
        record(self.log, "trial_end", parameter_id, success, kwargs)

    def import_data(self, data):
        record(self.log, "import_data", data)

    def load_checkpoint(self):
        record(self.log, "load_checkpoint")


class ThresholdAssessor(Assessor):
    """Stops a trial once it has ``min_history`` results and the latest is below
    ``threshold``."""

    def __init__(self, log, threshold, min_history=2):
        self.log = log
        self.threshold = threshold
        self.min_history = min_history
        record(log, "assessor.__init__", threshold, min_history)

    def assess_trial(self, trial_job_id, trial_history):
        values = extract_scalar_history(trial_history)
        bad = len(values) >= self.min_history and values[-1] < self.threshold
        result = AssessResult.Bad if bad else AssessResult.Good
        record(self.log, "assess_trial", trial_job_id, trial_history, result.name)
        return result

    def trial_end(self, trial_job_id, success):
        record(self.log, "assessor.trial_end", trial_job_id, success)
