"""A user's own NNI advisor (``class MyAdvisor(MsgDispatcherBase)``) run as hyperlab's tuner.

NNI's YAML names such a class under ``advisor`` with ``className``, ``codeDirectory`` and
``classArgs``; hyperlab's config translation turns that into
``tuner: hyperlab.compat.nni.advisor:CustomAdvisor`` with ``tuner_args: {class_name,
code_directory, class_args}``, and ``hyperlab.run(tuner=MyAdvisor, tuner_args={...})`` does
the same for a class given directly.

The adapter talks to the class as NNI's manager does, with NNI's messages:

- ``handle_initialize(space)`` (NNI's JSON) before any other call;
- when hyperlab wants a trial and no parameters the advisor sent wait for one,
  ``handle_request_trial_jobs(1)``; each ``send(CommandType.NewTrialJob, json)`` (or
  ``self.send``, as NNI 3.0's advisors do) queues ``{"parameter_id", "parameters",
  "parameter_source"}``, whose ``parameters`` become the next trial's;
  ``CommandType.NoMoreTrialJobs`` ends the search once the queue is empty. An advisor that
  sent nothing and did not say it has no more (Hyperband waiting for a round to end) is
  asked again after the next trial ends;
- for each intermediate result (``hyperlab.report``, NNI's ``report_intermediate_result``),
  as it comes: ``handle_report_metric_data({"parameter_id", "trial_job_id", "type":
  "PERIODICAL", "sequence", "value"})``, ``sequence`` counting the run's results from 0 (as
  NNI's trial does) and ``value`` JSON text as for the final result;
- when a trial ends: ``handle_report_metric_data`` for its final result (when it
  succeeded): ``{"parameter_id", "trial_job_id", "type": "FINAL", "sequence": 0, "value"}``,
  ``value`` being JSON text as NNI passes it (the number, or the dict the trial reported);
  then ``handle_trial_end({"trial_job_id", "event", "hyper_params", "parameter_id"})``,
  ``hyper_params`` being the JSON text the advisor sent for the trial and ``event`` its status
  (``SUCCEEDED``, ``FAILED``, ``EARLY_STOPPED``, ``USER_CANCELED``, ``SYS_CANCELED``);
- imported results go to ``handle_import_data([{"parameter", "value"}])``.

The adapter is also the experiment's assessor (as BOHB is), so no other assessor goes with it
(NNI 3.0 ignores one next to an advisor, logging an error; hyperlab refuses it).
``CommandType.KillTrialJob`` (with a trial job id) stops that trial at its next intermediate
result, which is answered STOP: the trial ends EARLY_STOPPED, as a trial an assessor stopped
does (NNI's manager cancels it, ``USER_CANCELED``), and the advisor gets its
``handle_trial_end`` with that event. A kill of a trial that has already ended is ignored (as
NNI's manager does); a trial that reports nothing more runs to its end.
``SendTrialJobParameter`` (multi-phase trials) is refused.

A resumed experiment builds a fresh instance and feeds it the history: ``load_checkpoint()``,
``handle_initialize(space)``, then each ended trial in number order as above (its
intermediate results, then its final result and its end), its ``hyper_params`` rebuilt as
``{"parameter_id": <trial number>, "parameter_source": "resumed", "parameters": ...}`` (the
advisor's own ids are not stored).

Trial job ids are hyperlab's trial ids (``<experiment>-<number>``).
"""

from __future__ import annotations

import copy
import json
from collections import deque
from typing import Any

from hyperlab.assessors.base import Assessor, Decision, Verdicts
from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.trial import Mode, Report, Trial, TrialStatus
from hyperlab.tuners.base import Tuner

from .custom import as_reported, build, load_class
from .runtime.protocol import capture

__all__ = ["CustomAdvisor", "is_nni_advisor"]


def is_nni_advisor(value: object) -> bool:
    """Whether ``value`` (a class or an instance) is an NNI advisor: it has NNI's dispatcher
    methods (``handle_request_trial_jobs``, ``handle_trial_end``) and is no hyperlab
    ``Tuner``."""
    cls = value if isinstance(value, type) else type(value)
    handles = hasattr(cls, "handle_request_trial_jobs") and hasattr(cls, "handle_trial_end")
    return not issubclass(cls, Tuner) and handles


