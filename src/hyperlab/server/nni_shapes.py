"""hyperlab's records in NNI 3.0's shapes: trials as ``TrialJobInfo``, results as
``MetricDataRecord``, the experiment as ``ExperimentProfile`` and as an entry of NNI's
experiment manifest. Pure functions: no requests, no store. Public because two sides speak
these shapes: the server's NNI routes, and ``hyperlab.compat.nni``'s ``Experiment`` reading a
store directly (it cannot sit under ``compat``, which the server is below).

NNI's quirks kept here, as its manager and ``nni.experiment`` client have them:

- times are milliseconds since the epoch, except ``execDuration`` (seconds);
- ``hyperParameters`` is a list of JSON texts, one per phase of the trial (a multi-phase
  trial's later phases follow its own, phase 0), each an object with exactly ``parameter_id``,
  ``parameter_source`` (``"algorithm"``, or ``"customized"`` for a trial added by hand),
  ``parameters`` and ``parameter_index`` (NNI's client builds ``TrialHyperParameters(**it)``;
  NNI's manager also writes a phase's ``trial_job_id``, which that client would refuse);
- a trial's ``parameter_id`` is its number; a later phase's is the number its parameters were
  proposed under (``Phase.parameter_id``), also the ``parameterId`` of its FINAL record and of
  the intermediate results reported after the trial asked for it (NNI's trial stamps each
  result with its latest parameters' id);
- a metric's ``data`` is JSON encoded twice (NNI stores the trial's JSON text as JSON), its
  ``parameterId`` is a string, and ``export-data``'s ``value`` is encoded once;
- NNI has no PAUSED status: a paused trial is WAITING.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any, Literal

from hyperlab.server._nni_models import (
    NniExperimentInfo,
    NniExperimentProfile,
    NniExportedResult,
    NniMetricData,
    NniTrialJob,
)
from hyperlab.store import ExperimentRecord, Imported
from hyperlab.trial import CUSTOM_TRIAL, Mode, Phase, Report, Trial, TrialStatus

__all__ = [
    "MetricType",
    "experiment_info",
    "exported_result",
    "exported_results",
    "imported_text",
    "metric_records",
    "nni_params",
    "nni_status",
    "nni_value",
    "profile",
    "trial_job",
]

MetricType = Literal["PERIODICAL", "FINAL"]


def nni_status(status: TrialStatus) -> TrialStatus:
    """A trial status as NNI knows them: PAUSED (resumed later by a scheduler) is WAITING."""
    return TrialStatus.WAITING if status is TrialStatus.PAUSED else status


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)


def nni_value(metrics: dict[str, Any], metric: str | None) -> Any:
    """A result as NNI's trials report it: a number, or a dict whose ``default`` is the objective.

    Args:
        metrics: The metrics hyperlab stored.
        metric: The experiment's objective metric, if one was configured.
    """
    if len(metrics) == 1:
        return next(iter(metrics.values()))
    key = metric if metric in metrics else "default"
    if key not in metrics:
        return metrics
    return {"default": metrics[key], **{k: v for k, v in metrics.items() if k != key}}


def _record(
    trial: Trial,
    kind: MetricType,
    seq: int,
    at: float,
    value: Any,
    parameter_id: int | None = None,
) -> NniMetricData:
    return NniMetricData(
        timestamp=_ms(at) or 0,
        trialJobId=trial.id,
        parameterId=str(trial.number if parameter_id is None else parameter_id),
        type=kind,
        sequence=seq,
        data=json.dumps(json.dumps(value)),  # NNI stores the trial's JSON text as JSON
    )


def metric_records(
    trial: Trial, metric: str | None, kind: MetricType | None = None
) -> list[NniMetricData]:
    """The trial's intermediate reports (of its latest attempt) and final results (its own,
    then each of its later phases' that reported one), NNI-style."""
    records = []
    if kind in (None, "PERIODICAL"):
        records += [
            _record(
                trial,
                "PERIODICAL",
                r.step,
                r.time,
                nni_value(r.metrics, metric),
                _reporting_phase(trial, r),
            )
            for r in trial.reports
            if r.attempt == trial.attempt
        ]
    if kind in (None, "FINAL") and trial.status is TrialStatus.SUCCEEDED:
        at = trial.finished_at or trial.created_at or 0.0
        records.append(_record(trial, "FINAL", 0, at, nni_value(trial.metrics, metric)))
    if kind in (None, "FINAL"):
        records += [
            _record(
                trial,
                "FINAL",
                0,
                phase.finished_at or phase.created_at or 0.0,
                nni_value(phase.metrics, metric),
                phase.parameter_id,
            )
            for phase in trial.phases
            if phase.status is TrialStatus.SUCCEEDED  # as the trial's own FINAL record
        ]
    return records


