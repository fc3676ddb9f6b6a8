"""What the tests do when a service they need is missing (the PostgreSQL server, Debian's
chromium): on a developer's machine they skip, with the reason shown by ``pytest -rs``, so the
README's test command passes on a fresh machine; in CI (``HYPERLAB_CI=1``, which ``.ci/run``
exports) they fail, so that CI never passes by skipping what it was meant to run."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

CI_VARIABLE = "HYPERLAB_CI"


def in_ci() -> bool:
    """True when the tests run in CI, where every service must be there."""
    return os.environ.get(CI_VARIABLE) == "1"


def missing(reason: str) -> NoReturn:
    """Skip the test saying ``reason``; in CI, fail it with the same reason."""
    if in_ci():
        pytest.fail(f"{reason} ({CI_VARIABLE}=1: in CI a missing service fails)", pytrace=False)
    pytest.skip(reason)
