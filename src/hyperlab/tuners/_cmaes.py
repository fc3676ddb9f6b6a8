"""CMA-ES: the covariance matrix adaptation evolution strategy (Hansen), in the unit cube.

Trials come in generations of ``popsize``: each point is drawn from ``N(m, sigma^2 C)`` (drawn
again up to 10 times if it leaves the cube, then clipped); when a generation's trials have all
finished, the mean moves to a weighted mean of its best half, and the step size ``sigma`` and the
covariance ``C`` adapt (cumulative step-size adaptation, rank-one and rank-mu updates). With
``restarts=True`` a converged or stagnating search restarts from a random mean with twice the
population (IPOP-CMA-ES).

Numeric parameters only: floats (linear, log and normal families through their encoding),
q-types and randint (rounded when decoded). A choice is rejected with its name.

The state is a function of the succeeded trials alone: generations are the succeeded trials in
number order, ``popsize`` at a time, and a trial's continuous point is regenerated from the seed,
its number and the state it was drawn from, so replaying the history rebuilds the same state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.trial import Mode, Trial, TrialStatus
from hyperlab.tuners._history import History, UnitSpace
from hyperlab.tuners.base import Tuner

__all__ = ["CMAESTuner"]

_RESTART_KEY = 2**32 - 1


@dataclass
class _State:
    """One CMA-ES run's state after some generations."""

    mean: np.ndarray
    sigma: float
    popsize: int
    restart: int = 0
    generation: int = 0
    C: np.ndarray = field(default=None)  # type: ignore[arg-type]  # set by __post_init__
    pc: np.ndarray = field(default=None)  # type: ignore[arg-type]
    ps: np.ndarray = field(default=None)  # type: ignore[arg-type]
    B: np.ndarray = field(default=None)  # type: ignore[arg-type]
    D: np.ndarray = field(default=None)  # type: ignore[arg-type]
    best_history: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = len(self.mean)
        self.C = np.eye(n) if self.C is None else self.C
        self.pc = np.zeros(n) if self.pc is None else self.pc
        self.ps = np.zeros(n) if self.ps is None else self.ps
        self.B = np.eye(n) if self.B is None else self.B
        self.D = np.ones(n) if self.D is None else self.D


