"""The executor contract, on the real cluster."""

from __future__ import annotations

from typing import Any

import pytest

from hyperlab.executors import Executor, create_executor
from hyperlab.testing import ExecutorContract
from hyperlab.testing.behaviours import behave
from hyperlab.testing.executors import ExecutorFactory, behaviour_command

pytest.importorskip("ray", reason="the ray extra is not installed")


class TestRayFunctions(ExecutorContract):
    pooled_processes = ("ray::IDLE",)  # the cluster is this process's child: its idle workers

    @pytest.fixture
    def make_executor(self, cluster: Any) -> ExecutorFactory:
        def make(**options: Any) -> Executor:
            return create_executor("ray", behave, resources={"cpu": 0.5}, **options)

        return make


class TestRayCommands(ExecutorContract):
    pooled_processes = ("ray::IDLE",)

    @pytest.fixture
    def make_executor(self, cluster: Any) -> ExecutorFactory:
        def make(**options: Any) -> Executor:
            return create_executor("ray", behaviour_command(), resources={"cpu": 0.5}, **options)

        return make
