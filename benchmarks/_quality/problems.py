"""Classic test functions, and mixed and conditional spaces with optima known by construction.

The classic functions and their optima are the standard ones of the literature, as listed (with
domains and minimisers) in S. Surjanovic and D. Bingham, *Virtual Library of Simulation
Experiments: Test Functions and Datasets*, Simon Fraser University (sfu.ca/~ssurjano); the
optima of Hartmann-3, Shekel-10 and Michalewicz-5 were refined here to ~1e-13 with scipy's
local optimisers from the published minimisers (the published values have 5-6 digits).

The mixed and conditional objectives are sums of non-negative terms, each zero at one value of
its parameter, plus a penalty per categorical option or branch; so the optimum is 0, reached
only in the branch whose penalty is 0, and the other branches are decoys with optima of 0.02 to
0.05. Some terms couple parameters (the best value of one depends on another).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .spaces import Objective, Param, Problem, floats, vector


def fixed(f: Objective, f_opt: float) -> Any:
    """``Problem.instance`` of a problem without instances."""
    return lambda seed: (f, f_opt)


# ---------------------------------------------------------------- classic


def branin(p: dict[str, Any]) -> float:
    x1, x2 = p["x1"], p["x2"]
    b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


def goldstein_price(p: dict[str, Any]) -> float:
    x1, x2 = p["x0"], p["x1"]
    a = 1 + (x1 + x2 + 1) ** 2 * (19 - 14 * x1 + 3 * x1**2 - 14 * x2 + 6 * x1 * x2 + 3 * x2**2)
    b = 30 + (2 * x1 - 3 * x2) ** 2 * (
        18 - 32 * x1 + 12 * x1**2 + 48 * x2 - 36 * x1 * x2 + 27 * x2**2
    )
    return a * b


_H_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_H3_A = np.array([[3, 10, 30], [0.1, 10, 35], [3, 10, 30], [0.1, 10, 35]])
_H3_P = 1e-4 * np.array(
    [[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]]
)
_H6_A = np.array(
    [
        [10, 3, 17, 3.5, 1.7, 8],
        [0.05, 10, 17, 0.1, 8, 14],
        [3, 3.5, 1.7, 10, 17, 8],
        [17, 8, 0.05, 10, 0.1, 14],
    ]
)
_H6_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)


def _hartmann(x: np.ndarray, a: np.ndarray, p: np.ndarray) -> float:
    return float(-(_H_ALPHA * np.exp(-(a * (x - p) ** 2).sum(axis=1))).sum())


def hartmann3(p: dict[str, Any]) -> float:
    return _hartmann(vector(p, 3), _H3_A, _H3_P)


def hartmann6(p: dict[str, Any]) -> float:
    return _hartmann(vector(p, 6), _H6_A, _H6_P)


_SHEKEL_BETA = 0.1 * np.array([1, 2, 2, 4, 4, 6, 3, 7, 5, 5])
_SHEKEL_C = np.array(
    [
        [4, 1, 8, 6, 3, 2, 5, 8, 6, 7],
        [4, 1, 8, 6, 7, 9, 3, 1, 2, 3.6],
        [4, 1, 8, 6, 3, 2, 5, 8, 6, 7],
        [4, 1, 8, 6, 7, 9, 3, 1, 2, 3.6],
    ]
)


def shekel10(p: dict[str, Any]) -> float:
    x = vector(p, 4)
    return float(-(1 / (((x[:, None] - _SHEKEL_C) ** 2).sum(axis=0) + _SHEKEL_BETA)).sum())


def rosenbrock(p: dict[str, Any]) -> float:
    x = vector(p, len(p))
    return float((100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum())


def ackley(p: dict[str, Any]) -> float:
    x = vector(p, len(p))
    d = len(x)
    return float(
        -20 * math.exp(-0.2 * math.sqrt((x**2).sum() / d))
        - math.exp(np.cos(2 * math.pi * x).sum() / d)
        + 20
        + math.e
    )


def michalewicz(p: dict[str, Any]) -> float:
    x = vector(p, len(p))
    i = np.arange(1, len(x) + 1)
    return float(-(np.sin(x) * np.sin(i * x**2 / math.pi) ** 20).sum())


def levy(p: dict[str, Any]) -> float:
    w = 1 + (vector(p, len(p)) - 1) / 4
    head = math.sin(math.pi * w[0]) ** 2
    mid = ((w[:-1] - 1) ** 2 * (1 + 10 * np.sin(math.pi * w[:-1] + 1) ** 2)).sum()
    tail = (w[-1] - 1) ** 2 * (1 + math.sin(2 * math.pi * w[-1]) ** 2)
    return float(head + mid + tail)


def styblinski_tang(p: dict[str, Any]) -> float:
    x = vector(p, len(p))
    return float((x**4 - 16 * x**2 + 5 * x).sum() / 2)


# ---------------------------------------------------------------- mixed and conditional

_SHIFT = {"a": -0.5, "b": 0.3, "c": 0.6, "d": 0.0}
_PENALTY = {"a": 0.3, "b": 0.0, "c": 0.2, "d": 0.5}


def mixed(p: dict[str, Any]) -> float:
    """0 at lr=1e-3, x=0.3, n=7, c="b"; the best x depends on c."""
    c = p["c"]
    return (
        (math.log10(p["lr"]) + 3) ** 2 / 4
        + (p["x"] - _SHIFT[c]) ** 2
        + ((p["n"] - 7) / 5) ** 2
        + _PENALTY[c]
    )


def _dlog(value: float, best: float) -> float:
    return math.log10(value) - math.log10(best)


def cond_model(p: dict[str, Any]) -> float:
    """0 in branch a (lr=1e-3, x=0.3, n=40) with w=0.5; b's optimum 0.02, c's 0.05."""
    m = p["model"]
    if m["_name"] == "a":
        term, w_best = _dlog(m["lr"], 1e-3) ** 2 / 4 + (m["x"] - 0.3) ** 2, 0.5
        term += ((m["n"] - 40) / 32) ** 2
    elif m["_name"] == "b":
        term, w_best = 0.02 + ((m["depth"] - 7) / 6) ** 2 + ((m["y"] - 2.5) / 5) ** 2, -1.0
    else:
        kernel = {"poly": 0.0, "rbf": 0.1, "linear": 0.2, "sigmoid": 0.3}[m["kernel"]]
        term, w_best = 0.05 + kernel + _dlog(m["gamma"], 0.05) ** 2 / 4, 1.5
    return term + (p["w"] - w_best) ** 2 / 4


def nested_opt(p: dict[str, Any]) -> float:
    """0 with adam and a cosine schedule (two nested levels); sgd's optimum is 0.03."""
    o = p["optimizer"]
    f = abs(math.log2(p["batch"] / 64)) * 0.05 + ((p["layers"] - 3) / 4) ** 2
    f += (p["dropout"] - (0.05 * p["layers"] + 0.05)) ** 2 + _dlog(p["wd"], 1e-4) ** 2 / 16
    if o["_name"] == "sgd":
        f += 0.03 + _dlog(o["lr"], 0.05) ** 2 / 4 + (o["momentum"] - 0.9) ** 2
        return f + (0.0 if o["nesterov"] else 0.02)
    f += _dlog(o["lr"], 3e-4) ** 2 / 4 + ((o["beta1"] - 0.9) / 0.5) ** 2
    s = o["schedule"]
    if s["_name"] == "constant":
        return f + 0.04
    if s["_name"] == "cosine":
        return f + ((s["warmup"] - 5) / 10) ** 2
    return f + 0.02 + (s["gamma"] - 0.5) ** 2 + ((s["every"] - 3) / 5) ** 2


