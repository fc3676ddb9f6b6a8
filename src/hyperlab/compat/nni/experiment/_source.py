"""Where an ``Experiment`` reads its experiment and sends its controls: the store
(``StoreSource``: experiments this process runs, resumes or views) or the REST API at a port
(``RestSource``: ``Experiment.connect(port)``).

Both answer in the JSON of NNI's REST API (camelCase, milliseconds: see
``hyperlab.server.nni_shapes``), which ``data.py`` turns into NNI's records, and both carry
controls as hyperlab's typed control requests, which the experiment's driver applies: neither
ever touches a driver object.
"""

from __future__ import annotations

from typing import Any, Protocol

from hyperlab.errors import TrialNotFound
from hyperlab.store import ControlRequest

__all__ = ["FINISHED", "Json", "Source", "trial_number"]

Json = dict[str, Any]
FINISHED = ("DONE", "STOPPED", "ERROR")
"""NNI's statuses of an experiment that has ended."""


class Source(Protocol):
    """Reads and controls of one experiment, in NNI's shapes."""

    experiment_id: str

    def status(self) -> str:
        """NNI's status: INITIALIZED, RUNNING, NO_MORE_TRIAL, STOPPING, DONE, STOPPED or
        ERROR (also for an experiment whose driver was lost)."""
        ...

    def profile(self) -> Json:
        """NNI's ``ExperimentProfile``."""
        ...

    def trial_jobs(self) -> list[Json]:
        """NNI's ``TrialJobInfo`` of every trial."""
        ...

    def trial_job(self, trial_job_id: str) -> Json:
        """NNI's ``TrialJobInfo`` of one trial; ``TrialNotFound`` naming the id if none."""
        ...

    def job_statistics(self) -> list[Json]:
        """``[{trialJobStatus, trialJobNumber}]``."""
        ...

    def metric_data(self, trial_job_id: str | None) -> list[Json]:
        """NNI's ``MetricDataRecord`` of every trial, or of one."""
        ...

    def export_data(self) -> list[Json]:
        """``[{parameter, value, trialJobId}]`` of the succeeded trials."""
        ...

    def experiments_info(self) -> list[Json]:
        """NNI's experiment manifest: every experiment of the store."""
        ...

    def control(self, request: ControlRequest) -> None:
        """Have the experiment's driver apply ``request``; return once it did.

        Raises:
            ConfigError: the experiment is not running, or its driver refused the request
                (saying why).
        """
        ...

    def request_stop(self) -> None:
        """Ask the experiment's driver to stop (it ends STOPPED); returns at once."""
        ...


def trial_number(experiment_id: str, trial_job_id: str) -> int:
    """The number of the trial whose id is ``trial_job_id`` (``<experiment id>-<number>``).

    Raises:
        TrialNotFound: naming the id, when it cannot be a trial of the experiment.
    """
    prefix, _, number = str(trial_job_id).rpartition("-")
    if prefix != experiment_id or not number.isdigit() or number != str(int(number)):
        raise TrialNotFound(
            f"no trial job {trial_job_id!r} in experiment {experiment_id!r}; its trial job ids "
            f"look like '{experiment_id}-<number>'"
        )
    return int(number)
