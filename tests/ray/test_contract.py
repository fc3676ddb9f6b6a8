"""The executor contract, on the real cluster."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from hyperlab.executors import Executor, create_executor
from hyperlab.testing import ExecutorContract
from hyperlab.testing.behaviours import behave
from hyperlab.testing.executors import ExecutorFactory, behaviour_command

pytest.importorskip("ray", reason="the ray extra is not installed")


class TestRayFunctions(ExecutorContract):
    pooled_processes = ("ray::IDLE",)  # the cluster is this process's child: its idle workers
    starting_processes = ("ray/_private/workers/default_worker.py",)  # before they are IDLE

    @pytest.fixture
    def make_executor(self, cluster: Any) -> ExecutorFactory:
        def make(**options: Any) -> Executor:
            return create_executor("ray", behave, resources={"cpu": 0.5}, **options)

        return make

    @pytest.mark.parametrize(("becomes", "left"), [("ray::IDLE", False), ("ray::Other", True)])
    def test_a_worker_starting_after_close_is_judged_by_what_it_becomes(
        self, session: Callable[..., Any], becomes: str, left: bool
    ) -> None:
        s = session(concurrency=1)
        title = f"import os, sys, time; time.sleep(1); os.execv(sys.executable, [{becomes!r}])"
        starting = [sys.executable, "-c", title, "ray/_private/workers/default_worker.py"]
        with subprocess.Popen(starting, stdin=subprocess.PIPE) as worker:  # then waits on stdin
            try:
                if left:
                    with pytest.raises(AssertionError, match="still run after close"):
                        self._check_nothing_left(s, {worker.pid})
                else:
                    self._check_nothing_left(s, {worker.pid})
            finally:
                worker.kill()


class TestRayCommands(ExecutorContract):
    pooled_processes = ("ray::IDLE",)
    starting_processes = ("ray/_private/workers/default_worker.py",)

    @pytest.fixture
    def make_executor(self, cluster: Any) -> ExecutorFactory:
        def make(**options: Any) -> Executor:
            return create_executor("ray", behaviour_command(), resources={"cpu": 0.5}, **options)

        return make
