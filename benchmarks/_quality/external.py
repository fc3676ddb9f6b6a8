"""COCO's BBOB functions and the scikit-learn tuning problems.

BBOB (``cocoex``, the COCO platform's experimentation module): the 24 noiseless functions in
dimensions 2, 5 and 10, one problem per (function, dimension), named ``bbob-f01-d05``. Seed
``s`` runs instance ``1 + s % 3``: these are the problems of ``cocoex.Suite("bbob", "",
"dimensions: 2,5,10 instance_indices: 1-3")``, built one at a time as ``cocoex.BareProblem``
(same values, no observer, so nothing is written to disk). The box is COCO's ``[-5, 5]^d``;
``f_opt`` is the instance's exact optimum, ``BareProblem.best_value()`` (COCO's final target
``final_target_fvalue1`` is ``f_opt + 1e-8``).

scikit-learn (bundled data sets, 3-fold stratified cross-validation with a fixed shuffle,
``n_jobs=1``; each evaluation takes about 5-20 ms; evaluations of identical parameters are
cached per process, since the objective is deterministic):

- ``svm-cancer``: ``SVC(C, gamma)`` (both log-scaled) on breast_cancer, standardised;
  objective 1 - mean CV accuracy.
- ``model-cancer``: a conditional model choice on breast_cancer: a scaler (standard, min-max,
  robust) and one of SVC (C, gamma), logistic regression (C), k-nearest neighbours (k,
  weights) or a decision tree (depth, leaf size, criterion), each with its own parameters;
  objective 1 - mean CV accuracy.
- ``enet-diabetes``: polynomial features (degree 1-3), standardised, then ``ElasticNet(alpha,
  l1_ratio)`` on diabetes; objective the CV mean squared error over the target's variance.

Their optimum is unknown: ``f_opt`` is None and the report measures regret against the best
value any contender reached (see ``report``). Their regret floor is the objective's resolution
rather than 1e-8 of its scale: half a misclassified sample (0.5 / 569) for the accuracy
problems, so one more error than the best run doubles the regret, and 1e-4 for the elastic net
(its CV error, about 0.5, has a standard error near 0.02).
"""

from __future__ import annotations

import functools
import json
import warnings
from typing import Any

import numpy as np

from .spaces import Objective, Param, Problem, floats

DIMENSIONS = (2, 5, 10)
INSTANCES = 3


def _bbob_instance(function: int, dimension: int) -> Any:
    def instance(seed: int) -> tuple[Objective, float]:
        import cocoex

        problem = cocoex.BareProblem("bbob", function, dimension, 1 + seed % INSTANCES)
        names = [f"x{i}" for i in range(dimension)]

        def f(p: dict[str, Any]) -> float:
            return float(problem(np.array([p[n] for n in names], dtype=float)))

        return f, float(problem.best_value())

    return instance


def bbob_problems() -> list[Problem]:
    """The 72 BBOB problems: 24 functions x 3 dimensions."""
    return [
        Problem(
            f"bbob-f{fid:02d}-d{d:02d}",
            "bbob",
            floats(d, -5.0, 5.0),
            _bbob_instance(fid, d),
        )
        for d in DIMENSIONS
        for fid in range(1, 25)
    ]


# ---------------------------------------------------------------- scikit-learn


@functools.cache
def _data(name: str) -> tuple[np.ndarray, np.ndarray]:
    from sklearn import datasets

    loader = {"cancer": datasets.load_breast_cancer, "diabetes": datasets.load_diabetes}[name]
    X, y = loader(return_X_y=True)
    return X, (y / y.std() if name == "diabetes" else y)


def _cv_score(model: Any, data: str, scoring: str) -> float:
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score

    X, y = _data(data)
    kind = KFold if scoring == "neg_mean_squared_error" else StratifiedKFold
    cv = kind(n_splits=3, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings at extreme parameters
        return float(cross_val_score(model, X, y, cv=cv, scoring=scoring, n_jobs=1).mean())


def _scaler(name: str) -> Any:
    from sklearn import preprocessing

    return {
        "standard": preprocessing.StandardScaler,
        "minmax": preprocessing.MinMaxScaler,
        "robust": preprocessing.RobustScaler,
    }[name]()


def _svm_cancer(p: dict[str, Any]) -> float:
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import SVC

    model = make_pipeline(_scaler("standard"), SVC(C=p["C"], gamma=p["gamma"]))
    return 1.0 - _cv_score(model, "cancer", "accuracy")


def _model_cancer(p: dict[str, Any]) -> float:
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    m = p["model"]
    if m["_name"] == "svc":
        model: Any = SVC(C=m["C"], gamma=m["gamma"])
    elif m["_name"] == "logreg":
        model = LogisticRegression(C=m["C"], max_iter=200)
    elif m["_name"] == "knn":
        model = KNeighborsClassifier(n_neighbors=m["k"], weights=m["weights"])
    else:
        model = DecisionTreeClassifier(
            max_depth=m["depth"],
            min_samples_leaf=m["leaf"],
            criterion=m["criterion"],
            random_state=0,
        )
    return 1.0 - _cv_score(make_pipeline(_scaler(p["scaler"]), model), "cancer", "accuracy")


def _enet_diabetes(p: dict[str, Any]) -> float:
    from sklearn.linear_model import ElasticNet
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler

    model = make_pipeline(
        PolynomialFeatures(p["degree"], include_bias=False),
        StandardScaler(),
        ElasticNet(alpha=p["alpha"], l1_ratio=p["l1_ratio"], max_iter=300, tol=1e-3),
    )
    return -_cv_score(model, "diabetes", "neg_mean_squared_error")


def _cached(f: Objective) -> Objective:
    """``f`` with a per-process cache of its values by parameters (the objectives are pure)."""
    cache = functools.lru_cache(maxsize=200_000)(lambda key: f(json.loads(key)))
    return lambda p: cache(json.dumps(p, sort_keys=True, default=lambda v: v.item()))


_SVM = (Param("C", "logfloat", 1e-2, 1e3), Param("gamma", "logfloat", 1e-5, 10.0))
_MODEL = (
    Param("scaler", "cat", options=("standard", "minmax", "robust")),
    Param(
        "model",
        "cond",
        branches=(
            ("svc", _SVM),
            ("logreg", (Param("C", "logfloat", 1e-4, 1e4),)),
            (
                "knn",
                (
                    Param("k", "int", 1, 50),
                    Param("weights", "cat", options=("uniform", "distance")),
                ),
            ),
            (
                "tree",
                (
                    Param("depth", "int", 1, 20),
                    Param("leaf", "int", 1, 50),
                    Param("criterion", "cat", options=("gini", "entropy")),
                ),
            ),
        ),
    ),
)
_ENET = (
    Param("degree", "int", 1, 3),
    Param("alpha", "logfloat", 1e-5, 10.0),
    Param("l1_ratio", "float", 0.0, 1.0),
)


def sklearn_problems() -> list[Problem]:
    """The scikit-learn tuning problems (optimum unknown)."""
    out = []
    for name, params, f, floor in (
        ("svm-cancer", _SVM, _svm_cancer, 0.5 / 569),
        ("model-cancer", _MODEL, _model_cancer, 0.5 / 569),
        ("enet-diabetes", _ENET, _enet_diabetes, 1e-4),
    ):
        g = _cached(f)
        out.append(Problem(name, "sklearn", params, lambda s, g=g: (g, None), floor, cost=1.5))
    return out
