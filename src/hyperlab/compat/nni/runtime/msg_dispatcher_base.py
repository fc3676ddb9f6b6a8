"""NNI's ``nni.runtime.msg_dispatcher_base``: the base class of a user's own NNI advisor.

```python
from nni.runtime.msg_dispatcher_base import MsgDispatcherBase
from nni.runtime.tuner_command_channel import CommandType

class MyAdvisor(MsgDispatcherBase):
    def handle_initialize(self, data): ...            # the search space, NNI's JSON
    def handle_request_trial_jobs(self, data): ...    # data trials wanted: send NewTrialJob
    def handle_report_metric_data(self, data): ...
    def handle_trial_end(self, data): ...
```

hyperlab runs such a class through ``hyperlab.compat.nni.advisor.CustomAdvisor`` (see its
docstring for the calls and the messages).
"""

from __future__ import annotations

from typing import Any

from ..recoverable import Recoverable
from . import protocol
from .tuner_command_channel import CommandType

__all__ = ["MsgDispatcherBase"]


class MsgDispatcherBase(Recoverable):
    """An NNI advisor: answers NNI's dispatcher commands with its ``handle_*`` methods and
    sends trials (``CommandType.NewTrialJob``) and the end of the search
    (``CommandType.NoMoreTrialJobs``) with ``send``.

    Args:
        command_channel_url: Accepted for NNI's signature; hyperlab has no channel.
    """

    def __init__(self, command_channel_url: str | None = None) -> None:
        super().__init__()
        self.stopping = False

    def send(self, command: CommandType, data: Any) -> None:
        """Send ``command`` with ``data`` (NNI's JSON text) to the experiment."""
        protocol.send(command, data)

    def report_error(self, error: str) -> None:
        """Report an error of the advisor: the experiment fails with it."""
        self.send(CommandType.Error, error)

    def handle_ping(self, data: Any) -> None:
        """A keep-alive; nothing to do."""

    def handle_initialize(self, data: dict[str, Any]) -> None:
        """The search space (NNI's JSON), once, before any other call."""
        raise NotImplementedError("handle_initialize not implemented")

    def handle_request_trial_jobs(self, data: int) -> None:
        """``data`` trials are wanted: ``send(CommandType.NewTrialJob, json)`` for each, the
        JSON being ``{"parameter_id": ..., "parameters": {...}, "parameter_source": ...}``."""
        raise NotImplementedError("handle_request_trial_jobs not implemented")

    def handle_update_search_space(self, data: dict[str, Any]) -> None:
        """A new search space (NNI's JSON)."""
        raise NotImplementedError("handle_update_search_space not implemented")

    def handle_import_data(self, data: list[dict[str, Any]]) -> None:
        """Results from elsewhere: ``[{"parameter": {...}, "value": ...}, ...]``."""
        raise NotImplementedError("handle_import_data not implemented")

    def handle_add_customized_trial(self, data: Any) -> None:
        """A trial added by hand (NNI's experimental API)."""
        raise NotImplementedError("handle_add_customized_trial not implemented")

    def handle_report_metric_data(self, data: dict[str, Any]) -> None:
        """A result: ``parameter_id``, ``trial_job_id``, ``type`` (``PERIODICAL`` or
        ``FINAL``), ``sequence`` and ``value`` (the reported value as JSON text)."""
        raise NotImplementedError("handle_report_metric_data not implemented")

    def handle_trial_end(self, data: dict[str, Any]) -> None:
        """A trial ended: ``trial_job_id``, ``event`` (``SUCCEEDED``, ``FAILED``,
        ``EARLY_STOPPED``, ``USER_CANCELED``, ``SYS_CANCELED``) and ``hyper_params`` (the JSON
        text its ``NewTrialJob`` sent)."""
        raise NotImplementedError("handle_trial_end not implemented")