_TABLE = {
    "a": (0.3, 0.2, 0.25, 0.1, 0.15, 0.2),
    "b": (0.2, 0.3, 0.1, 0.25, 0.0, 0.15),
    "c": (0.05, 0.1, 0.3, 0.2, 0.25, 0.02),
}
_N2_BEST = {"a": 20, "b": 37, "c": 80}


def int_cat(p: dict[str, Any]) -> float:
    """0 at c1=b, c2=k4, c3=k6, n1=7, n2=37, n3=613, x=0.7; best c2, n2 and x depend on others."""
    c1, k2, k3 = p["c1"], int(p["c2"][1:]), int(p["c3"][1:])
    f = _TABLE[c1][k2] + ((p["n1"] - 7) / 9) ** 2 + ((p["n2"] - _N2_BEST[c1]) / 100) ** 2
    f += abs(p["n3"] - 613) / 1000 + 0.01 * min(abs(k3 - 6), 10 - abs(k3 - 6))
    return f + (p["x"] - 0.1 * p["n1"]) ** 2


_LOG_BEST = (3e-3, 50.0, 0.2, 1e-6, 0.5, 2e4)
_LOG_RANGE = ((1e-6, 1e2), (1e-4, 1e4), (1e-3, 1.0), (1e-8, 1e-2), (1e-2, 1e3), (1.0, 1e6))


def log_wide(p: dict[str, Any]) -> float:
    """0 at the ``_LOG_BEST`` values, k1=12, k2=2, act=gelu, norm=layer; correlated in logs."""
    v = [
        _dlog(p[f"a{i}"], best) / math.log10(high / low)
        for i, (best, (low, high)) in enumerate(zip(_LOG_BEST, _LOG_RANGE, strict=True))
    ]
    f = sum(x * x for x in v) + 4 * (v[0] - v[1]) ** 2 + 4 * (v[2] + v[3]) ** 2
    f += ((p["k1"] - 12) / 19) ** 2 + ((p["k2"] - 2) / 4) ** 2
    f += {"gelu": 0.0, "relu": 0.05, "silu": 0.1, "tanh": 0.2}[p["act"]]
    return f + {"layer": 0.0, "batch": 0.03, "none": 0.1}[p["norm"]]


