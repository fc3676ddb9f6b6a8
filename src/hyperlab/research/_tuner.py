"""The tuner of researches: proposes the domain's configs x repetitions in order, and lets an
``update_domain`` function replace the domain as results come in."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hyperlab.errors import ConfigError
from hyperlab.research._units import When
from hyperlab.space import SearchSpace
from hyperlab.trial import Trial, TrialStatus
from hyperlab.tuners.base import Tuner

__all__ = ["DomainTuner"]


class DomainTuner(Tuner):
    """Proposes, for trial after trial, the next config x repetition of a ``Domain``.

    A trial's params are the config's aliases plus ``repetition``. Proposals depend only on
    the seed and the trials seen (finished ones through ``observe``, interrupted ones that
    run again through ``requeued``), so a resumed research proposes what it had not run:
    a config x repetition that already has a trial is never proposed again.

    Args:
        space: What the experiment shows as its search space (the domain's options).
        domain: The ``hyperlab.Domain`` to draw configs from.
        n_configs / n_reps / repeat_each: As ``Domain.iterator`` takes them.
        update: ``(function, when, kwargs)``: when the ``When`` schedule is due, counting
            finished trials (``N``: every N-th; ``"#k"``: the k-th, 0-based; ``"last"``: the
            one that ends the current domain, every config of it proposed and finished),
            ``function(results, **kwargs)`` gets the finished trials so far (a pandas
            DataFrame, one row per config x repetition: config aliases, ``repetition``,
            ``status`` and the last value of each saved variable) and returns the next domain,
            or None to keep the current one. The new domain's configs are proposed from then
            on.
        check: Called with each new domain before it is used (raises ``ConfigError``).
    """

    def __init__(
        self,
        space: SearchSpace,
        *,
        domain: Any,
        n_configs: int | None = None,
        n_reps: int = 1,
        repeat_each: int | None = None,
        update: tuple[Callable[..., Any], When, dict[str, Any]] | None = None,
        check: Callable[[Any], None] | None = None,
        mode: str = "min",
        seed: int | None = None,
    ) -> None:
        super().__init__(space, mode=mode, seed=seed)
        self.domain = domain
        self.n_configs = n_configs
        self.n_reps = n_reps
        self.repeat_each = repeat_each
        self.update = update
        self.check = check
        self.generation = 0
        self._items: Any = None  # the iterator, made at the first proposal (kept picklable)
        self._next: dict[str, Any] | None = None  # drawn from _items ahead, not proposed yet
        self._seen: set[str] = set()
        self._open: set[str] = set()  # proposed (or re-run) and not finished yet
        self._finished: list[Trial] = []
        self._waiting = False

    def _iterate(self) -> Any:
        return iter(
            self.domain.iterator(
                n_configs=self.n_configs,
                n_reps=self.n_reps,
                repeat_each=self.repeat_each,
                seed=_generation_seed(self.seed, self.generation),
            )
        )

    def budget(self) -> int | None:
        size = self.domain.size
        if self.update is None and size is not None:
            return min(size, self.n_configs or size) * self.n_reps
        return None if self.n_configs is None else self.n_configs * self.n_reps

    def runs_out(self) -> bool:
        return self.budget() is not None or self.domain.size is not None

    def suggest(self, number: int) -> dict[str, Any] | None:
        params = self._peek()
        if params is None:
            self._waiting = self.update is not None
            return None
        self._next = None
        key = _key(params)
        self._seen.add(key)
        self._open.add(key)
        self._waiting = False
        return params

    def _peek(self) -> dict[str, Any] | None:
        """The next config x repetition not proposed yet (drawn ahead and kept), or None when
        the current domain has no more."""
        if self._next is not None:
            return self._next
        if self._items is None:
            self._items = self._iterate()
        for item in self._items:
            params = {**item.alias, "repetition": item.repetition}
            if _key(params) not in self._seen:
                self._next = params
                return params
        return None

    def waits(self) -> bool:
        """True when ``suggest`` ran out only for now: an update of the domain may come
        with the next finished trials."""
        return self._waiting

    def requeued(self, trial: Trial) -> None:
        """A trial that runs again with its stored params: never propose its config again."""
        key = _key(trial.params)
        self._seen.add(key)
        self._open.add(key)
        if self._next is not None and _key(self._next) == key:
            self._next = None

    def observe(self, trial: Trial) -> None:
        key = _key(trial.params)
        self._seen.add(key)
        if self._next is not None and _key(self._next) == key:
            self._next = None
        if trial.status is TrialStatus.SYS_CANCELED:
            return
        self._open.discard(key)
        self._finished.append(trial)
        if self.update is None:
            return
        function, when, kwargs = self.update
        index = len(self._finished) - 1  # this finished trial's place, 0-based
        ended = when.last and not self._open and self._peek() is None
        if not when.due(index, last=ended):
            return
        try:
            domain = function(_results(self._finished), **kwargs)
        except Exception as exc:
            name = getattr(function, "__name__", repr(function))
            raise ConfigError(
                f"update_domain: {name}() raised {type(exc).__name__}: {exc} (after "
                f"{len(self._finished)} finished experiments)"
            ) from exc
        if domain is None:
            return
        if self.check is not None:
            self.check(domain)
        self.domain = domain
        self.generation += 1
        self._items = None
        self._next = None
        self._waiting = False


def _key(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, default=str)


def _generation_seed(seed: int, generation: int) -> Any:
    import numpy as np

    return np.random.SeedSequence(seed, spawn_key=(7, generation))


def _results(trials: list[Trial]) -> Any:
    """The finished trials as a DataFrame: one row per config x repetition."""
    try:
        import pandas as pd
    except ImportError:
        raise ConfigError(
            "update_domain needs pandas for the results it receives: "
            'pip install "hyperlab[research]"'
        ) from None
    rows = []
    for trial in trials:
        row: dict[str, Any] = dict(trial.params)
        row["trial"] = trial.number
        row["status"] = trial.status.name
        row.update(trial.metrics)
        rows.append(row)
    return pd.DataFrame(rows)