class CMAESTuner(Tuner):
    """CMA-ES for numeric spaces; strong on rugged continuous problems with many trials.

    Args:
        popsize: Trials per generation; default ``4 + floor(3 ln d)``.
        sigma0: Initial step size in the unit cube.
        x0: Initial mean as parameter values (a dict); default the centre of the cube.
        restarts: Restart with a doubled population when the search converges (IPOP).
    """

    def __init__(
        self,
        space: SearchSpace,
        *,
        mode: Mode | str = Mode.MIN,
        seed: int | None = None,
        popsize: int | None = None,
        sigma0: float = 0.2,
        x0: dict[str, Any] | None = None,
        restarts: bool = True,
    ) -> None:
        super().__init__(space, mode=mode, seed=seed)
        self.unit = UnitSpace(space)
        self.unit.check_supported(
            "cmaes", ("cont", "disc"), "CMA-ES has no notion of unordered options: use tpe or gp"
        )
        d = self.unit.d
        if d == 0:
            raise ConfigError("cmaes needs at least one parameter, got an empty search space")
        if popsize is not None and (
            isinstance(popsize, bool) or not isinstance(popsize, int) or popsize < 2
        ):
            raise ConfigError(
                f"tuner_args: cmaes needs popsize to be an integer >= 2, got {popsize!r}"
            )
        if not 0 < sigma0 <= 1:
            raise ConfigError(f"tuner_args: cmaes needs 0 < sigma0 <= 1, got sigma0={sigma0!r}")
        self.popsize = popsize or 4 + int(3 * math.log(d))
        self.sigma0 = float(sigma0)
        self.restarts = bool(restarts)
        mean0 = np.full(d, 0.5)
        if x0 is not None:
            encoded = self.unit.encode(x0)
            if encoded is None:
                raise ConfigError(f"tuner_args: cmaes x0 is not a point of the space, got {x0!r}")
            mean0 = encoded
        self._mean0 = mean0
        self.history = History(self.unit, mode)
        self._obs: dict[int, tuple[np.ndarray, float]] = {}  # number -> (encoded x, loss)
        self._drawn: dict[int, np.ndarray] = {}  # number -> continuous point proposed
        self._used: list[int] = []  # numbers consumed by complete generations, in order
        self._state = self._fresh(0, self.popsize, mean0)

    # ------------------------------------------------------------ tuner interface

    def observe(self, trial: Trial) -> None:
        self.history.add(trial)
        if trial.status is not TrialStatus.SUCCEEDED or trial.value is None:
            return
        x = self.unit.encode(trial.params)
        if x is None or math.isnan(trial.value):
            return
        loss = self.mode.sign * trial.value
        self._obs[trial.number] = (x, float(loss))

    def suggest(self, number: int) -> dict[str, Any]:
        state = self._current()
        x = self._draw(state, number)
        self._drawn[number] = x
        snapped = self.unit.snap(x[None, :].copy())[0]
        if self.history.is_seen(snapped[None, :])[0]:
            snapped = self.history.unseen(self.rng(number), snapped)
        self.history.propose(number, snapped)
        return self.unit.decode(snapped)

    # ------------------------------------------------------------ state from history

    def _current(self) -> _State:
        """The state after every complete generation of succeeded trials (number order)."""
        numbers = sorted(self._obs)
        if numbers[: len(self._used)] != self._used:  # a late trial changed the generations
            self._used = []
            self._state = self._fresh(0, self.popsize, self._mean0)
        rest = numbers[len(self._used) :]
        while len(rest) >= self._state.popsize:
            chunk, rest = rest[: self._state.popsize], rest[self._state.popsize :]
            self._state = self._tell(self._state, chunk)
            self._used.extend(chunk)
        return self._state

    def _point(self, state: _State, number: int) -> np.ndarray:
        """The continuous point trial ``number`` was drawn at, or its encoding."""
        encoded = self._obs[number][0]
        for x in (self._drawn.get(number), self._draw(state, number)):
            if x is not None:
                snapped = self.unit.snap(x[None, :].copy())[0]
                if np.allclose(snapped, encoded, atol=1e-9):
                    return x
        return encoded

    def _draw(self, state: _State, number: int) -> np.ndarray:
        rng = self.rng(number)
        for _ in range(10):
            x = state.mean + state.sigma * (state.B @ (state.D * rng.standard_normal(self.unit.d)))
            if ((x >= 0) & (x <= 1)).all():
                return x
        return np.clip(x, 0.0, 1.0)

    def _fresh(self, restart: int, popsize: int, mean: np.ndarray) -> _State:
        return _State(mean=mean.copy(), sigma=self.sigma0, popsize=popsize, restart=restart)

    def _tell(self, s: _State, chunk: list[int]) -> _State:
        n = self.unit.d
        lam = s.popsize
        mu = lam // 2
        w = math.log(mu + 0.5) - np.log(np.arange(1, mu + 1))
        w /= w.sum()
        mueff = 1.0 / float(w @ w)
        cs = (mueff + 2) / (n + mueff + 5)
        ds = 1 + 2 * max(0.0, math.sqrt((mueff - 1) / (n + 1)) - 1) + cs
        cc = (4 + mueff / n) / (n + 4 + 2 * mueff / n)
        c1 = 2 / ((n + 1.3) ** 2 + mueff)
        cmu = min(1 - c1, 2 * (mueff - 2 + 1 / mueff) / ((n + 2) ** 2 + mueff))
        chi = math.sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n))

        points = np.array([self._point(s, k) for k in chunk])
        losses = np.array([self._obs[k][1] for k in chunk])
        order = np.lexsort((np.array(chunk), losses))[:mu]
        Y = (points[order] - s.mean) / s.sigma
        inv_sqrt = s.B @ np.diag(1 / s.D) @ s.B.T
        # clip injected or clipped points to a plausible Mahalanobis length
        norms = np.linalg.norm(Y @ inv_sqrt.T, axis=1)
        limit = math.sqrt(n) + 2 * n / (n + 2)
        Y *= np.minimum(1.0, limit / np.maximum(norms, 1e-300))[:, None]
        yw = w @ Y
        mean = s.mean + s.sigma * yw
        ps = (1 - cs) * s.ps + math.sqrt(cs * (2 - cs) * mueff) * (inv_sqrt @ yw)
        gen = s.generation + 1
        hs = np.linalg.norm(ps) / math.sqrt(1 - (1 - cs) ** (2 * gen)) < (1.4 + 2 / (n + 1)) * chi
        pc = (1 - cc) * s.pc + hs * math.sqrt(cc * (2 - cc) * mueff) * yw
        C = (
            (1 - c1 - cmu) * s.C
            + c1 * (np.outer(pc, pc) + (1 - hs) * cc * (2 - cc) * s.C)
            + cmu * (Y.T * w) @ Y
        )
        sigma = s.sigma * math.exp(min(1.0, float((cs / ds) * (np.linalg.norm(ps) / chi - 1))))
        C = (C + C.T) / 2
        eig, B = np.linalg.eigh(C)
        D = np.sqrt(np.maximum(eig, 1e-20))
        best = [*s.best_history, float(losses.min())]
        new = _State(mean, sigma, lam, s.restart, gen, C, pc, ps, B, D, best)
        if self.restarts and self._converged(new):
            rng = self.rng(_RESTART_KEY, s.restart + 1)
            return self._fresh(s.restart + 1, lam * 2, rng.random(n))
        return new

    def _converged(self, s: _State) -> bool:
        n = self.unit.d
        if s.sigma * float(np.sqrt(np.max(np.diag(s.C)))) < 1e-7:
            return True
        if s.D.max() > 1e7 * s.D.min():
            return True
        window = 10 + math.ceil(30 * n / s.popsize)
        recent = s.best_history[-window:]
        return len(recent) == window and max(recent) - min(recent) < 1e-12
