"""``StoreSource``: an experiment read from the store and controlled through it, for the
experiments an ``Experiment`` runs, resumes or views itself.

Reads build NNI's JSON with the NNI routes' own shape functions
(``hyperlab.server.nni_shapes``), so they answer what ``Experiment.connect(port)`` reads from
the REST API. Controls are control requests appended to the store; the driver (in this process,
a detached one, or another machine's with PostgreSQL) applies them within ~100 ms.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from hyperlab._steering import check_request, not_running, send_and_wait
from hyperlab.compat.nni.experiment._source import Json, trial_number
from hyperlab.errors import ConfigError, ExperimentNotFound, TrialNotFound
from hyperlab.server.nni_shapes import (
    experiment_info,
    exported_results,
    metric_records,
    nni_status,
    profile,
    trial_job,
)
from hyperlab.store import ControlKind, ControlRequest, ExperimentRecord, StopExperiment, Store
from hyperlab.trial import Trial

__all__ = ["StoreSource"]


class StoreSource:
    """The experiment ``experiment_id`` of ``store``.

    Attributes:
        experiment_id: The experiment.
        portal_url: Where this process serves its web portal (``http://host:port``), if it
            does: the experiment's ``webuiUrl`` in ``experiments_info``.
    """

    def __init__(self, store: Store, experiment_id: str, *, portal_url: str | None = None) -> None:
        self.store = store
        self.experiment_id = experiment_id
        self.portal_url = portal_url

    def _record(self) -> ExperimentRecord:
        return self.store.get_experiment(self.experiment_id)

    def _trials(self, *, reports: bool) -> list[Trial]:
        return self.store.get_trials(self.experiment_id, reports=reports)

    def status(self) -> str:
        record = self._record()
        if record.driver_lost:  # NNI has no such state: its manager would be gone
            return "ERROR"
        pending = () if record.status.is_finished() else self.store.pending_controls(record.id)
        if any(control.kind is ControlKind.STOP for control in pending):
            return "STOPPING"
        return str(record.status)

    def profile(self) -> Json:
        record = self._record()
        folder = self.store.experiment_folder(record)
        shape = profile(record, self._trials(reports=False), folder)
        return shape.model_dump(mode="json", exclude_none=True)

    def trial_jobs(self) -> list[Json]:
        record = self._record()
        folder = self.store.experiment_folder(record)
        return [
            trial_job(trial, record.options.first_metric, folder).model_dump(
                mode="json", exclude_none=True
            )
            for trial in self._trials(reports=False)
        ]

    def _trial(self, trial_job_id: str) -> Trial:
        number = trial_number(self.experiment_id, trial_job_id)
        try:
            return self.store.get_trial(self.experiment_id, number)
        except TrialNotFound:
            raise TrialNotFound(
                f"no trial job {trial_job_id!r} in experiment {self.experiment_id!r} (no trial "
                f"{number})"
            ) from None

    def trial_job(self, trial_job_id: str) -> Json:
        record = self._record()
        trial = self._trial(trial_job_id)
        folder = self.store.experiment_folder(record)
        shape = trial_job(trial, record.options.first_metric, folder)
        return shape.model_dump(mode="json", exclude_none=True)

    def job_statistics(self) -> list[Json]:
        counts: dict[str, int] = {}
        for trial in self._trials(reports=False):
            status = str(nni_status(trial.status))
            counts[status] = counts.get(status, 0) + 1
        return [{"trialJobStatus": s, "trialJobNumber": n} for s, n in counts.items()]

    def metric_data(self, trial_job_id: str | None) -> list[Json]:
        metric = self._record().options.first_metric
        if trial_job_id is not None:
            trials = [self._trial(trial_job_id)]
        else:
            trials = self._trials(reports=True)
        records = [item for trial in trials for item in metric_records(trial, metric)]
        return [
            item.model_dump(mode="json")
            for item in sorted(records, key=lambda item: item.timestamp)
        ]

    def export_data(self) -> list[Json]:
        metric = self._record().options.first_metric
        trials = self._trials(reports=False)
        return [r.model_dump(mode="json") for t in trials for r in exported_results(t, metric)]

    def experiments_info(self) -> list[Json]:
        entries = []
        for summary in self.store.list_experiments():
            try:
                record = self.store.get_experiment(summary.id)
            except ExperimentNotFound:  # deleted since it was listed
                continue
            url = self._served_at(record)
            folder = self.store.experiment_folder(record)
            port = None if url is None else urlsplit(url).port
            entries.append(experiment_info(record, folder, url=url, port=port).model_dump())
        return entries

    def _served_at(self, record: ExperimentRecord) -> str | None:
        if record.id == self.experiment_id and self.portal_url is not None:
            return self.portal_url
        return record.server_url if record.driver_alive() else None

    def control(self, request: ControlRequest) -> None:
        try:
            record = self._record()
        except ExperimentNotFound:  # this object's config was never run
            raise ConfigError(
                f"experiment {self.experiment_id} is not running (not started: store "
                f"{self.store.masked_url} has no experiment with this id); only a running "
                "experiment can be steered: start it with run() or start() first"
            ) from None
        if not record.driver_alive():
            resume = f"Experiment(None, id={record.id!r}).resume()"
            raise not_running(record, self.store, also=resume)
        check_request(record, request)
        send_and_wait(self.store, record.id, request)

    def request_stop(self) -> None:
        self.store.send_control(self.experiment_id, StopExperiment())
