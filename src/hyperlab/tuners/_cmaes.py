"""CMA-ES: the covariance matrix adaptation evolution strategy (Hansen), in the unit cube.

Trials come in generations of ``popsize``: each point is drawn from ``N(m, sigma^2 C)`` (drawn
again up to 10 times if it leaves the cube, then clipped); when a generation's trials have all
finished, the mean moves to a weighted mean of its best half, and the step size ``sigma`` and the
covariance ``C`` adapt (cumulative step-size adaptation, rank-one and rank-mu updates). With
``restarts=True`` a converged or stagnating search restarts from a random mean with twice the
population (IPOP-CMA-ES).

Numeric parameters only: floats (linear, log and normal families through their encoding),
q-types and randint (rounded when decoded). A choice is rejected with its name.

The state is a function of the seed and the set of observed trials, whatever order they finished
in, so a fresh tuner fed the history in number order holds the state of the tuner that ran it:

- Generations are blocks of consecutive trial numbers: ``0 .. popsize - 1``, then the next
  ``popsize`` numbers, and so on; a restart's larger population takes the block that follows
  the generation that triggered it. A generation is complete when each of its trials has been
  observed, whatever its status, and complete generations update the state in number order.
- Trial ``n`` is drawn with a generator keyed by the seed and ``n`` from the state of its
  generation. With many trials running at once, ``n`` may lie beyond the incomplete generation:
  it is then drawn from a provisional state: the latest, told in turn the generations up to its
  own as far as each has at least ``mu`` (half the population) successes observed, its missing
  members counted as failed. That state too follows from the observed trials, and it is not
  kept: a generation updates the state only once complete. So a slow member does not hold the
  proposals of the next generations back at a stale state.
- An update reads only what observation gives: each member's parameters, encoded (randint and
  q-types as their cell's centre), and its value. A member drawn from an older state, snapped
  or clipped counts as an injected point, its step clipped to a plausible Mahalanobis length.
  Members that failed or were stopped rank below every success and are left out of the
  recombination; a generation with no success leaves the state as it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
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
    """One CMA-ES run's state after some generations, and where its next generation starts."""

    mean: np.ndarray
    sigma: float
    popsize: int
    start: int
    """The number of the first trial of the next generation, the first not yet complete."""
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

    @property
    def numbers(self) -> range:
        """The trial numbers of the next generation."""
        return range(self.start, self.start + self.popsize)


