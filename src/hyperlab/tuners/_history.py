"""Finished trials as unit-cube points, shared by the model-based tuners.

Package-private. :class:`UnitSpace` describes each coordinate of a search space's unit-cube
encoding (continuous, discrete or categorical; which choice option activates it) and snaps points
onto the values decoding gives. :class:`History` keeps the observed trials as growing numpy
arrays (coordinates, losses, trial numbers), the points proposed but not yet observed, and, for a
finite space, the set of points already proposed.

Losses are the values to minimise: ``value`` for ``mode="min"``, ``-value`` for ``"max"``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from hyperlab.errors import SearchSpaceError
from hyperlab.space import (
    Choice,
    Parameter,
    QLogNormal,
    QLogUniform,
    QNormal,
    QUniform,
    Randint,
    SearchSpace,
)
from hyperlab.trial import Mode, Trial, TrialStatus

__all__ = [
    "FAILED",
    "GRID_LIMIT",
    "OK",
    "STOPPED",
    "History",
    "UnitSpace",
    "latin_hypercube",
    "single_threaded_blas",
]

GRID_LIMIT = 100_000  # a finite space up to this size may be enumerated to find unseen points
_EPS = 2.0**-53
Kind = Literal["cont", "disc", "cat"]


@dataclass(frozen=True)
class Coord:
    """One unit-cube coordinate.

    Attributes:
        index: Its column.
        path: The parameter's path (``"layer/conv/kernel"``).
        param: The parameter.
        kind: ``"cont"`` (a continuous range), ``"disc"`` (randint or a q-type, an ordered
            discrete set) or ``"cat"`` (a choice).
        parent: Column of the choice whose option activates it, or -1 at the top level.
        option: That option's index (meaningless at the top level).
        size: Options of a choice, values of randint / quniform / qloguniform; 0 otherwise.
    """

    index: int
    path: str
    param: Parameter
    kind: Kind
    parent: int
    option: int
    size: int


class UnitSpace:
    """The unit-cube view of a search space that the model-based tuners work in.

    Args:
        space: The search space.
    """

    def __init__(self, space: SearchSpace) -> None:
        self.space = space
        dims = space.dimensions()
        column = {dim.path: i for i, dim in enumerate(dims)}
        coords: list[Coord] = []
        for i, dim in enumerate(dims):
            parent, option = -1, 0
            if dim.condition is not None:
                parent = column[dim.condition[0]]
                choice = dims[parent].param
                assert isinstance(choice, Choice)
                option = choice.index({"_name": dim.condition[1]})
            kind, size = _kind_and_size(dim.param)
            coords.append(Coord(i, dim.path, dim.param, kind, parent, option, size))
        self.coords = coords
        self.d = len(coords)
        self.kinds = np.array([c.kind for c in coords], dtype=object)
        self.cat = [c.index for c in coords if c.kind == "cat"]
        self.disc = [c.index for c in coords if c.kind == "disc"]
        self.conditional = any(c.parent >= 0 for c in coords)
        self.finite = all(c.kind == "cat" or c.size > 0 for c in coords)
        self.grid_size: int | None = None
        if self.finite:
            try:
                self.grid_size = space.grid_size()
            except SearchSpaceError:  # pragma: no cover - finite coords always enumerate
                self.finite = False

    # ------------------------------------------------------------ points

    def snap(self, X: np.ndarray) -> np.ndarray:
        """``X`` with discrete and categorical coordinates moved onto their values (in place).

        A snapped point encodes exactly the parameters decoding it gives, so two candidates
        that decode alike compare equal. NaN coordinates stay NaN.
        """
        for j in self.disc + self.cat:
            X[:, j] = _snap(self.coords[j].param, X[:, j])
        return X

    def snap_column(self, j: int, u: np.ndarray) -> np.ndarray:
        """Coordinate ``j`` of some points moved onto its values."""
        return _snap(self.coords[j].param, u)

    def cells(self, j: int, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The unit-cube interval of the values of discrete coordinate ``j`` at snapped ``u``."""
        return _cells(self.coords[j].param, u)

    def mask_inactive(self, X: np.ndarray) -> np.ndarray:
        """Set the coordinates of nested options not picked to NaN (in place); return ``X``."""
        if not self.conditional:
            return X
        for c in self.coords:
            if c.parent >= 0:
                p = self.coords[c.parent]
                u = X[:, c.parent]
                with np.errstate(invalid="ignore"):
                    picked = np.minimum((u * p.size).astype(np.int64, copy=False), p.size - 1)
                off = np.isnan(u) | (picked != c.option)
                X[off, c.index] = np.nan
        return X

    def uniform(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` prior draws as snapped unit-cube points (inactive coordinates NaN).

        The prior of every parameter is uniform in its unit-cube coordinate (the normal family is
        encoded through its CDF), so this is ``space.sample`` in encoded form.
        """
        return self.mask_inactive(self.snap(rng.random((n, self.d))))

    def decode(self, x: np.ndarray) -> dict[str, Any]:
        """The parameters of one unit-cube point (NaN allowed in inactive coordinates)."""
        return self.space.decode_many(np.nan_to_num(x, nan=0.5)[None, :])[0]

    def encode(self, params: Mapping[str, Any]) -> np.ndarray | None:
        """The snapped unit-cube point of ``params``, or None if they are not in the space."""
        try:
            x = self.space.encode(params)
        except (ValueError, TypeError):
            return None
        return self.snap(x[None, :])[0]

    @staticmethod
    def key(x: np.ndarray) -> bytes:
        """A hashable identity of a snapped point."""
        return np.where(np.isnan(x), -1.0, np.round(x, 9)).tobytes()

    def check_supported(self, tuner: str, allowed: tuple[Kind, ...], hint: str) -> None:
        """SearchSpaceError naming the first parameter whose kind ``tuner`` cannot handle."""
        for c in self.coords:
            if c.kind not in allowed:
                raise SearchSpaceError(
                    f"{c.path}: the {tuner} tuner supports only "
                    f"{_KIND_NAMES[allowed]} parameters, got {c.param.type} ({c.param!r}); {hint}"
                )


_KIND_NAMES: dict[tuple[Kind, ...], str] = {
    ("cont", "disc"): "numeric (uniform, loguniform, normal families, q-types, randint)",
}


def _kind_and_size(param: Parameter) -> tuple[Kind, int]:
    if isinstance(param, Choice):
        return "cat", len(param.options)
    if isinstance(param, Randint):
        return "disc", param.high - param.low
    if isinstance(param, (QUniform, QLogUniform)):
        return "disc", param.grid_size()
    if isinstance(param, (QNormal, QLogNormal)):
        return "disc", 0
    return "cont", 0


def _snap(param: Parameter, u: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        if isinstance(param, (Choice, Randint)):
            k = len(param.options) if isinstance(param, Choice) else param.high - param.low
            return (np.minimum(np.floor(u * k), k - 1) + 0.5) / k
        if isinstance(param, (QUniform, QLogUniform)):
            return _value_to_u(param, _q_round(param, _u_to_value(param, u)))
        if isinstance(param, (QNormal, QLogNormal)):
            return _value_to_u(param, np.round(_u_to_value(param, u) / param.q) * param.q)
    return u


def _q_round(param: QUniform | QLogUniform, v: np.ndarray) -> np.ndarray:
    return np.clip(np.round(v / param.q) * param.q, param.low, param.high)


def _u_to_value(param: Parameter, u: np.ndarray) -> np.ndarray:
    if isinstance(param, QUniform):
        return param.low + np.clip(u, 0, 1) * (param.high - param.low)
    if isinstance(param, QLogUniform):
        lo, hi = math.log(param.low), math.log(param.high)
        return np.exp(lo + np.clip(u, 0, 1) * (hi - lo))
    assert isinstance(param, (QNormal, QLogNormal))
    from scipy.special import ndtri  # 0.2 s to import: only for normal priors

    z = param.mu + param.sigma * ndtri(np.clip(u, _EPS, 1 - _EPS))
    return np.exp(z) if isinstance(param, QLogNormal) else z


def _value_to_u(param: Parameter, v: np.ndarray) -> np.ndarray:
    if isinstance(param, QUniform):
        return np.clip((v - param.low) / (param.high - param.low), 0, 1)
    if isinstance(param, QLogUniform):
        lo, hi = math.log(param.low), math.log(param.high)
        return np.clip((np.log(v) - lo) / (hi - lo), 0, 1)
    assert isinstance(param, (QNormal, QLogNormal))
    from scipy.special import ndtr  # 0.2 s to import: only for normal priors

    with np.errstate(divide="ignore"):
        z = np.log(np.maximum(v, 0.0)) if isinstance(param, QLogNormal) else v
    return ndtr((z - param.mu) / param.sigma)


def _cells(param: Parameter, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(param, Randint):
        k = param.high - param.low
        i = np.minimum(np.floor(u * k), k - 1)
        return i / k, (i + 1) / k
    assert isinstance(param, (QUniform, QLogUniform, QNormal, QLogNormal))
    g = _u_to_value(param, u)
    center = np.round(g / param.q) * param.q  # the multiple of q that rounds onto g
    lo_v, hi_v = center - param.q / 2, center + param.q / 2
    if isinstance(param, (QUniform, QLogUniform)):
        lo_v, hi_v = np.maximum(lo_v, param.low), np.minimum(hi_v, param.high)
    return _value_to_u(param, lo_v), _value_to_u(param, hi_v)


# ---------------------------------------------------------------- BLAS threads

_controller: Any = None


def latin_hypercube(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """``n`` points of ``[0, 1]^d`` forming a Latin hypercube: in every coordinate, each of the
    ``n`` equal slices holds exactly one point (at a random place in it)."""
    slices = np.argsort(rng.random((n, d)), axis=0)
    return (slices + rng.random((n, d))) / n


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Run the block with one BLAS thread.

    The tuners' matrices are small (hundreds of rows): a multi-threaded BLAS only adds
    synchronisation, and on a machine busy with trials it is several times slower.
    """
    global _controller
    if _controller is None:
        # SciPy's linear algebra brings its own OpenBLAS: loaded first, so that the limit covers
        # it (left out, a GP's fit under load ran 80x slower on two threads fighting for cores)
        import scipy.linalg  # noqa: F401
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    with _controller.limit(limits=1, user_api="blas"):
        yield


# ---------------------------------------------------------------- history

OK, STOPPED, FAILED = 0, 1, 2  # a row's state: succeeded, early-stopped (or +inf), failed


class History:
    """The observed trials of one tuner, as arrays that grow with ``add``.

    Rows are kept sorted by trial number. A trial observed again (same number) replaces its
    row.

    Args:
        unit: The unit-cube view of the space.
        mode: ``"min"`` or ``"max"``.
    """

    def __init__(self, unit: UnitSpace, mode: Mode | str) -> None:
        self.unit = unit
        self.sign = Mode(mode).sign
        self._X = np.empty((16, unit.d))
        self._loss = np.empty(16)
        self._number = np.empty(16, dtype=np.int64)
        self._state = np.empty(16, dtype=np.int8)
        self.n = 0
        self.pending: dict[int, np.ndarray] = {}
        self.seen: set[bytes] = set()
        self._grid: np.ndarray | None = None

    def add(self, trial: Trial) -> None:
        """Record a finished trial; one whose params are not in the space is ignored."""
        self.pending.pop(trial.number, None)
        x = self.unit.encode(trial.params)
        if x is None:
            return
        if self.unit.finite:
            self.seen.add(UnitSpace.key(x))
        value = trial.value
        if trial.status is TrialStatus.SUCCEEDED and value is not None and not math.isnan(value):
            state, loss = OK, self.sign * float(value)
            if math.isinf(loss):
                state, loss = (STOPPED, math.inf) if loss > 0 else (OK, -1e300)
        elif trial.status is TrialStatus.EARLY_STOPPED:
            state, loss = STOPPED, math.inf
        else:
            state, loss = FAILED, math.nan
        n, number = self.n, trial.number
        row = int(np.searchsorted(self._number[:n], number))
        if row == n or self._number[row] != number:  # a new trial: insert in number order
            if n == len(self._loss):
                self._grow()
            if row < n:  # rare: an older number finished late
                for a in (self._X, self._loss, self._number, self._state):
                    a[row + 1 : n + 1] = a[row:n].copy()
            self.n += 1
        self._X[row] = x
        self._loss[row] = loss
        self._number[row] = number
        self._state[row] = state

    def propose(self, number: int, x: np.ndarray) -> None:
        """Remember that ``x`` was proposed for trial ``number`` and is not observed yet."""
        self.pending[number] = x
        if self.unit.finite:
            self.seen.add(UnitSpace.key(x))

    def is_seen(self, X: np.ndarray) -> np.ndarray:
        """For a finite space, which rows of ``X`` were already proposed; all False otherwise."""
        if not self.unit.finite or not self.seen:
            return np.zeros(len(X), dtype=bool)
        return np.array([UnitSpace.key(x) in self.seen for x in X], dtype=bool)

    def unseen(self, rng: np.random.Generator, fallback: np.ndarray) -> np.ndarray:
        """A prior point not proposed before, for when a finite space is nearly used up.

        Tries prior draws first; a space of up to ``GRID_LIMIT`` points is then enumerated, so
        an unseen point is always found while one remains. Returns ``fallback`` once every
        point has been proposed.
        """
        for _ in range(4):
            X = self.unit.uniform(rng, 256)
            fresh = np.flatnonzero(~self.is_seen(X))
            if fresh.size:
                return X[fresh[0]]
        if (self.unit.grid_size or 0) <= GRID_LIMIT:
            if self._grid is None:
                points = [self.unit.encode(p) for p in self.unit.space.iter_grid()]
                self._grid = np.array(points, dtype=float).reshape(len(points), self.unit.d)
            fresh = np.flatnonzero(~self.is_seen(self._grid))
            if fresh.size:
                return self._grid[rng.choice(fresh)]
        return fallback

    def _grow(self) -> None:
        cap = 2 * len(self._loss)
        self._X = np.concatenate([self._X, np.empty_like(self._X)])[:cap]
        self._loss = np.resize(self._loss, cap)
        self._number = np.resize(self._number, cap)
        self._state = np.resize(self._state, cap)

    # ------------------------------------------------------------ views (sorted by number)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(X, loss, number, state)`` of every row, sorted by trial number (views, read-only)."""
        n = self.n
        return self._X[:n], self._loss[:n], self._number[:n], self._state[:n]

    def succeeded(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(X, loss, number)`` of the succeeded trials, sorted by trial number."""
        X, loss, number, state = self.arrays()
        ok = state == OK
        return X[ok], loss[ok], number[ok]

    def stopped(self) -> tuple[np.ndarray, np.ndarray]:
        """``(X, number)`` of the early-stopped (or infinitely bad) trials, by number."""
        X, _, number, state = self.arrays()
        bad = state == STOPPED
        return X[bad], number[bad]

    @property
    def n_ok(self) -> int:
        """How many trials succeeded."""
        return int(np.count_nonzero(self._state[: self.n] == OK))