def _reporting_phase(trial: Trial, report: Report) -> int | None:
    """The ``parameter_id`` an intermediate report was made under, as NNI's trial stamps it:
    that of the last phase its attempt asked for before reporting; None for phase 0."""
    asked = [
        p
        for p in trial.phases
        if p.attempt == report.attempt and p.created_at is not None and p.created_at <= report.time
    ]
    return max(asked, key=lambda p: p.index).parameter_id if asked else None


def _hyper_parameters(trial: Trial) -> list[str]:
    """NNI's ``hyperParameters``: the JSON text of each phase's parameter record."""
    source = "customized" if trial.source == CUSTOM_TRIAL else "algorithm"
    first = {
        "parameter_id": trial.number,
        "parameter_source": source,
        "parameters": trial.params,
        "parameter_index": 0,
    }
    later = [
        {
            "parameter_id": phase.parameter_id,
            "parameter_source": "algorithm",
            "parameters": phase.params,
            "parameter_index": phase.index,
        }
        for phase in trial.phases
    ]
    return [json.dumps(hyper) for hyper in (first, *later)]


def trial_job(trial: Trial, metric: str | None, folder: Path) -> NniTrialJob:
    """The trial as NNI's ``TrialJobInfo``; ``folder`` is the experiment's folder."""
    log_path = f"file://localhost:{folder}/trials/{trial.number}"
    failed = trial.status is TrialStatus.FAILED
    start = trial.started_at or trial.created_at or trial.finished_at
    return NniTrialJob(
        trialJobId=trial.id,
        sequenceId=trial.number,
        status=nni_status(trial.status),
        startTime=_ms(start) or 0,  # NNI's client requires one: a waiting trial's is its creation
        endTime=_ms(trial.finished_at) if trial.status.is_finished() else None,
        hyperParameters=_hyper_parameters(trial),
        logPath=log_path,
        finalMetricData=metric_records(trial, metric, "FINAL") or None,
        stderrPath=f"{log_path}/stderr.log" if failed else None,
    )


def exported_result(trial: Trial, metric: str | None) -> NniExportedResult | None:
    """The trial (its phase 0) as an entry of NNI's ``export-data``, or None unless it
    succeeded; ``exported_results`` adds its later phases."""
    if trial.status is not TrialStatus.SUCCEEDED:
        return None
    value = json.dumps(nni_value(trial.metrics, metric))
    return NniExportedResult(parameter=trial.params, value=value, trialJobId=trial.id)


def exported_results(trial: Trial, metric: str | None) -> list[NniExportedResult]:
    """The entries of NNI's ``export-data`` for the trial: one per phase that succeeded, its
    own first (NNI pairs each phase's parameters with its final result)."""
    own = exported_result(trial, metric)
    later = [p for p in trial.phases if p.status is TrialStatus.SUCCEEDED]
    return [*([] if own is None else [own]), *(_exported_phase(trial, p, metric) for p in later)]


def _exported_phase(trial: Trial, phase: Phase, metric: str | None) -> NniExportedResult:
    value = json.dumps(nni_value(phase.metrics, metric))
    return NniExportedResult(parameter=phase.params, value=value, trialJobId=trial.id)


