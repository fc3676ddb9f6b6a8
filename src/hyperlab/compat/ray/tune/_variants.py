"""Ray Tune's default search (``BasicVariantGenerator``) as a hyperlab tuner."""

from __future__ import annotations

from typing import Any

from hyperlab.space import SearchSpace
from hyperlab.trial import Mode
from hyperlab.tuners.base import Tuner

__all__ = ["VariantTuner"]


class VariantTuner(Tuner):
    """Every point of the grid-searched parameters, ``samples`` times over, with the other
    parameters drawn at random for each trial: Ray Tune's ``BasicVariantGenerator``.

    Trial ``n`` takes grid point ``n % G`` (``G`` points, the first grid parameter varying
    slowest) and draws the rest from a stream seeded by the seed and ``n``, so its parameters
    depend only on the seed and ``n``. After ``samples * G`` trials it proposes nothing more.

    Args:
        grid: The names of the grid-searched parameters (choices of the space).
        samples: Repetitions of the grid (Ray's ``num_samples``); None for no end.
        branches: A scheduler adds trials of its own (population based training): the
            budget is then left open to them, and the tuner still stops proposing after
            ``samples * G`` of its own trials (they are created first).
        starts: Stored values its trials take for these parameters instead of drawing them:
            the constants of Ray's ``param_space`` that population based training mutates
            within the space's distributions.
    """

    def __init__(
        self,
        space: SearchSpace,
        *,
        mode: Mode | str = Mode.MIN,
        seed: int | None = None,
        grid: list[str] | None = None,
        samples: int | None = 1,
        branches: bool = False,
        starts: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(space, mode=mode, seed=seed)
        self.starts = dict(starts or {})
        unknown = sorted(set(self.starts) - set(space))
        if unknown:
            raise ValueError(f"VariantTuner: starts names {unknown} are not in the space")
        self.grid_names = list(grid or [])
        unknown = [name for name in self.grid_names if name not in space]
        if unknown:
            raise ValueError(f"VariantTuner: grid names {unknown} are not in the space")
        self._grid = SearchSpace({n: space[n] for n in self.grid_names}).grid()
        self._random = SearchSpace({n: p for n, p in space.items() if n not in self.grid_names})
        self.total = None if samples is None else samples * len(self._grid)
        self.branches = branches

    def budget(self) -> int | None:
        return None if self.branches else self.total

    def runs_out(self) -> bool:
        return self.total is not None

    def suggest(self, number: int) -> dict[str, Any] | None:
        if self.total is not None and number >= self.total:
            return None
        point = self._grid[number % len(self._grid)]
        drawn = self._random.sample(self.rng(number), 1)[0]
        drawn.update(self.starts)
        return {name: point[name] if name in point else drawn[name] for name in self.space}
