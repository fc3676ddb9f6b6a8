"""The experiment finds the dashboard server by import path (it sits above the experiment in
the layers): the paths must name the server's functions, and the server must have every
member the experiment's ``Serving`` protocol names, with the same parameters."""

from __future__ import annotations

import inspect

import pytest

pytest.importorskip("fastapi")

from hyperlab.config import import_path
from hyperlab.experiment._serving import CHECK_SERVING, SERVE, Serving
from hyperlab.server import BackgroundServer, check_serving, serve_in_background


def test_the_import_paths_name_the_servers_functions() -> None:
    assert import_path("port", SERVE) is serve_in_background
    assert import_path("port", CHECK_SERVING) is check_serving


@pytest.mark.parametrize("name", ["link", "printed_link", "stop"])
def test_the_server_has_each_method_serving_names(name: str) -> None:
    wanted = inspect.signature(getattr(Serving, name))
    got = inspect.signature(getattr(BackgroundServer, name))
    assert list(got.parameters) == list(wanted.parameters)
    assert [p.default for p in got.parameters.values()] == [
        p.default for p in wanted.parameters.values()
    ]


def test_the_server_sets_each_attribute_serving_names() -> None:
    source = inspect.getsource(BackgroundServer.__init__)
    for name in Serving.__annotations__:
        assert f"self.{name} =" in source, name
