"""``optuna.visualization`` on hyperlab: the same study built in Optuna and in hyperlab (the
same enqueued parameters, a deterministic objective, intermediate values and pruned trials)
gives figures with Optuna's traces, titles, axes and data."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import hyperlab.compat.optuna as hl

pytest.importorskip("plotly", reason="optuna.visualization draws with plotly, not installed")

PARAMS = [
    {
        "x": 0.1 * i - 0.3,
        "n": i % 4 + 1,
        "c": ["a", "b", "c"][i % 3],
        "lr": 10.0 ** -(i % 5 + 1),
        "batch": [64, 16, 32][i % 3],
    }
    for i in range(12)
]


def _study(optuna: Any, **kwargs: Any) -> Any:
    """Twelve trials of five kinds of parameter, each reporting three steps; trials 4 and 9
    pruned after two."""
    study = optuna.create_study(pruner=optuna.pruners.NopPruner(), **kwargs)
    for params in PARAMS:
        study.enqueue_trial(params)

    def objective(trial: Any) -> float:
        x = trial.suggest_float("x", -1.0, 1.0)
        n = trial.suggest_int("n", 1, 4)
        c = trial.suggest_categorical("c", ["a", "b", "c"])
        trial.suggest_float("lr", 1e-5, 1e-1, log=True)
        trial.suggest_categorical("batch", [64, 16, 32])  # numbers, yet categorical
        value = x * x + n + (c == "b")
        for step in range(3):
            trial.report(value + step, step)
            if trial.number % 5 == 4 and step == 1:
                raise optuna.TrialPruned()
        return value

    study.optimize(objective, n_trials=len(PARAMS))
    return study


@pytest.fixture(scope="module")
def optuna() -> ModuleType:
    module = pytest.importorskip("optuna", reason="Optuna itself is not installed")
    module.logging.set_verbosity(module.logging.ERROR)
    return module


@pytest.fixture(scope="module")
def studies(optuna: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    path: Path = tmp_path_factory.mktemp("visualization") / "study.db"
    return _study(optuna), _study(hl, storage=f"sqlite:///{path}")


def _same(theirs: Any, ours: Any, name: str) -> None:
    """Arrays equal, numbers within floating-point noise."""
    if theirs is None or ours is None:
        assert theirs is ours is None, name
        return
    a, b = list(theirs), list(ours)
    assert len(a) == len(b), name
    for u, v in zip(a, b, strict=True):
        if isinstance(u, (int, float)) and isinstance(v, (int, float)):
            assert v == pytest.approx(u, rel=1e-9, abs=1e-12), name
        else:
            assert u == v, name


def _compare(theirs: Any, ours: Any, *, skip: tuple[str, ...] = ()) -> None:
    """Titles, trace types, names, data arrays and axes of two figures."""
    assert ours.layout.title.text == theirs.layout.title.text
    assert [t.type for t in ours.data] == [t.type for t in theirs.data]
    for a, b in zip(theirs.data, ours.data, strict=True):
        for key in ("name", "mode", "orientation", "xaxis", "yaxis", "showlegend"):
            if key not in skip:
                assert getattr(b, key, None) == getattr(a, key, None), key
        for key in ("x", "y"):
            if key not in skip:
                _same(getattr(a, key), getattr(b, key), key)
        if a.type == "contour":  # NaN where no trial sits
            np.testing.assert_allclose(
                np.asarray(b.z, dtype=float), np.asarray(a.z, dtype=float), equal_nan=True
            )
    for axis in theirs.layout:
        if axis.startswith(("xaxis", "yaxis")):
            a, b = theirs.layout[axis], ours.layout[axis]
            assert (b.title.text, b.type) == (a.title.text, a.type), axis


@pytest.mark.parametrize(
    ("plot", "kwargs"),
    [
        ("plot_optimization_history", {}),
        ("plot_optimization_history", {"target": lambda t: t.params["x"], "target_name": "x"}),
        ("plot_intermediate_values", {}),
        ("plot_parallel_coordinate", {}),
        ("plot_parallel_coordinate", {"params": ["x", "lr"], "target_name": "loss"}),
        ("plot_slice", {}),
        ("plot_slice", {"params": ["x"]}),
        ("plot_edf", {}),
        ("plot_rank", {"params": ["x", "n"]}),
        ("plot_rank", {"params": ["x", "n", "c"]}),
        ("plot_rank", {}),
    ],
)
def test_each_plot_draws_optunas_figure(studies: tuple[Any, Any], plot: str, kwargs: dict) -> None:
    import optuna

    theirs = getattr(optuna.visualization, plot)(studies[0], **kwargs)
    ours = getattr(hl.visualization, plot)(studies[1], **kwargs)
    # the EDF trace is named after the study, whose default name differs
    _compare(theirs, ours, skip=("name",) if plot == "plot_edf" else ())


@pytest.mark.parametrize("params", [["x", "n"], ["lr", "c"], ["c", "batch"], ["x", "n", "c"], None])
def test_contour_draws_optunas_figure(studies: tuple[Any, Any], params) -> None:
    """The grid, the value at each trial's point (the best of those sharing one) and the
    trials' points, one contour for two parameters and a matrix for more."""
    import optuna

    theirs = optuna.visualization.plot_contour(studies[0], params=params)
    _compare(theirs, hl.visualization.plot_contour(studies[1], params=params))


