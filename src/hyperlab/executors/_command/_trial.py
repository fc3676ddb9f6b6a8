"""What a ``command`` trial runs: a shell command, its working directory, its extra variables."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from hyperlab.errors import ConfigError

__all__ = ["CommandTrial"]


@dataclass(frozen=True, slots=True)
class CommandTrial:
    """What a ``command`` trial runs: a shell command, where, and with which extra variables.

    Args:
        command: Run with ``/bin/sh -c`` once per trial, e.g. ``"python train.py --epochs 10"``.
        code_dir: The command's working directory (made absolute); None for the current one.
        env: Extra environment variables for the command (hyperlab's own take precedence).

    Raises:
        ConfigError: ``command`` is empty, or ``env`` is not a mapping of strings to strings.

    Example:
        >>> trial = CommandTrial("python train.py", code_dir="~/project")
        >>> hyperlab.run(trial, space, executor="command", concurrency=4, max_trials=50)
    """

    command: str
    code_dir: str | None = None
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.command, str) or not self.command.strip():
            raise ConfigError(
                f"trial.command: expected a non-empty shell command, got {self.command!r}"
            )
        if self.code_dir is not None:
            if not isinstance(self.code_dir, (str, os.PathLike)):
                raise ConfigError(f"trial.code_dir: expected a folder path, got {self.code_dir!r}")
            folder = os.path.abspath(os.path.expanduser(os.fspath(self.code_dir)))
            object.__setattr__(self, "code_dir", folder)
        env = self.env if self.env is not None else {}
        if not hasattr(env, "items") or not all(
            isinstance(k, str) and k and "=" not in k and isinstance(v, str) for k, v in env.items()
        ):
            raise ConfigError(
                f"trial.env: expected a mapping of variable names to strings, got {env!r}"
            )
        object.__setattr__(self, "env", dict(env))
