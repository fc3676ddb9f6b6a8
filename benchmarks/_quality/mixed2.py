"""Family ``mixed2``: twelve mixed spaces with optima known by construction (issue 30).

Categoricals of 3 to 20 options, integers with wide ranges (some log-scaled, kind "logint"),
log-scaled and plain floats, one conditional space. Every objective is a sum of non-negative
terms, each a square (or a table entry) that is zero at one point; the terms are triangular in
the parameters (the best value of one parameter depends on parameters fixed by earlier terms),
so the zero is reached at exactly the optimum listed in ``OPTIMA`` and nowhere else. The best
categorical option is never the first one, and each option moves the best values of the
continuous and integer parameters (so no parameter can be tuned alone). Decoy options and
branches have optima of 0.01 to 0.5.

``OPTIMA`` holds each problem's minimiser (value 0), for the tests and for the reader.
"""

from __future__ import annotations

import math
from typing import Any

from .spaces import Param, Problem, integer


def _l10(value: float, best: float) -> float:
    return math.log10(value) - math.log10(best)


def _l2(value: float, best: float) -> float:
    return math.log2(value) - math.log2(best)


def _fixed(f: Any) -> Any:
    return lambda seed: (f, 0.0)


# ---------------------------------------------------------------- the issue's shape

_OPT5 = ("sgd", "momentum", "adam", "adamw", "rmsprop")
_OPT5_LR = {"sgd": -1.0, "momentum": -1.5, "adam": -3.0, "adamw": -2.8, "rmsprop": -3.5}
_OPT5_X = {"sgd": 0.8, "momentum": 0.6, "adam": 0.3, "adamw": 0.45, "rmsprop": 0.2}
_OPT5_N = {"sgd": 150, "momentum": 120, "adam": 32, "adamw": 48, "rmsprop": 64}
_OPT5_PEN = {"sgd": 0.25, "momentum": 0.12, "adam": 0.04, "adamw": 0.0, "rmsprop": 0.08}
_OPT5_W = {"sgd": 0.5, "momentum": 0.6, "adam": 1.0, "adamw": 1.2, "rmsprop": 0.8}


def mx_issue(p: dict[str, Any]) -> float:
    """lr (log), n (int), x (float), opt (5-way): 0 at adamw, lr=10^-2.8, n=48, x=0.45; each
    optimiser has its own best lr, n and x, and the best x moves with lr, the best n with x."""
    o = p["opt"]
    u = math.log10(p["lr"]) - _OPT5_LR[o]
    dx = p["x"] - _OPT5_X[o] - 0.1 * u
    dn = _l2(integer(p["n"]), _OPT5_N[o]) - 2 * dx
    return _OPT5_PEN[o] + _OPT5_W[o] * u * u / 4 + dx * dx + dn * dn / 50


_SCHED = ("const", "step", "exp", "cosine", "linear")
_SCHED_LR = (-2.0, -3.5, -3.0, -4.0, -2.5)
_SCHED_X = (0.5, -0.4, 0.2, -0.6, 0.7)
_SCHED_N = (10, 80, 25, 60, 40)
_SCHED_PEN = (0.3, 0.06, 0.1, 0.0, 0.04)
_SCHED_W = (1.0, 2.0, 1.0, 1.5, 0.5)


def mx_optim(p: dict[str, Any]) -> float:
    """lr (log 1e-6..0.1), n (int 1..100), x (float -1..1), sched (5-way), the issue's shape
    again: 0 at cosine, lr=1e-4, n=60, x=-0.6; the best lr moves with x, the best n with lr,
    and n has a ripple of period 4 around its best."""
    k = _SCHED.index(p["sched"])
    dx = p["x"] - _SCHED_X[k]
    u = math.log10(p["lr"]) - _SCHED_LR[k] - 0.5 * dx
    n = integer(p["n"])
    dn = (n - _SCHED_N[k] - 8 * u) / 20
    ripple = 0.02 * math.sin(math.pi * (n - _SCHED_N[k]) / 4) ** 2
    return _SCHED_PEN[k] + dx * dx + _SCHED_W[k] * u * u / 4 + dn * dn + ripple


# ---------------------------------------------------------------- a 20-way categorical

_C20 = tuple(f"o{k:02d}" for k in range(20))
_C20_BEST = 14


