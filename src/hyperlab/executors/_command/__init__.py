"""The ``command`` executor: each trial a shell command in its own process group."""

from hyperlab.executors._command._executor import CommandExecutor, CommandTrial

__all__ = ["CommandExecutor", "CommandTrial"]
