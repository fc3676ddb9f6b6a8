"""The same seed gives the same decisions on the ray executor as on the others
(``tests/determinism``): its trials' reports are round trips too, through their actors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.determinism.test_same_decisions import table

pytest.importorskip("ray", reason="the ray extra is not installed")
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("assessor", ["median", "asha-promotion"])
def test_ray_gives_the_same_table_as_inprocess(cluster: Any, assessor: str, tmp_path: Path) -> None:
    assert table(assessor, "ray", tmp_path) == table(assessor, "inprocess", tmp_path)
