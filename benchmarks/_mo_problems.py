"""The problems of ``benchmarks/multiobjective.py``: pymoo's test functions and one scikit-learn
task, each with a fixed normalisation and reference point for its hypervolume.

Every problem minimises every objective. A trial's objective vector ``f`` is normalised as
``(f - ideal) / (nadir - ideal)`` with the problem's known ideal and nadir points (pymoo's, read
off its true Pareto front; for the scikit-learn task fixed bounds, below), and its hypervolume
is taken, by moocore, of the feasible trials' normalised vectors against the reference point
``REFERENCE`` in every coordinate, unless the problem names its own.

- ``zdt1``, ``zdt2``, ``zdt3`` (2 objectives, 30 variables), ``dtlz2`` (3 objectives, 12
  variables: k = 10), ``wfg4`` (2 objectives, 10 variables: k = 2 position, l = 8 distance), and
  ``c2dtlz2`` (3 objectives, 12 variables, 1 constraint ``g <= 0``; 0.5% of uniform draws are
  feasible): pymoo's definitions, sizes and fronts (WFG4's computed here: pymoo samples it at
  random, which would move its ideal and nadir points from run to run). The ZDT problems'
  reference point is BoTorch's, (11, 11) in raw units: with 1.1 no run of 200 trials scores
  above 0 on ZDT1 and ZDT2 (their fronts need all 29 distance variables near 0).
- ``mlp-digits``: scikit-learn's ``MLPClassifier`` on the digits data (64 features, 10 classes;
  a fixed stratified 70/30 split), 20 epochs of Adam, seed 0, one thread; parameters: layers
  (1..2), width (2..64 units each), L2 penalty ``alpha`` (log, 1e-6..1e-1),
  ``learning_rate_init`` (log, 1e-4..1e-1). Objectives: the validation error, and log10 of the
  network's number of weights and biases, a deterministic stand-in for its training and
  inference time (both proportional to it). Normalised with the error in [0, 1] and log10 size
  in [log10 160, log10 8970] (the smallest and largest networks of the space).
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from _quality.spaces import Param, floats, vector

REFERENCE = 1.1
"""The reference point's coordinate in normalised objective space (nadir = 1)."""

Evaluation = tuple[tuple[float, ...], tuple[float, ...] | None]
"""A trial's objective values and its constraint values (``<= 0`` when met; None: none)."""


@dataclass(frozen=True)
class MOProblem:
    """A multi-objective minimisation problem.

    Attributes:
        name: As ``--problems`` selects it.
        params: Its search space (``_quality.spaces.Param``).
        evaluate: ``params -> (objectives, constraints or None)``.
        ideal: The objectives' best values on the Pareto front (normalisation's 0).
        nadir: Their worst values on the Pareto front (normalisation's 1).
        n_constraints: How many constraint values ``evaluate`` returns.
        front: The true Pareto front's points (raw objectives), if known.
        reference_raw: The hypervolume's reference point in raw units (None: ``REFERENCE``
            in every normalised coordinate).
        cost: Rough seconds per evaluation, to schedule the longest runs first.
    """

    name: str
    params: tuple[Param, ...]
    evaluate: Callable[[dict[str, Any]], Evaluation]
    ideal: tuple[float, ...]
    nadir: tuple[float, ...]
    n_constraints: int = 0
    front: np.ndarray | None = None
    reference_raw: tuple[float, ...] | None = None
    cost: float = 0.0

    @property
    def n_obj(self) -> int:
        return len(self.ideal)

    @property
    def reference(self) -> tuple[float, ...]:
        """The hypervolume's reference point, in normalised units."""
        if self.reference_raw is None:
            return (REFERENCE,) * self.n_obj
        return tuple(float(v) for v in self.normalise(np.asarray(self.reference_raw)))

    def normalise(self, points: np.ndarray) -> np.ndarray:
        """Raw ``(n, k)`` objective vectors in normalised units."""
        ideal, nadir = np.asarray(self.ideal), np.asarray(self.nadir)
        return (np.asarray(points, dtype=float) - ideal) / (nadir - ideal)

    def hypervolume(self, points: np.ndarray, violations: np.ndarray | None = None) -> float:
        """The hypervolume of the feasible rows of raw ``points`` (``violations`` <= 0)."""
        import moocore

        pts = self.normalise(points).reshape(-1, self.n_obj)
        if violations is not None:
            pts = pts[np.asarray(violations, dtype=float) <= 0]
        ref = np.asarray(self.reference)
        pts = pts[np.all(pts < ref, axis=1)]
        return float(moocore.hypervolume(pts, ref=ref)) if len(pts) else 0.0

    @functools.cached_property
    def front_hypervolume(self) -> float | None:
        """The hypervolume of the known front's points (None if unknown)."""
        return None if self.front is None else self.hypervolume(self.front)


# ---------------------------------------------------------------- pymoo