class CMAESTuner(Tuner):
    """CMA-ES for numeric spaces; strong on rugged continuous problems with many trials.

    Args:
        popsize: Trials per generation; default ``4 + floor(3 ln d)``.
        sigma0: Initial step size in the unit cube.
        x0: Initial mean as parameter values (a dict); default the centre of the cube.
        restarts: Restart with a doubled population when the search converges (IPOP).
        first_trial: The number of the first generation's first trial; trials numbered below
            it are not CMA-ES's (proposed by another tuner before it, as in ``auto``): they are
            only never proposed again.
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
        first_trial: int = 0,
    ) -> None:
        super().__init__(space, mode=mode, seed=seed)
        self.unit = UnitSpace(space)
        self.unit.check_supported(
            "cmaes", ("cont", "disc"), "CMA-ES has no notion of unordered options: use tpe or gp"
        )
        d = self.unit.d
        if popsize is not None and (
            isinstance(popsize, bool) or not isinstance(popsize, int) or popsize < 2
        ):
            raise ConfigError(
                f"tuner_args: cmaes needs popsize to be an integer >= 2, got {popsize!r}"
            )
        if isinstance(first_trial, bool) or not isinstance(first_trial, int) or first_trial < 0:
            raise ConfigError(
                f"tuner_args: cmaes needs first_trial to be an integer >= 0, got {first_trial!r}"
            )
        if not 0 < sigma0 <= 1:
            raise ConfigError(f"tuner_args: cmaes needs 0 < sigma0 <= 1, got sigma0={sigma0!r}")
        self.popsize = popsize or 4 + int(3 * math.log(max(d, 1)))
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
        # every observed trial: number -> (encoded x, loss) if it succeeded, None otherwise
        self._obs: dict[int, tuple[np.ndarray, float] | None] = {}
        self.first_trial = first_trial
        self._cov0: np.ndarray | None = None
        self._state = self._fresh(0, self.popsize, mean0, start=first_trial)

    # ------------------------------------------------------------ tuner interface

    def observe(self, trial: Trial) -> None:
        self.history.add(trial)
        member = None
        if trial.status is TrialStatus.SUCCEEDED and trial.value is not None:
            x = self.unit.encode(trial.params)
            if x is not None and math.isfinite(trial.value):
                member = (x, float(self.mode.sign * trial.value))
        if trial.number < self.first_trial:
            return
        if trial.number < self._state.start:  # observed again, in a generation already used
            self._state = self._fresh(0, self.popsize, self._mean0, start=self.first_trial)
        self._obs[trial.number] = member
        self._advance()

    def suggest(self, number: int) -> dict[str, Any]:
        x = self._draw(self._state_for(number), number)
        snapped = self.unit.snap(x[None, :].copy())[0]
        if self.history.is_seen(snapped[None, :])[0]:
            snapped = self.history.unseen(self.rng(number), snapped)
        self.history.propose(number, snapped)
        return self.unit.decode(snapped)

    # ------------------------------------------------------------ state from history

    def _state_for(self, number: int) -> _State:
        """The state trial ``number`` is drawn from: for a number beyond the incomplete
        generation, the latest told the generations before the number's own, in turn, as far
        as each has ``mu`` successes observed (a provisional state, not kept)."""
        s = self._state
        while number >= s.start + s.popsize:
            if sum(self._obs.get(k) is not None for k in s.numbers) < s.popsize // 2:
                break
            s = self._tell(s)
        return s

    def _advance(self) -> None:
        """Update the state with each complete generation, in number order."""
        s = self._state
        while all(k in self._obs for k in s.numbers):
            s = self._tell(s)
        self._state = s

    def _draw(self, state: _State, number: int) -> np.ndarray:
        rng = self.rng(number)
        for _ in range(10):
            x = state.mean + state.sigma * (state.B @ (state.D * rng.standard_normal(self.unit.d)))
            if ((x >= 0) & (x <= 1)).all():
                return x
        return np.clip(x, 0.0, 1.0)

    def _fresh(self, restart: int, popsize: int, mean: np.ndarray, *, start: int) -> _State:
        state = _State(
            mean=mean.copy(), sigma=self.sigma0, popsize=popsize, start=start, restart=restart
        )
        if restart == 0 and self._cov0 is not None:
            eig, B = np.linalg.eigh(self._cov0)
            state.C, state.B, state.D = self._cov0.copy(), B, np.sqrt(np.maximum(eig, 1e-20))
        return state

    def warm_start(self, cov: np.ndarray) -> None:
        """Start (before any trial is observed) with the covariance matrix ``cov`` (unit-cube
        coordinates, scaled by ``sigma0``, positive definite) rather than the identity; a
        restart starts from the identity."""
        self._cov0 = np.array(cov, dtype=float)
        self._state = self._fresh(0, self.popsize, self._mean0, start=self.first_trial)

    def _tell(self, s: _State) -> _State:
        """The state after generation ``s.numbers``, from what has been observed of it (a member
        not observed yet counts as failed); the next generation starts after it."""
        n = self.unit.d
        lam = s.popsize
        mu = lam // 2
        after = s.start + lam
        # the best successes, ties broken by number; failed and stopped members rank last
        ranked = sorted(
            (member[1], k, member[0]) for k in s.numbers if (member := self._obs.get(k)) is not None
        )
        if not ranked:  # nothing to learn from: the next generation is drawn from this state
            return replace(s, start=after)
        weights = math.log(mu + 0.5) - np.log(np.arange(1, mu + 1))
        weights /= weights.sum()
        mueff = 1.0 / float(weights @ weights)
        cs = (mueff + 2) / (n + mueff + 5)
        ds = 1 + 2 * max(0.0, math.sqrt((mueff - 1) / (n + 1)) - 1) + cs
        cc = (4 + mueff / n) / (n + 4 + 2 * mueff / n)
        c1 = 2 / ((n + 1.3) ** 2 + mueff)
        cmu = min(1 - c1, 2 * (mueff - 2 + 1 / mueff) / ((n + 2) ** 2 + mueff))
        chi = math.sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n))

        selected = ranked[:mu]
        w, mueff_w = weights, mueff
        if len(selected) < mu:  # too few successes: the best weights, renormalised
            w = weights[: len(selected)] / weights[: len(selected)].sum()
            mueff_w = 1.0 / float(w @ w)  # for the paths; the learning rates stay those of mu
        Y = (np.array([x for _, _, x in selected]) - s.mean) / s.sigma
        inv_sqrt = s.B @ np.diag(1 / s.D) @ s.B.T
        # clip injected, snapped or clipped points to a plausible Mahalanobis length
        norms = np.linalg.norm(Y @ inv_sqrt.T, axis=1)
        limit = math.sqrt(n) + 2 * n / (n + 2)
        Y *= np.minimum(1.0, limit / np.maximum(norms, 1e-300))[:, None]
        yw = w @ Y
        mean = s.mean + s.sigma * yw
        ps = (1 - cs) * s.ps + math.sqrt(cs * (2 - cs) * mueff_w) * (inv_sqrt @ yw)
        gen = s.generation + 1
        hs = np.linalg.norm(ps) / math.sqrt(1 - (1 - cs) ** (2 * gen)) < (1.4 + 2 / (n + 1)) * chi
        pc = (1 - cc) * s.pc + hs * math.sqrt(cc * (2 - cc) * mueff_w) * yw
        C = (
            (1 - c1 - cmu) * s.C
            + c1 * (np.outer(pc, pc) + (1 - hs) * cc * (2 - cc) * s.C)
            + cmu * (Y.T * w) @ Y
        )
        sigma = s.sigma * math.exp(min(1.0, float((cs / ds) * (np.linalg.norm(ps) / chi - 1))))
        C = (C + C.T) / 2
        eig, B = np.linalg.eigh(C)
        D = np.sqrt(np.maximum(eig, 1e-20))
        best = [*s.best_history, selected[0][0]]
        new = _State(mean, sigma, lam, after, s.restart, gen, C, pc, ps, B, D, best)
        if self.restarts and self._converged(new):
            rng = self.rng(_RESTART_KEY, s.restart + 1)
            return self._fresh(s.restart + 1, lam * 2, rng.random(n), start=after)
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