def _c20(k: int) -> tuple[float, float, int, float]:
    """Option k's best (x, y, n) and penalty."""
    angle = 2 * math.pi * 0.37 * k
    pen = 0.0 if k == _C20_BEST else 0.03 + 0.4 * ((7 * k) % 20) / 19
    return 0.7 * math.cos(angle), 0.7 * math.sin(angle), 50 * k + 13, pen


def mx_cat20(p: dict[str, Any]) -> float:
    """c (20-way), x, y (floats), n (int 1..1000): 0 at o14 and its (x, y, n); an elongated,
    rotated bowl in (x, y) around a point that depends on the option."""
    x0, y0, n0, pen = _c20(int(p["c"][1:]))
    dx, dy = p["x"] - x0, p["y"] - y0
    return pen + (dx + dy) ** 2 + 0.1 * (dx - dy) ** 2 + ((integer(p["n"]) - n0) / 400) ** 2


# ---------------------------------------------------------------- log-scaled integers

_BOOST = ("gbdt", "dart", "goss", "rf")
_BOOST_N2 = {"gbdt": 300, "dart": 1000, "goss": 2048, "rf": 500}
_BOOST_PEN = {"gbdt": 0.02, "dart": 0.05, "goss": 0.0, "rf": 0.1}


def mx_gbm(p: dict[str, Any]) -> float:
    """n1 (log int 1..1000), n2 (log int 1..10^4), lr (log), boost (4-way): 0 at goss, n1=37,
    n2=2048, lr=10^-3; n2's best depends on the booster and n1, lr's on n2."""
    b = p["boost"]
    u1 = _l10(integer(p["n1"]), 37)
    u2 = _l10(integer(p["n2"]), _BOOST_N2[b]) - 0.5 * u1
    u3 = math.log10(p["lr"]) + 3 + 0.5 * u2
    return _BOOST_PEN[b] + u1 * u1 / 2 + u2 * u2 / 2 + u3 * u3 / 4


# ---------------------------------------------------------------- wide linear integers

_LOSS = ("l1", "l2", "huber")
_LOSS_A = {"l1": 200, "l2": 850, "huber": 613}
_LOSS_D = {"l1": -300, "l2": 250, "huber": -121}
_LOSS_PEN = {"l1": 0.05, "l2": 0.02, "huber": 0.0}


def mx_wide_int(p: dict[str, Any]) -> float:
    """n1 (int 1..1000), n2 (int -500..500), x (float), loss (3-way): 0 at huber, n1=613,
    n2=-121, x=0.613; n2's best moves with n1, x's best is n1 / 1000."""
    loss, n1, n2 = p["loss"], integer(p["n1"]), integer(p["n2"])
    d1 = (n1 - _LOSS_A[loss]) / 250
    d2 = (n2 - _LOSS_D[loss] - 0.5 * (n1 - _LOSS_A[loss])) / 250
    return _LOSS_PEN[loss] + d1 * d1 + d2 * d2 + (p["x"] - n1 / 1000) ** 2


# ---------------------------------------------------------------- a conditional space

_METRICS = ("euclidean", "manhattan", "chebyshev", "minkowski", "cosine", "hamming")
_CRIT = ("gini", "entropy", "log_loss")
_PENS = ("l2", "l1", "elasticnet", "none")


def mx_model(p: dict[str, Any]) -> float:
    """w (float) and a model (tree / linear / knn, each with its own ints, log scales and a
    categorical): 0 in knn with k=17, metric=minkowski, p=1.5 and w=0.25; the tree's optimum is
    0.03, the linear model's 0.05; w's best depends on the branch."""
    m = p["model"]
    if m["_name"] == "tree":
        crit = {"gini": 0.02, "entropy": 0.0, "log_loss": 0.01}[m["crit"]]
        depth = integer(m["depth"])
        f = 0.03 + crit + ((depth - 12) / 10) ** 2
        f += (_l2(integer(m["leaves"]), 2 ** (depth / 2)) / 4) ** 2
        return f + (p["w"] + 0.5) ** 2
    if m["_name"] == "linear":
        pen = {"l2": 0.0, "l1": 0.02, "elasticnet": 0.01, "none": 0.1}[m["penalty"]]
        return 0.05 + pen + (_l10(m["C"], 3.0) / 3) ** 2 + (p["w"] - 0.8) ** 2
    metric = {"euclidean": 0.02, "manhattan": 0.03, "chebyshev": 0.1, "minkowski": 0.0}
    f = metric.get(m["metric"], 0.2) + (_l2(integer(m["k"]), 17) / 3) ** 2
    f += (m["p"] - 1.5 - 0.2 * _l2(integer(m["k"]), 17)) ** 2
    return f + (p["w"] - 0.25 + 0.1 * (m["p"] - 1.5)) ** 2