def imported_text(result: Imported) -> str:
    """An imported result as NNI's ``imported-data`` keeps each import: the JSON text of a list
    of ``{"parameter", "value"}`` records (here of one record)."""
    value: Any = result.value
    if result.metrics:
        value = {"default": result.value, **result.metrics}
    return json.dumps([{"parameter": result.params, "value": value}])


def _duration(seconds: Any) -> str | None:
    return None if seconds is None else f"{float(seconds):g}s"


def nni_params(record: ExperimentRecord) -> dict[str, Any]:
    """The experiment's config in NNI's v2 field names, where they map."""
    options = record.options
    mode = "maximize" if options.first_mode is Mode.MAX else "minimize"
    trial = {}
    if (command := record.trial_command) is not None:
        trial = {"trialCommand": command[0], "trialCodeDirectory": command[1]}
    params: dict[str, Any] = {
        "experimentName": record.name,
        "experimentType": "hpo",
        "searchSpace": record.space,
        "trialConcurrency": options.concurrency,
        "maxTrialNumber": options.max_trials,
        "maxExperimentDuration": _duration(options.max_duration),
        "maxTrialDuration": _duration(options.trial_timeout),
        "trialGpuNumber": options.gpus.per_trial if options.gpus else 0,
        "experimentWorkingDirectory": options.working_dir,
        "tuner": {
            "name": options.tuner,
            "classArgs": {**options.tuner_args, "optimize_mode": mode},
        },
        **trial,
        "trainingService": {"platform": "local", **trial},
    }
    if options.assessor is not None:
        args = {**options.assessor_args, "optimize_mode": mode}
        params["assessor"] = {"name": options.assessor, "classArgs": args}
    return {key: value for key, value in params.items() if value is not None}


def _exec_duration(record: ExperimentRecord, now: float) -> int:
    """Seconds some driver ran the experiment (summed over resumes), up to now."""
    seconds = record.elapsed
    if record.heartbeat_at is not None and record.driver_alive(now):
        seconds += max(0.0, now - record.heartbeat_at)
    return int(seconds)


def profile(record: ExperimentRecord, trials: list[Trial], folder: Path) -> NniExperimentProfile:
    """The experiment as NNI's ``ExperimentProfile``; ``folder`` is the experiment's folder."""
    end = record.finished_at if record.status.is_finished() else None
    return NniExperimentProfile(
        id=record.id,
        params={"experimentWorkingDirectory": str(folder.parent), **nni_params(record)},
        execDuration=_exec_duration(record, time.time()),
        logDir=str(folder),
        startTime=_ms(record.started_at or record.created_at),
        endTime=_ms(end),
        nextSequenceId=max((t.number for t in trials), default=-1) + 1,
        revision=0,
    )


def experiment_info(
    record: ExperimentRecord, folder: Path, *, url: str | None, port: int | None
) -> NniExperimentInfo:
    """The experiment as an entry of NNI's experiment manifest (``experiments-info``).

    Args:
        record: The experiment.
        folder: Its folder.
        url: Where its API is served, if known.
        port: That address's port.
    """
    # NNI's client stops an experiment by waiting for this pid to exit: only a live driver's
    # pid, and only one of this machine (a store can be shared by several)
    here = record.driver_host == socket.gethostname()
    pid = record.driver_pid if here and record.driver_alive() else None
    lost = record.driver_lost  # NNI marks an experiment whose manager died STOPPED, no port
    end = _ms(record.finished_at) if record.status.is_finished() else None
    return NniExperimentInfo(
        id=record.id,
        experimentName=record.name,
        port=None if lost else port,
        status="STOPPED" if lost else str(record.status),
        platform="local",
        startTime=_ms(record.started_at or record.created_at) or 0,
        endTime="N/A" if end is None else end,
        tag=[],
        pid=pid,
        webuiUrl=[url] if url and not lost else [],
        logDir=str(folder.parent),
        prefixUrl=None,
    )
