"""NNI's ``nni.runtime.tuner_command_channel``: the commands between NNI's manager and an
advisor (``CommandType``)."""

from __future__ import annotations

from enum import Enum

__all__ = ["CommandType"]


class CommandType(Enum):
    """The command codes of NNI's dispatcher protocol: the first group goes to the advisor
    (its ``handle_*`` methods), the second is what the advisor ``send``\\ s."""

    Initialize = "IN"
    RequestTrialJobs = "GE"
    ReportMetricData = "ME"
    UpdateSearchSpace = "SS"
    ImportData = "FD"
    AddCustomizedTrialJob = "AD"
    TrialEnd = "EN"
    Terminate = "TE"
    Ping = "PI"

    Initialized = "ID"
    NewTrialJob = "TR"
    SendTrialJobParameter = "SP"
    NoMoreTrialJobs = "NO"
    KillTrialJob = "KI"
    Error = "ER"
