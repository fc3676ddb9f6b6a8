"""Learning-curve extrapolation (NNI's ``Curvefitting``): predict where a trial's curve ends and
stop it when that is clearly worse than the best final value seen.

NNI fits twelve curve families and weights them by MCMC. This one fits four monotone families
by least squares and weights them by how well they fit (Akaike weights), which is deterministic
and takes a few milliseconds. With ``t = resource / epoch_num`` (so the target is ``t = 1``):

- exp: ``c + a * exp(-b * t)``, ``0.01 <= b <= 100``;
- pow: ``c + a * t ** -b``, ``0.01 <= b <= 4``;
- hyp: ``c + a / (1 + b * t)``, ``0.01 <= b <= 1000``;
- log: ``c + a * log(t)``.

Each is monotone (rising or falling, ``a`` takes either sign), so a prediction at ``t = 1`` lies
between the fitted value at the last report and the curve's asymptote (or, for ``log``, follows
its trend): it never jumps far outside what the data say.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from hyperlab.assessors.base import Assessor, Decision, Verdicts
from hyperlab.errors import ConfigError
from hyperlab.trial import Report, Trial, TrialStatus

__all__ = ["CurveFittingAssessor", "predict_final"]


class CurveFittingAssessor(Assessor):
    """Stops a trial whose learning curve, extrapolated to ``epoch_num``, ends clearly worse
    than the best final value of the trials that succeeded.

    A report at resource ``r`` (``step + 1`` by default) is judged when some trial has
    succeeded already, ``r >= start_step``, ``r < epoch_num``, and at least ``gap`` resource
    has passed since the trial was last judged. Then the trial's values so far (at least three
    resources) are fitted with the curve families of ``hyperlab.assessors._curvefit`` and
    predicted at ``epoch_num``. With ``best`` the best final value among the succeeded trials
    and the margin ``m = (1 - threshold) * |best|``, the trial is stopped when

    - ``mode="max"``: the prediction is below ``best - m`` (for positive values, as
      accuracies are, that is NNI's rule: below ``threshold * best``);
    - ``mode="min"``: the prediction is above ``best + m`` (for positive losses: above
      ``(2 - threshold) * best``, 5% worse with the default),

    unless the trial's best value so far already reaches that bound. A trial's final value is
    its objective value (the driver's ``Trial.value``), or its last report when it has none.

    Args:
        epoch_num: The resource at which trials end (epochs a trial runs); required.
        start_step: Judge only from this resource on (NNI's default 6: enough points to fit).
        threshold: How close to the best a prediction must come, as a fraction of ``|best|``.
        gap: Judge a trial again only after this much more resource (every ``gap`` epochs).
        resource_attr: The reported metric that counts the resource; None for ``step + 1``.
        **kwargs: ``mode``, ``metric``, ``seed``, ``space``: the experiment's, passed by the
            framework (see ``Assessor``).

    Example:
        >>> hyperlab.run(train, space, metric="accuracy", mode="max", assessor="curvefit",
        ...              assessor_args={"epoch_num": 20, "start_step": 6})
    """

    def __init__(
        self,
        *,
        epoch_num: int,
        start_step: int = 6,
        threshold: float = 0.95,
        gap: int = 1,
        resource_attr: str | None = None,
        **kwargs: Any,
    ) -> None:
        rules = [
            (epoch_num >= 1, "epoch_num >= 1", "epoch_num", epoch_num),
            (start_step >= 0, "start_step >= 0", "start_step", start_step),
            (threshold > 0, "threshold > 0", "threshold", threshold),
            (gap >= 1, "gap >= 1", "gap", gap),
        ]
        for holds, rule, name, value in rules:
            if not holds:
                raise ConfigError(f"CurveFittingAssessor: `{rule}` must hold, got {name}={value!r}")
        super().__init__(resource_attr=resource_attr, **kwargs)
        # scipy takes half a second to import: pay it now, not at the first judgement, where
        # it would hold the driver's loop up while a trial runs on
        import scipy.optimize  # noqa: F401

        self.epoch_num = epoch_num
        self.start_step = start_step
        self.threshold = threshold
        self.gap = gap
        self._curves: dict[int, dict[float, float]] = {}  # number -> resource -> loss
        self._judged: dict[int, float] = {}  # number -> resource of its last judgement
        self._best: float | None = None  # the best final loss of the succeeded trials
        self.verdicts = Verdicts()

    def on_start(self, trial: Trial, now: float) -> None:
        self.verdicts.started(trial.number)

    def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
        number = trial.number
        known = self.verdicts.known(number, report.attempt)
        if known is not None:
            return known
        loss = self.loss(report)
        resource = self.resource(report)
        curve = self._curves.setdefault(number, {})
        curve[resource] = loss
        best = self._best
        if best is None or resource < self.start_step or resource >= self.epoch_num:
            return Decision.CONTINUE
        last = self._judged.get(number)
        if last is not None and resource - last < self.gap:
            return Decision.CONTINUE
        self._judged[number] = resource
        bound = best + (1.0 - self.threshold) * abs(best)
        if min(curve.values()) <= bound:
            return Decision.CONTINUE
        points = sorted((r / self.epoch_num, y) for r, y in curve.items() if r > 0)
        predicted = predict_final(tuple(t for t, _ in points), tuple(y for _, y in points))
        if predicted is not None and predicted > bound:
            return self.verdicts.stop(number, report.attempt)
        return Decision.CONTINUE

    def on_end(self, trial: Trial, now: float) -> None:
        self.verdicts.ended(trial)
        if trial.status is not TrialStatus.SUCCEEDED:
            return
        final: float | None = None
        if trial.value is not None and math.isfinite(trial.value):
            final = self.mode.sign * trial.value
        else:
            curve = self._curves.get(trial.number)
            if curve:
                final = curve[max(curve)]
        if final is not None and (self._best is None or final < self._best):
            self._best = final

    def __repr__(self) -> str:
        return (
            f"CurveFittingAssessor(epoch_num={self.epoch_num}, start_step={self.start_step}, "
            f"threshold={self.threshold}, gap={self.gap}, mode={self.mode.value!r})"
        )


# ---- the curve model -------------------------------------------------------------------------

_GRID = 24  # log-spaced values of b tried before the bounded refinement
_FAMILIES: dict[str, tuple[Callable[[Any, Any], Any], float, float]] = {
    # name: (basis g(t, b), lowest b, highest b); the curve is c + a * g(t, b)
    "exp": (lambda t, b: np.exp(-b * t), 1e-2, 1e2),
    "pow": (lambda t, b: t**-b, 1e-2, 4.0),
    "hyp": (lambda t, b: 1.0 / (1.0 + b * t), 1e-2, 1e3),
}


@functools.lru_cache(maxsize=4096)
def predict_final(ts: tuple[float, ...], ys: tuple[float, ...]) -> float | None:
    """The value a curve through the points ``(ts[i], ys[i])`` reaches at ``t = 1``: the fits
    of the families above, weighted by their Akaike weights; None with fewer than three points
    (``t > 0``, increasing) or when no fit is finite.
    """
    if len(ts) < 3:
        return None
    t = np.asarray(ts, dtype=float)
    y = np.asarray(ys, dtype=float)
    n = len(t)
    floor = (1e-9 * (float(np.abs(y).max()) + 1e-12)) ** 2  # a perfect fit's mean square
    fits: list[tuple[float, float]] = []  # (AIC, prediction at t = 1)
    _, c, rss = _linear(np.log(t)[None, :], y)
    fits.append((n * math.log(rss[0] / n + floor) + 4, float(c[0])))
    if n >= 4:  # three parameters: keep a residual degree of freedom
        for basis, low, high in _FAMILIES.values():
            fit = _fit_family(basis, low, high, t, y)
            if fit is not None:
                rss1, prediction = fit
                fits.append((n * math.log(rss1 / n + floor) + 6, prediction))
    fits = [(aic, p) for aic, p in fits if math.isfinite(aic) and math.isfinite(p)]
    if not fits:
        return None
    lowest = min(aic for aic, _ in fits)
    weights = [math.exp(-(aic - lowest) / 2) for aic, _ in fits]
    return sum(w * p for w, (_, p) in zip(weights, fits, strict=True)) / sum(weights)


def _linear(g: Any, y: Any) -> tuple[Any, Any, Any]:
    """Least squares of ``y ~ c + a * g`` for each row of ``g``: arrays a, c, rss."""
    gm = g.mean(axis=1)
    gc = g - gm[:, None]
    yc = y - y.mean()
    var = (gc * gc).sum(axis=1)
    flat = var <= 1e-300
    a = np.where(flat, 0.0, (gc @ yc) / np.where(flat, 1.0, var))
    c = y.mean() - a * gm
    residual = y[None, :] - c[:, None] - a[:, None] * g
    return a, c, (residual * residual).sum(axis=1)


def _fit_family(
    basis: Callable[[Any, Any], Any], low: float, high: float, t: Any, y: Any
) -> tuple[float, float] | None:
    """The best ``c + a * basis(t, b)``: a grid over ``log b``, then a bounded refinement
    around the best grid point; its residual sum of squares and value at ``t = 1``."""
    from scipy.optimize import minimize_scalar  # lazily: scipy is slow to import

    grid = np.linspace(math.log(low), math.log(high), _GRID)
    with np.errstate(all="ignore"):
        _, _, rss = _linear(basis(t[None, :], np.exp(grid)[:, None]), y)
    rss = np.where(np.isfinite(rss), rss, np.inf)
    i = int(np.argmin(rss))
    if not math.isfinite(rss[i]):
        return None

    def sse(u: float) -> float:
        with np.errstate(all="ignore"):
            value = float(_linear(basis(t[None, :], math.exp(u)), y)[2][0])
        return value if math.isfinite(value) else math.inf

    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, _GRID - 1)]
    found = minimize_scalar(sse, bounds=(lo, hi), method="bounded", options={"xatol": 1e-4})
    u = float(found.x) if found.fun <= rss[i] else float(grid[i])
    b = math.exp(u)
    with np.errstate(all="ignore"):
        a, c, rss_b = _linear(basis(t[None, :], b), y)
        prediction = float(c[0] + a[0] * basis(np.array([1.0]), b)[0])
    return float(rss_b[0]), prediction