# ---------------------------------------------------------------- interacting categoricals

_K1, _K2, _K3 = 3, 7, 12
_CATS_LR = (-2.0, -3.0, -4.0)


def _ring(a: int, b: int, n: int) -> int:
    return min((a - b) % n, (b - a) % n)


def mx_cats(p: dict[str, Any]) -> float:
    """c1 (3), c2 (7), c3 (12 options), x (float), lr (log): 0 at c1=b, c2=g5, c3=h4 (the best
    c3 depends on c2, the best c2 on c1), x=0.5 (depends on c2), lr=10^-3 (depends on c1)."""
    k1 = "abc".index(p["c1"])
    k2, k3 = int(p["c2"][1:]), int(p["c3"][1:])
    best2 = (2 * k1 + 3) % _K2  # 5 for b
    table = 0.0 if (k1, k2) == (1, 5) else 0.02 + 0.03 * _ring(k2, best2, _K2) + 0.02 * (k1 != 1)
    f = table + 0.015 * _ring(k3, (3 * k2 + 1) % _K3, _K3)
    f += (p["x"] - 0.1 * k2) ** 2 + (math.log10(p["lr"]) - _CATS_LR[k1]) ** 2 / 9
    return f


# ---------------------------------------------------------------- option-dependent relevance

_SPARSE = ("a", "b", "c", "d", "e", "f")


def _sparse_target(k: int, i: int) -> float:
    return 0.5 + 0.4 * math.sin(1.7 * k + 2.3 * i)


def mx_sparse(p: dict[str, Any]) -> float:
    """mode (6-way), x0..x5 (floats), n (log int 1..1000): 0 at mode=e with x_i =
    0.5 + 0.4 sin(6.8 + 2.3 i) and n=100; each mode weighs three of the x heavily and the others
    lightly, with its own targets; n's best moves with x0."""
    k = _SPARSE.index(p["mode"])
    f = 0.0 if k == 4 else 0.02 + 0.02 * k
    for i in range(6):
        weight = 1.0 if (i - k) % 6 < 3 else 0.05
        f += weight * (p[f"x{i}"] - _sparse_target(k, i)) ** 2
    u = _l10(integer(p["n"]), 100) - (p["x0"] - _sparse_target(k, 0))
    return f + u * u / 4


# ---------------------------------------------------------------- a valley that moves

_VALLEY = ("v0", "v1", "v2", "v3", "v4")
_VALLEY_SHIFT = (0.5, -0.3, 0.2, -0.5, 0.0)
_VALLEY_PEN = (0.05, 0.02, 0.0, 0.1, 0.03)
_VALLEY_N = (4, 60, 20, 9, 90)


def mx_valley(p: dict[str, Any]) -> float:
    """v (5-way), x0..x2 (floats in [-2, 2]), n (log int 1..100): a Rosenbrock valley shifted
    by the option; 0 at v2, x_i = 1.2, n=20."""
    k = int(p["v"][1:])
    s = _VALLEY_SHIFT[k]
    x = [p[f"x{i}"] - s for i in range(3)]
    rosen = sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(2))
    return _VALLEY_PEN[k] + rosen / 100 + _l2(integer(p["n"]), _VALLEY_N[k]) ** 2 / 20


# ---------------------------------------------------------------- numeric options, coupled

_BATCHES = (64, 8, 1024, 32, 256, 16, 4096, 128, 512, 2048)


def mx_batch(p: dict[str, Any]) -> float:
    """batch (10 numeric options, unordered), lr (log 1e-6..1), momentum (float), epochs (int
    1..1000): 0 at batch=256, lr=10^-3, momentum=0.9, epochs=300; the best lr grows with the
    batch (linear scaling), the best epochs shrink with it."""
    b = p["batch"]
    u = _l2(b, 256)
    f = 0.01 * u * u
    f += (math.log10(p["lr"]) + 3 - 0.3 * u) ** 2 / 4
    f += ((p["momentum"] - 0.9) / 0.3) ** 2
    return f + ((integer(p["epochs"]) - 300 * 2 ** (-u / 2)) / 300) ** 2


