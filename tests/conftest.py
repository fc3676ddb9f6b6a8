from __future__ import annotations

import os

import pytest

# The conformance suites shipped in hyperlab.testing are test code: let their asserts say what
# differed (pytest rewrites asserts only in modules it is told about before they are imported).
pytest.register_assert_rewrite("hyperlab.testing")

POSTGRES_URL = os.environ.get("HYPERLAB_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


@pytest.fixture(autouse=True)
def hyperlab_home(tmp_path, monkeypatch):
    """Every test gets its own hyperlab home, so nothing touches ~/.hyperlab."""
    home = tmp_path / "home"
    monkeypatch.setenv("HYPERLAB_HOME", str(home))
    return home


def pytest_collection_modifyitems(config, items):
    if os.environ.get("HYPERLAB_SKIP_POSTGRES") == "1":
        skip = pytest.mark.skip(reason="HYPERLAB_SKIP_POSTGRES=1")
        for item in items:
            if "postgres" in item.keywords:
                item.add_marker(skip)
