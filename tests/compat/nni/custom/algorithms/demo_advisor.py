"""A user's own NNI advisor, written as NNI's advisors (Hyperband, BOHB) are: a subclass of
``MsgDispatcherBase`` answering the dispatcher's ``handle_*`` commands and sending trials with
``send(CommandType.NewTrialJob, json)``. It proposes random parameter sets from each id's own
seed, ``max_params`` of them, then sends ``NoMoreTrialJobs``; with ``kill_below``, it kills a
running trial (``KillTrialJob``, as Hyperband does) whose intermediate result is below it.
Each ``handle_*`` call is recorded, with its data, as one JSON line in the file ``log``.

With ``legacy=True`` it sends through ``nni.runtime.protocol.send``, as NNI 2's advisors did;
otherwise through ``self.send``, as NNI 3.0's do.

This module imports ``nni`` as a user's module does; hyperlab loads it from its folder
(``codeDirectory``), so it is not a module of the tests package.
"""

import json
import random

from nni.runtime.msg_dispatcher_base import MsgDispatcherBase
from nni.runtime.protocol import send
from nni.runtime.tuner_command_channel import CommandType
from nni.utils import MetricType, OptimizeMode, extract_scalar_reward


def record(log, *call):
    with open(log, "a") as file:
        file.write(json.dumps(list(call)) + "\n")


class DemoAdvisor(MsgDispatcherBase):
    def __init__(
        self, log, optimize_mode="maximize", seed=0, max_params=4, legacy=False, kill_below=None
    ):
        super().__init__()
        self.kill_below = kill_below
        self.log = log
        self.optimize_mode = OptimizeMode(optimize_mode)
        self.seed = seed
        self.max_params = max_params
        self.legacy = legacy
        self.space = None
        self.generated = 0
        self.best = None
        record(log, "advisor.__init__", optimize_mode, seed, max_params)

    def _send(self, command, data):
        if self.legacy:
            send(command, data)
        else:
            self.send(command, data)

    def load_checkpoint(self):
        record(self.log, "load_checkpoint")

    def handle_initialize(self, data):
        record(self.log, "handle_initialize", data)
        self.handle_update_search_space(data)
        self._send(CommandType.Initialized, "")

    def handle_update_search_space(self, data):
        self.space = data

    def handle_request_trial_jobs(self, data):
        record(self.log, "handle_request_trial_jobs", data)
        for _ in range(data):
            if self.generated >= self.max_params:
                self._send(CommandType.NoMoreTrialJobs, json.dumps({"parameter_id": None}))
                return
            parameter_id = f"p{self.generated}"
            rng = random.Random(self.seed * 100_003 + self.generated)
            params = {name: rng.uniform(*spec["_value"]) for name, spec in self.space.items()}
            self.generated += 1
            job = {"parameter_id": parameter_id, "parameter_source": "algorithm"}
            job["parameters"] = params
            self._send(CommandType.NewTrialJob, json.dumps(job))

    def handle_report_metric_data(self, data):
        record(self.log, "handle_report_metric_data", data)
        if data["type"] == MetricType.FINAL:
            reward = extract_scalar_reward(json.loads(data["value"]))
            if self.best is None or reward > self.best:
                self.best = reward
        elif self.kill_below is not None:  # PERIODICAL
            reward = extract_scalar_reward(json.loads(data["value"]))
            if reward < self.kill_below:
                self._send(CommandType.KillTrialJob, json.dumps(data["trial_job_id"]))

    def handle_trial_end(self, data):
        record(self.log, "handle_trial_end", data)

    def handle_import_data(self, data):
        record(self.log, "handle_import_data", data)

    def handle_add_customized_trial(self, data):
        record(self.log, "handle_add_customized_trial", data)


class KillingAdvisor(DemoAdvisor):
    """Asks to stop trial ``target`` (by default the trial whose result came) once a result
    came."""

    def __init__(self, log, target=None, **kwargs):
        super().__init__(log, **kwargs)
        self.target = target

    def handle_report_metric_data(self, data):
        self._send(CommandType.KillTrialJob, json.dumps(self.target or data["trial_job_id"]))


class RoundAdvisor(MsgDispatcherBase):
    """Sends parameter sets in rounds of ``size``, the next round only once every trial of the
    last one ended (as Hyperband's serial mode does, keeping a credit of the trials asked for
    and not sent), ``rounds`` rounds in all, then ``NoMoreTrialJobs``."""

    def __init__(self, size=3, rounds=2):
        super().__init__()
        self.size = size
        self.rounds = rounds
        self.round = 0
        self.pending = []
        self.running = 0
        self.credit = 0
        self.sent = 0

    def handle_initialize(self, data):
        self.pending = self._next_round()

    def _next_round(self):
        self.round += 1
        return [{"x": (self.round * 10 + i) / 100} for i in range(self.size)]

    def handle_request_trial_jobs(self, data):
        self.credit += data
        self._flush()

    def _flush(self):
        while self.credit and self.pending:
            job = {"parameter_id": self.sent, "parameters": self.pending.pop(0)}
            job["parameters"]["round"] = self.round
            self.send(CommandType.NewTrialJob, json.dumps(job))
            self.sent += 1
            self.credit -= 1
            self.running += 1
        if self.credit and not self.pending and not self.running and self.round == self.rounds:
            self.send(CommandType.NoMoreTrialJobs, "")

    def handle_report_metric_data(self, data):
        pass

    def handle_trial_end(self, data):
        self.running -= 1
        if not self.running and not self.pending and self.round < self.rounds:
            self.pending = self._next_round()
        self._flush()