# ---------------------------------------------------------------- depth and width

_ACTS = ("relu", "tanh", "gelu", "elu", "mish", "silu")
_ACT_PEN = {"relu": 0.03, "tanh": 0.2, "gelu": 0.01, "elu": 0.05, "mish": 0.0, "silu": 0.02}
_ACT_DROP = {"relu": 0.5, "tanh": 0.1, "gelu": 0.3, "elu": 0.4, "mish": 0.2, "silu": 0.25}


def mx_width(p: dict[str, Any]) -> float:
    """layers (int 1..8), width (log int 8..1024), dropout (float), act (6-way), wd (log): 0 at
    mish, layers=3, width=128, dropout=0.2, wd=10^-4; the best width halves per extra layer, the
    best dropout depends on the activation and the depth."""
    layers, a = integer(p["layers"]), p["act"]
    f = _ACT_PEN[a] + ((layers - 3) / 3) ** 2
    f += (_l2(integer(p["width"]), 128) + (layers - 3)) ** 2 / 10
    f += (p["dropout"] - _ACT_DROP[a] - 0.03 * (layers - 3)) ** 2
    return f + (_l10(p["wd"], 1e-4) - 0.5 * (layers - 3)) ** 2 / 16


# ---------------------------------------------------------------- a chain of categoricals

_CHAIN_SIZES = (3, 4, 5, 8, 12, 20)
_CHAIN_BEST = (2, 1, 3, 6, 9, 11)


def mx_chain(p: dict[str, Any]) -> float:
    """c0..c5 (3, 4, 5, 8, 12 and 20 options), x, y (floats): 0 at c_i = option
    ``_CHAIN_BEST[i]``, x=0.75 (depends on c0), y=0.3 (depends on c5 and x); every pair of
    neighbours interacts (a table, zero at both best options)."""
    k = [int(p[f"c{i}"][1:]) for i in range(6)]
    d = [(k[i] - _CHAIN_BEST[i]) % n for i, n in enumerate(_CHAIN_SIZES)]
    f = sum(0.01 * (d[i] != 0) for i in range(6))
    f += sum(0.02 * ((7 * d[i] + 3 * d[i + 1]) % 4) for i in range(5))
    dx = p["x"] - (k[0] + 1) / 4
    return f + dx * dx + (p["y"] - 0.3 - 0.02 * d[5] - 0.2 * dx) ** 2


# ---------------------------------------------------------------- the registry

OPTIMA: dict[str, dict[str, Any]] = {
    "mx-issue4": {"lr": 10**-2.8, "n": 48, "x": 0.45, "opt": "adamw"},
    "mx-optim": {"lr": 1e-4, "n": 60, "x": -0.6, "sched": "cosine"},
    "mx-cat20": {
        "c": "o14",
        "x": _c20(_C20_BEST)[0],
        "y": _c20(_C20_BEST)[1],
        "n": _c20(_C20_BEST)[2],
    },
    "mx-gbm": {"n1": 37, "n2": 2048, "lr": 1e-3, "boost": "goss"},
    "mx-wide-int": {"n1": 613, "n2": -121, "x": 0.613, "loss": "huber"},
    "mx-model": {
        "w": 0.25,
        "model": {"_name": "knn", "k": 17, "metric": "minkowski", "p": 1.5},
    },
    "mx-cats": {"c1": "b", "c2": "g5", "c3": "h4", "x": 0.5, "lr": 1e-3},
    "mx-sparse": {
        "mode": "e",
        **{f"x{i}": _sparse_target(4, i) for i in range(6)},
        "n": 100,
    },
    "mx-valley": {"v": "v2", "x0": 1.2, "x1": 1.2, "x2": 1.2, "n": 20},
    "mx-batch": {"batch": 256, "lr": 1e-3, "momentum": 0.9, "epochs": 300},
    "mx-width": {"layers": 3, "width": 128, "dropout": 0.2, "act": "mish", "wd": 1e-4},
    "mx-chain": {
        **{f"c{i}": f"k{b}" for i, b in enumerate(_CHAIN_BEST)},
        "x": 0.75,
        "y": 0.3,
    },
}
"""Each problem's minimiser; the objective is 0 there and positive elsewhere."""