def _pymoo(
    name: str,
    n_var: int,
    reference: tuple[float, ...] | None = None,
    front: np.ndarray | None = None,
    **kwargs: Any,
) -> MOProblem:
    """pymoo's problem ``name``; its true front from pymoo unless ``front`` is given."""
    from pymoo.problems import get_problem

    problem = get_problem(name, n_var=n_var, **kwargs)
    n_constr = int(problem.n_ieq_constr)
    if front is None:
        front = np.asarray(problem.pareto_front(), dtype=float)

    def evaluate(params: dict[str, Any]) -> Evaluation:
        out = problem.evaluate(vector(params, n_var)[None, :], return_as_dictionary=True)
        objectives = tuple(float(v) for v in np.ravel(out["F"]))
        constraints = tuple(float(v) for v in np.ravel(out["G"])) if n_constr else None
        return objectives, constraints

    lows, highs = np.broadcast_to(problem.xl, n_var), np.broadcast_to(problem.xu, n_var)
    if np.all(lows == lows[0]) and np.all(highs == highs[0]):
        params = floats(n_var, float(lows[0]), float(highs[0]))
    else:
        params = tuple(
            Param(f"x{i}", "float", float(lo), float(hi))
            for i, (lo, hi) in enumerate(zip(lows, highs, strict=True))
        )
    return MOProblem(
        name=name,
        params=params,
        evaluate=evaluate,
        ideal=tuple(float(v) for v in front.min(axis=0)),
        nadir=tuple(float(v) for v in front.max(axis=0)),
        n_constraints=n_constr,
        front=front,
        reference_raw=reference,
    )


def wfg4_front(points: int = 1001) -> np.ndarray:
    """WFG4's front for two objectives, the quarter ellipse ``(f1/2)^2 + (f2/4)^2 = 1``: pymoo
    samples it at random, which would move the ideal and nadir points from run to run."""
    angle = np.linspace(0.0, np.pi / 2, points)
    return np.column_stack([2.0 * np.sin(angle), 4.0 * np.cos(angle)])


# ---------------------------------------------------------------- scikit-learn

MLP_SIZES = (160, 8970)
"""The smallest (1 layer of 2 units) and largest (2 layers of 64) networks' parameter counts."""


@functools.cache
def _digits() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X_train, X_valid, y_train, y_valid = train_test_split(
        X / 16.0, y, test_size=0.3, random_state=0, stratify=y
    )
    return X_train, X_valid, y_train, y_valid


def mlp_size(layers: int, width: int, n_in: int = 64, n_out: int = 10) -> int:
    """Weights and biases of an MLP with ``layers`` hidden layers of ``width`` units."""
    sizes = [n_in, *([width] * layers), n_out]
    return sum(a * b + b for a, b in itertools.pairwise(sizes))


def _mlp_digits(params: dict[str, Any]) -> Evaluation:
    from sklearn.neural_network import MLPClassifier

    layers, width = int(params["layers"]), int(params["width"])
    X_train, X_valid, y_train, y_valid = _digits()
    model = MLPClassifier(
        hidden_layer_sizes=(width,) * layers,
        alpha=float(params["alpha"]),
        learning_rate_init=float(params["learning_rate_init"]),
        max_iter=20,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning: 20 epochs are the budget
        model.fit(X_train, y_train)
    error = 1.0 - float(model.score(X_valid, y_valid))
    return (error, math.log10(mlp_size(layers, width))), None


def _mlp_problem() -> MOProblem:
    return MOProblem(
        name="mlp-digits",
        params=(
            Param("layers", "int", 1, 2),
            Param("width", "int", 2, 64),
            Param("alpha", "logfloat", 1e-6, 1e-1),
            Param("learning_rate_init", "logfloat", 1e-4, 1e-1),
        ),
        evaluate=_mlp_digits,
        ideal=(0.0, math.log10(MLP_SIZES[0])),
        nadir=(1.0, math.log10(MLP_SIZES[1])),
        cost=0.08,
    )


# ---------------------------------------------------------------- the suite

PROBLEMS: dict[str, Callable[[], MOProblem]] = {
    "zdt1": lambda: _pymoo("zdt1", 30, (11.0, 11.0)),
    "zdt2": lambda: _pymoo("zdt2", 30, (11.0, 11.0)),
    "zdt3": lambda: _pymoo("zdt3", 30, (11.0, 11.0)),
    "dtlz2": lambda: _pymoo("dtlz2", 12, n_obj=3),
    "wfg4": lambda: _pymoo("wfg4", 10, front=wfg4_front(), n_obj=2),
    "c2dtlz2": lambda: _pymoo("c2dtlz2", 12, n_obj=3),
    "mlp-digits": _mlp_problem,
}
"""Every problem by name, built when first asked for (``problem``)."""


@functools.cache
def problem(name: str) -> MOProblem:
    """The problem called ``name`` (built once per process).

    Raises:
        KeyError: no such problem.
    """
    return PROBLEMS[name]()