def _command(command: Any) -> str:
    """NNI's two-letter code of ``command`` (a ``CommandType``, this shim's or NNI's, or the
    code itself)."""
    return str(getattr(command, "value", command))


class CustomAdvisor(Tuner, Assessor):
    """A user's NNI advisor class, talked to in NNI's messages (see the module's docstring):
    the experiment's tuner, and its assessor (intermediate results, kills).

    Args:
        space: The search space, given to ``handle_initialize`` as NNI's JSON.
        mode: Which way values are better (the class learns it from its own
            ``optimize_mode`` argument, as in NNI).
        seed: Unused by the class (NNI gives advisors none).
        class_name: ``module.Class``.
        code_directory: The folder of its module (None: already importable).
        class_args: The class's constructor arguments.
    """

    silent_trials_expected = True  # trials need not report intermediate results to it
    space: SearchSpace  # the tuner's, never None

    def __init__(
        self,
        space: SearchSpace,
        *,
        mode: Mode | str = Mode.MIN,
        seed: int | None = None,
        class_name: str,
        code_directory: str | None = None,
        class_args: dict[str, Any] | None = None,
    ) -> None:
        Tuner.__init__(self, space, mode=mode, seed=seed)
        Assessor.__init__(self, mode=mode, seed=self.seed, space=space)
        cls = load_class("advisor", class_name, code_directory)
        if not is_nni_advisor(cls):
            raise ConfigError(
                f"advisor.class_name: {class_name!r} is no NNI advisor (a subclass of "
                "nni.runtime.msg_dispatcher_base.MsgDispatcherBase with "
                "handle_request_trial_jobs and handle_trial_end)"
            )
        self.algorithm = build("advisor", cls, class_args)
        self._queue: deque[tuple[dict[str, Any], str]] = deque()  # sent, not yet a trial's
        self._given: dict[int, tuple[dict[str, Any], str]] = {}  # trial number -> what it got
        self._ended: set[str] = set()  # the ids of the trials that ended
        self._killed: set[str] = set()  # the ids of the trials it asked to kill
        self._sequences: dict[int, tuple[int, int]] = {}  # number -> (attempt, next sequence)
        self.verdicts = Verdicts()
        self._no_more = False
        self._started = False

    def _call(self, method: str, data: Any) -> None:
        """``algorithm.<method>(data)``, with what it sends received here."""
        with capture(self._received):
            getattr(self.algorithm, method)(data)

    def _received(self, command: Any, data: Any) -> None:
        """A command the advisor sent."""
        code = _command(command)
        name = type(self.algorithm).__name__
        if code == "TR":
            text = data if isinstance(data, str) else json.dumps(data)
            job = json.loads(text)
            if not isinstance(job, dict) or not isinstance(job.get("parameters"), dict):
                raise TypeError(
                    f"{name} sent NewTrialJob {text!r}; expected JSON "
                    '{"parameter_id": ..., "parameters": {...}}'
                )
            self._queue.append((job, text))
        elif code == "NO":
            self._no_more = True
        elif code == "ER":
            raise RuntimeError(f"{name} reported an error: {data}")
        elif code == "KI":
            trial_job_id = json.loads(data) if isinstance(data, str) else data
            if trial_job_id not in self._ended:
                self._killed.add(str(trial_job_id))
        elif code == "SP":
            raise NotImplementedError(
                f"{name} sent SendTrialJobParameter: multi-phase trials are not supported "
                "with a custom advisor"
            )
        elif code != "ID":
            raise ValueError(f"{name} sent an unknown command {command!r}")

    def _start(self, *, resumed: bool) -> None:
        """Before the first call: ``load_checkpoint()`` when the history is fed first (a
        resumed experiment), then ``handle_initialize(space)``."""
        if self._started:
            return
        self._started = True
        if resumed:
            self.algorithm.load_checkpoint()
        self._call("handle_initialize", self.space.to_nni())

    def suggest(self, number: int) -> dict[str, Any] | None:
        """The parameters of the next ``NewTrialJob`` the advisor sent, asking it with
        ``handle_request_trial_jobs(1)`` when none waits; None when it sent none."""
        self._start(resumed=False)
        if not self._queue and not self._no_more:
            self._call("handle_request_trial_jobs", 1)
        if not self._queue:
            return None
        job, text = self._queue.popleft()
        self._given[number] = (job, text)
        return copy.deepcopy(job["parameters"])

    def waits(self) -> bool:
        """True until the advisor sent ``NoMoreTrialJobs``: it may send trials once a running
        one ends."""
        return not self._no_more

    def runs_out(self) -> bool:
        """An advisor ends the search by itself (``NoMoreTrialJobs``)."""
        return True

    def observe(self, trial: Trial) -> None:
        """``handle_import_data`` for an imported result; else the trial's final result
        (``handle_report_metric_data``) and its end (``handle_trial_end``), as NNI's manager
        sends them; for a trial of the history, its intermediate results first."""
        self._start(resumed=True)
        if trial.number < 0:  # an imported result
            self._call(
                "handle_import_data",
                [{"parameter": trial.params, "value": as_reported(trial.metrics)}],
            )
            return
        if trial.status is TrialStatus.PAUSED:
            return
        self._ended.add(trial.id)  # a kill of it from here on is ignored
        job, text = self._given.pop(trial.number, (None, ""))
        if job is None:  # a trial of the experiment before it resumed
            job = {
                "parameter_id": trial.number,
                "parameter_source": "resumed",
                "parameters": trial.params,
            }
            text = json.dumps(job)
            if trial.number not in self._sequences:  # not run since: its stored reports
                for report in trial.reports:
                    self._periodical(trial, trial.number, report)
        base = {"parameter_id": job.get("parameter_id"), "trial_job_id": trial.id}
        self._sequences.pop(trial.number, None)
        if trial.status is TrialStatus.SUCCEEDED and trial.metrics:
            value = json.dumps(as_reported(trial.metrics))
            self._call(
                "handle_report_metric_data",
                {**base, "type": "FINAL", "sequence": 0, "value": value},
            )
        self._call(
            "handle_trial_end",
            {
                "trial_job_id": trial.id,
                "event": trial.status.value,
                "hyper_params": text,
                "parameter_id": job.get("parameter_id"),
            },
        )

    def requeued(self, trial: Trial) -> None:
        """On resume: nothing but the start (``load_checkpoint``, ``handle_initialize``)."""
        self._start(resumed=True)

    def _periodical(self, trial: Trial, parameter_id: Any, report: Report) -> None:
        """``handle_report_metric_data`` for ``report`` (PERIODICAL), numbered within its run."""
        attempt, sequence = self._sequences.get(trial.number, (report.attempt, 0))
        if attempt != report.attempt:  # a new run counts from 0, as NNI's trial does
            sequence = 0
        self._sequences[trial.number] = (report.attempt, sequence + 1)
        data = {"parameter_id": parameter_id, "trial_job_id": trial.id, "type": "PERIODICAL"}
        data |= {"sequence": sequence, "value": json.dumps(as_reported(report.metrics))}
        self._call("handle_report_metric_data", data)

    def on_start(self, trial: Trial, now: float) -> None:
        """A run of the trial starts: it is judged again."""
        self.verdicts.started(trial.number)

    def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
        """The intermediate result to the advisor (PERIODICAL); STOP once it asked to kill
        the trial, else CONTINUE. A replayed report of an ended trial went with its end."""
        if trial.id in self._ended:
            return Decision.CONTINUE
        known = self.verdicts.known(trial.number, report.attempt)
        if known is not None:
            return known
        self._start(resumed=False)
        job, _ = self._given.get(trial.number, (None, ""))
        parameter_id = trial.number if job is None else job.get("parameter_id")
        self._periodical(trial, parameter_id, report)
        if trial.id in self._killed:
            self._killed.discard(trial.id)
            return self.verdicts.stop(trial.number, report.attempt)
        return Decision.CONTINUE

    def on_end(self, trial: Trial, now: float) -> None:
        """A trial ended: its decisions are done with (the advisor heard of it in
        ``observe``)."""
        self.verdicts.ended(trial)