def _cat(name: str, options: tuple[Any, ...]) -> Param:
    return Param(name, "cat", options=options)


_COND = (
    Param("w", "float", -1.0, 1.0),
    Param(
        "model",
        "cond",
        branches=(
            (
                "tree",
                (
                    Param("depth", "int", 1, 30),
                    Param("leaves", "logint", 2, 1000),
                    _cat("crit", _CRIT),
                ),
            ),
            ("linear", (Param("C", "logfloat", 1e-4, 1e4), _cat("penalty", _PENS))),
            (
                "knn",
                (
                    Param("k", "logint", 1, 500),
                    _cat("metric", _METRICS),
                    Param("p", "float", 1.0, 3.0),
                ),
            ),
        ),
    ),
)


def mixed2_problems() -> list[Problem]:
    """The twelve problems of family ``mixed2``."""
    m = "mixed2"
    spaces: dict[str, tuple[Param, ...]] = {
        "mx-issue4": (
            Param("lr", "logfloat", 1e-5, 1.0),
            Param("n", "int", 1, 200),
            Param("x", "float", 0.0, 1.0),
            _cat("opt", _OPT5),
        ),
        "mx-optim": (
            Param("lr", "logfloat", 1e-6, 1e-1),
            Param("n", "int", 1, 100),
            Param("x", "float", -1.0, 1.0),
            _cat("sched", _SCHED),
        ),
        "mx-cat20": (
            _cat("c", _C20),
            Param("x", "float", -1.0, 1.0),
            Param("y", "float", -1.0, 1.0),
            Param("n", "int", 1, 1000),
        ),
        "mx-gbm": (
            Param("n1", "logint", 1, 1000),
            Param("n2", "logint", 1, 10000),
            Param("lr", "logfloat", 1e-6, 1e-1),
            _cat("boost", _BOOST),
        ),
        "mx-wide-int": (
            Param("n1", "int", 1, 1000),
            Param("n2", "int", -500, 500),
            Param("x", "float", 0.0, 1.0),
            _cat("loss", _LOSS),
        ),
        "mx-model": _COND,
        "mx-cats": (
            _cat("c1", ("a", "b", "c")),
            _cat("c2", tuple(f"g{i}" for i in range(_K2))),
            _cat("c3", tuple(f"h{i}" for i in range(_K3))),
            Param("x", "float", 0.0, 1.0),
            Param("lr", "logfloat", 1e-6, 1e-1),
        ),
        "mx-sparse": (
            _cat("mode", _SPARSE),
            *(Param(f"x{i}", "float", 0.0, 1.0) for i in range(6)),
            Param("n", "logint", 1, 1000),
        ),
        "mx-valley": (
            _cat("v", _VALLEY),
            *(Param(f"x{i}", "float", -2.0, 2.0) for i in range(3)),
            Param("n", "logint", 1, 100),
        ),
        "mx-batch": (
            _cat("batch", _BATCHES),
            Param("lr", "logfloat", 1e-6, 1.0),
            Param("momentum", "float", 0.0, 0.99),
            Param("epochs", "int", 1, 1000),
        ),
        "mx-width": (
            Param("layers", "int", 1, 8),
            Param("width", "logint", 8, 1024),
            Param("dropout", "float", 0.0, 0.8),
            _cat("act", _ACTS),
            Param("wd", "logfloat", 1e-7, 1e-1),
        ),
        "mx-chain": (
            *(_cat(f"c{i}", tuple(f"k{j}" for j in range(n))) for i, n in enumerate(_CHAIN_SIZES)),
            Param("x", "float", 0.0, 1.0),
            Param("y", "float", 0.0, 1.0),
        ),
    }
    objectives = {
        "mx-issue4": mx_issue,
        "mx-optim": mx_optim,
        "mx-cat20": mx_cat20,
        "mx-gbm": mx_gbm,
        "mx-wide-int": mx_wide_int,
        "mx-model": mx_model,
        "mx-cats": mx_cats,
        "mx-sparse": mx_sparse,
        "mx-valley": mx_valley,
        "mx-batch": mx_batch,
        "mx-width": mx_width,
        "mx-chain": mx_chain,
    }
    return [Problem(n, m, spaces[n], _fixed(objectives[n])) for n in objectives]
