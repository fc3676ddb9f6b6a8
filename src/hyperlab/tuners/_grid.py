"""Grid search: every combination of the space's discrete values, in order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hyperlab.space import SearchSpace
from hyperlab.trial import Mode
from hyperlab.tuners.base import Tuner

__all__ = ["GridTuner"]


class GridTuner(Tuner):
    """Enumerates choices, randint ranges and q-spaced ranges (NNI's ``GridSearch``).

    Trial ``n`` evaluates the ``n``-th grid point; once every point has been proposed the
    experiment ends (NO_MORE_TRIAL, then DONE). A float range without ``q`` is rejected with
    the parameter's name, since it has no finite grid.
    """

    multi_objective = True  # it learns nothing, so any number of objectives
    constraints = True

    def __init__(
        self,
        space: SearchSpace,
        *,
        mode: Mode | str | Sequence[Mode | str] = Mode.MIN,
        seed: int | None = None,
    ) -> None:
        super().__init__(space, mode=mode, seed=seed)
        self.size = space.grid_size()  # raises SearchSpaceError for a non-enumerable parameter
        self._points: list[dict[str, Any]] | None = None

    def budget(self) -> int:
        return self.size

    def suggest(self, number: int) -> dict[str, Any] | None:
        if number >= self.size:
            return None
        if self._points is None:
            self._points = self.space.grid()
        return self._points[number]
