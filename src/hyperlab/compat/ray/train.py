"""What Ray 2.x Tune examples import from ``ray.train``: the same objects as
``hyperlab.compat.ray.tune``'s."""

from hyperlab.compat.ray.tune._checkpoint import Checkpoint
from hyperlab.compat.ray.tune._config import CheckpointConfig, FailureConfig, RunConfig
from hyperlab.compat.ray.tune._session import get_checkpoint, get_context, report

__all__ = [
    "Checkpoint",
    "CheckpointConfig",
    "FailureConfig",
    "RunConfig",
    "get_checkpoint",
    "get_context",
    "report",
]