def test_timeline_has_a_bar_per_trial_in_each_state(studies: tuple[Any, Any]) -> None:
    import optuna

    theirs = optuna.visualization.plot_timeline(studies[0])
    ours = hl.visualization.plot_timeline(studies[1])
    _compare(theirs, ours, skip=("x",))  # x: each trial's duration
    assert [t.name for t in ours.data] == ["COMPLETE", "PRUNED"]
    for trace in ours.data:
        assert len(trace.base) == len(trace.x) == len(trace.y) and min(trace.x) >= 0


def test_param_importances_are_optunas_bars(studies: tuple[Any, Any]) -> None:
    pytest.importorskip("sklearn", reason="importance needs scikit-learn (the importance extra)")
    import optuna

    theirs = optuna.visualization.plot_param_importances(
        studies[0], evaluator=optuna.importance.FanovaImportanceEvaluator(seed=0)
    )
    evaluator = hl.importance.FanovaImportanceEvaluator(seed=0)
    ours = hl.visualization.plot_param_importances(studies[1], evaluator=evaluator)
    _compare(theirs, ours, skip=("x", "y"))  # the forest's numbers: see test_importance.py
    bar = ours.data[0]
    assert set(bar.y) == set(theirs.data[0].y) == {"x", "n", "c", "lr", "batch"}
    assert list(bar.x) == sorted(bar.x)  # the most important on top
    found = hl.importance.get_param_importances(studies[1], evaluator=evaluator)
    assert dict(zip(bar.y, bar.x, strict=True)) == pytest.approx(found)


def test_matplotlib_is_refused_naming_what_to_use() -> None:
    with pytest.raises(NotImplementedError, match="plot_optimization_history"):
        importlib.import_module("hyperlab.compat.optuna.visualization.matplotlib")
    with pytest.raises(NotImplementedError, match=r"plotly plots of optuna\.visualization"):
        _ = hl.visualization.matplotlib


def test_the_module_imports_in_module_form_and_says_plotly_is_there() -> None:
    module = importlib.import_module("hyperlab.compat.optuna.visualization")
    assert module is hl.visualization and module.is_available()
    assert hl.importance is importlib.import_module("hyperlab.compat.optuna.importance")


def test_without_plotly_a_plot_says_how_to_install_it(
    studies: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "plotly.graph_objects", None)
    with pytest.raises(ImportError, match="pip install plotly"):
        hl.visualization.plot_optimization_history(studies[1])


@pytest.mark.parametrize("plot", ["plot_optimization_history", "plot_contour", "plot_rank"])
def test_a_maximised_study_draws_its_best_as_optuna(
    optuna: ModuleType, tmp_path: Path, plot: str
) -> None:
    """The best value so far, and the contour's value where trials share a point, are the
    greatest of a maximised study's."""
    theirs = _study(optuna, direction="maximize")
    ours = _study(hl, direction="maximize", storage=f"sqlite:///{tmp_path / 'max.db'}")
    params = None if plot == "plot_optimization_history" else ["c", "batch"]
    kwargs = {} if params is None else {"params": params}
    _compare(
        getattr(optuna.visualization, plot)(theirs, **kwargs),
        getattr(hl.visualization, plot)(ours, **kwargs),
    )
