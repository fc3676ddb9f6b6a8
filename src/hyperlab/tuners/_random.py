"""Random search: independent draws from the search space's distributions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hyperlab.space import SearchSpace
from hyperlab.trial import Mode
from hyperlab.tuners.base import Tuner

__all__ = ["RandomTuner"]


class RandomTuner(Tuner):
    """Draws every parameter from its prior, independently of past results.

    A strong baseline for small budgets and the fastest tuner. Draws are made ``batch`` at a
    time with numpy; trial ``n``'s parameters depend only on the seed and ``n``.

    Args:
        batch: How many parameter sets are drawn per numpy call.
    """

    multi_objective = True  # it learns nothing, so any number of objectives
    constraints = True

    def __init__(
        self,
        space: SearchSpace,
        *,
        mode: Mode | str | Sequence[Mode | str] = Mode.MIN,
        seed: int | None = None,
        batch: int = 64,
    ) -> None:
        super().__init__(space, mode=mode, seed=seed)
        self.batch = max(1, int(batch))
        self._block = -1
        self._drawn: list[dict[str, Any]] = []

    def suggest(self, number: int) -> dict[str, Any]:
        block, index = divmod(number, self.batch)
        if block != self._block:
            self._drawn = self.space.sample(self.rng(block), self.batch)
            self._block = block
        return self._drawn[index]