# ---------------------------------------------------------------- the registry

_NESTED_OPT = (
    Param("batch", "cat", options=(16, 32, 64, 128, 256)),
    Param("layers", "int", 1, 8),
    Param("dropout", "float", 0.0, 0.8),
    Param("wd", "logfloat", 1e-6, 1e-1),
    Param(
        "optimizer",
        "cond",
        branches=(
            (
                "sgd",
                (
                    Param("lr", "logfloat", 1e-4, 1.0),
                    Param("momentum", "float", 0.0, 0.99),
                    Param("nesterov", "cat", options=(True, False)),
                ),
            ),
            (
                "adam",
                (
                    Param("lr", "logfloat", 1e-5, 1e-1),
                    Param("beta1", "float", 0.5, 0.999),
                    Param(
                        "schedule",
                        "cond",
                        branches=(
                            ("constant", ()),
                            ("cosine", (Param("warmup", "int", 0, 20),)),
                            (
                                "step",
                                (Param("gamma", "float", 0.1, 0.9), Param("every", "int", 1, 10)),
                            ),
                        ),
                    ),
                ),
            ),
        ),
    ),
)

_COND_MODEL = (
    Param("w", "float", -2.0, 2.0),
    Param(
        "model",
        "cond",
        branches=(
            (
                "a",
                (
                    Param("lr", "logfloat", 1e-5, 1.0),
                    Param("x", "float", -1.0, 1.0),
                    Param("n", "int", 1, 64),
                ),
            ),
            ("b", (Param("depth", "int", 1, 12), Param("y", "float", 0.0, 10.0))),
            (
                "c",
                (
                    Param("kernel", "cat", options=("rbf", "poly", "linear", "sigmoid")),
                    Param("gamma", "logfloat", 1e-4, 10.0),
                ),
            ),
        ),
    ),
)

_INT_CAT = (
    Param("n1", "int", 1, 10),
    Param("n2", "int", 0, 100),
    Param("n3", "int", 1, 1000),
    Param("c1", "cat", options=("a", "b", "c")),
    Param("c2", "cat", options=tuple(f"k{i}" for i in range(6))),
    Param("c3", "cat", options=tuple(f"k{i}" for i in range(10))),
    Param("x", "float", 0.0, 1.0),
)

_LOG_WIDE = (
    *(Param(f"a{i}", "logfloat", low, high) for i, (low, high) in enumerate(_LOG_RANGE)),
    Param("k1", "int", 1, 20),
    Param("k2", "int", 1, 5),
    Param("act", "cat", options=("relu", "tanh", "gelu", "silu")),
    Param("norm", "cat", options=("batch", "layer", "none")),
)


def local_problems() -> list[Problem]:
    """The classic and the mixed / conditional problems."""
    c, m = "classic", "mixed"
    return [
        Problem(
            "branin",
            c,
            (Param("x1", "float", -5, 10), Param("x2", "float", 0, 15)),
            fixed(branin, 0.397887357729738),
        ),
        Problem("goldstein-price", c, floats(2, -2, 2), fixed(goldstein_price, 3.0)),
        Problem("hartmann3", c, floats(3, 0, 1), fixed(hartmann3, -3.862779787332663)),
        Problem("shekel10", c, floats(4, 0, 10), fixed(shekel10, -10.53644315348353)),
        Problem("michalewicz5", c, floats(5, 0, math.pi), fixed(michalewicz, -4.687658179088144)),
        Problem("hartmann6", c, floats(6, 0, 1), fixed(hartmann6, -3.32236801141551)),
        Problem("rosenbrock5", c, floats(5, -5, 10), fixed(rosenbrock, 0.0)),
        Problem("ackley5", c, floats(5, -32.768, 32.768), fixed(ackley, 0.0)),
        Problem("levy6", c, floats(6, -10, 10), fixed(levy, 0.0)),
        Problem(
            "styblinski-tang6", c, floats(6, -5, 5), fixed(styblinski_tang, -234.99699422262853)
        ),
        Problem(
            "mixed",
            m,
            (
                Param("lr", "logfloat", 1e-5, 1.0),
                Param("x", "float", -1, 1),
                Param("n", "int", 1, 19),
                Param("c", "cat", options=("a", "b", "c", "d")),
            ),
            fixed(mixed, 0.0),
        ),
        Problem("cond-model", m, _COND_MODEL, fixed(cond_model, 0.0)),
        Problem("nested-opt", m, _NESTED_OPT, fixed(nested_opt, 0.0)),
        Problem("int-cat", m, _INT_CAT, fixed(int_cat, 0.0)),
        Problem("log-wide", m, _LOG_WIDE, fixed(log_wide, 0.0)),
    ]
