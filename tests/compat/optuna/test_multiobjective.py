"""``hyperlab.compat.optuna`` with several objectives (``directions=``): the same script on the
real Optuna and on hyperlab gives the same trials, Pareto front, errors and frames.

Both libraries evaluate the same enqueued points, so their fronts are the same trials; where
the sampler proposes, only the shape of the result is compared."""

from __future__ import annotations

import importlib.util
import math
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import hyperlab
import hyperlab.compat.optuna as hl
from hyperlab.trial import TrialStatus

POINTS = [{"x": 0.1 * i, "y": (7 * i % 10) / 10} for i in range(10)]
DIRECTIONS = ["minimize", "maximize"]


@pytest.fixture(scope="module")
def real() -> ModuleType:
    module = pytest.importorskip("optuna", reason="Optuna itself is not installed")
    module.logging.set_verbosity(module.logging.WARNING)
    return module


def _create(optuna: ModuleType, tmp_path: Path, **kwargs: Any) -> Any:
    """A study of ``optuna`` (hyperlab's in a SQLite file of its own)."""
    if optuna is hl:
        tmp_path.mkdir(parents=True, exist_ok=True)
        kwargs.setdefault("storage", f"sqlite:///{tmp_path / 'hl.db'}")
    return optuna.create_study(**kwargs)


def _objective(trial: Any) -> tuple[float, float]:
    x = trial.suggest_float("x", 0.0, 1.0)
    y = trial.suggest_float("y", 0.0, 1.0)
    return x + y, x * x - y


def _enqueued(optuna: ModuleType, tmp_path: Path, objective: Any = _objective, **kw: Any) -> Any:
    """A two-objective study that ran the ten enqueued ``POINTS``."""
    study = _create(optuna, tmp_path, directions=DIRECTIONS, **kw)
    for point in POINTS:
        study.enqueue_trial(point)
    study.optimize(objective, n_trials=len(POINTS))
    return study


def _front_is_non_dominated(study: Any) -> None:
    signs = [1.0 if d.name == "MINIMIZE" else -1.0 for d in study.directions]
    front = study.best_trials
    complete = [t for t in study.trials if t.state.name == "COMPLETE"]
    for t in front:
        loss = [s * v for s, v in zip(signs, t.values, strict=True)]
        for other in complete:
            theirs = [s * v for s, v in zip(signs, other.values, strict=True)]
            assert not (
                all(a <= b for a, b in zip(theirs, loss, strict=True)) and theirs != loss
            ), (t.number, other.number)


def _end(optuna: ModuleType, study: Any) -> None:
    """End hyperlab's ask-and-tell session (Optuna has none to end)."""
    if optuna is hl:
        study.stop()


def _raised(call: Any) -> tuple[str, str]:
    try:
        call()
    except Exception as exc:
        return type(exc).__name__, str(exc)
    return "", ""


def test_a_two_objective_study_has_optunas_trials_front_and_frame(
    real: ModuleType, tmp_path: Path
) -> None:
    theirs, ours = _enqueued(real, tmp_path), _enqueued(hl, tmp_path)
    assert [d.name for d in ours.directions] == [d.name for d in theirs.directions]
    assert len(ours.trials) == len(theirs.trials) == len(POINTS)
    for a, b in zip(theirs.trials, ours.trials, strict=True):
        assert b.params == pytest.approx(a.params) and b.values == pytest.approx(a.values)
        assert b.state.name == a.state.name == "COMPLETE"
    assert [t.number for t in ours.best_trials] == [t.number for t in theirs.best_trials]
    assert 1 < len(ours.best_trials) < len(POINTS)
    _front_is_non_dominated(ours)
    pytest.importorskip("pandas", reason="trials_dataframe needs pandas")
    assert list(ours.trials_dataframe().columns) == list(theirs.trials_dataframe().columns)
    assert "values_1" in ours.trials_dataframe().columns
    multi = ours.trials_dataframe(multi_index=True).columns
    assert list(multi) == list(theirs.trials_dataframe(multi_index=True).columns)
    frame = ours.trials_dataframe()
    assert frame["values_0"].tolist() == pytest.approx([t.values[0] for t in theirs.trials])
    # hyperlab's own view of the study: the same front
    result = hyperlab.load(ours.experiment_id, storage=f"sqlite:///{tmp_path / 'hl.db'}")
    assert result.metrics == ("values_0", "values_1")
    assert [t.number for t in result.best_trials] == [t.number for t in ours.best_trials]


def test_single_answers_of_a_multi_objective_study_raise_optunas_errors(
    real: ModuleType, tmp_path: Path
) -> None:
    theirs, ours = _enqueued(real, tmp_path), _enqueued(hl, tmp_path)
    for name in ("direction", "best_trial", "best_value", "best_params"):
        found = _raised(lambda s=ours, n=name: getattr(s, n))
        assert found == _raised(lambda s=theirs, n=name: getattr(s, n)), name
        assert found[0] == "RuntimeError"
    assert _raised(lambda: ours.trials[0].value) == _raised(lambda: theirs.trials[0].value)
    assert _raised(lambda: ours.trials[0].value)[0] == "RuntimeError"


def test_loading_a_multi_objective_study_keeps_its_directions_and_front(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'hl.db'}"
    study = _enqueued(hl, tmp_path, study_name="mo")
    loaded = hl.load_study(study_name="mo", storage=url)
    assert [d.name for d in loaded.directions] == ["MINIMIZE", "MAXIMIZE"]
    assert [t.number for t in loaded.best_trials] == [t.number for t in study.best_trials]
    loaded.optimize(_objective, n_trials=3)  # it goes on with the same objectives
    assert len(hl.load_study(study_name="mo", storage=url).trials) == len(POINTS) + 3
    (summary,) = hl.get_all_study_summaries(url)
    assert len(summary.directions) == 2 and summary.best_trial is None
    with pytest.raises(RuntimeError, match="multi-objective"):
        summary.direction  # noqa: B018


def _told(optuna: ModuleType, tmp_path: Path) -> list[Any]:
    """What each ``tell`` of an ask-and-tell loop did: the trial's state and values, or the
    error it raised, and the warnings it gave."""
    study = _create(optuna, tmp_path, directions=DIRECTIONS)
    outcomes: list[Any] = []
    for values, state in [
        ([1.0, 2.0], None),
        ((3.0, 4.0), None),
        ([1.0], None),  # one value short: FAIL, with a warning
        ([1.0, 2.0, 3.0], None),
        ([1.0, float("nan")], None),
        (None, None),
        ([1.0], "COMPLETE"),  # with state=COMPLETE it raises
        ([1.0, 2.0], "FAIL"),
        (None, "COMPLETE"),
        (None, "PRUNED"),
    ]:
        trial = study.ask()
        trial.suggest_float("x", 0, 1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            told_state = None if state is None else getattr(optuna.trial.TrialState, state)
            try:
                frozen = study.tell(trial, values, state=told_state)
                outcomes.append((frozen.state.name, frozen.values))
            except ValueError as exc:
                outcomes.append(("raised", str(exc)))
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
        outcomes.append([str(w.message) for w in caught if w.category is UserWarning])
    outcomes.append([t.state.name for t in study.trials])
    _end(optuna, study)
    return outcomes


def test_ask_and_tell_with_lists_as_optuna(real: ModuleType, tmp_path: Path) -> None:
    ours = _told(hl, tmp_path)
    assert ours == _told(real, tmp_path)
    assert ours[0] == ("COMPLETE", [1.0, 2.0])
    assert ours[5] == ["The number of the values 1 did not match the number of the objectives 2"]


def test_an_objective_with_the_wrong_count_fails_its_trial_as_in_optuna(
    real: ModuleType, tmp_path: Path
) -> None:
    def objective(trial: Any) -> Any:
        x = trial.suggest_float("x", 0, 1)
        return [(x,), (x, x), (x, x, x), x, (x, float("nan"))][trial.number]

    def states(optuna: ModuleType) -> list[Any]:
        study = _create(optuna, tmp_path, directions=DIRECTIONS)
        study.optimize(objective, n_trials=5)
        return [(t.state.name, t.values is None) for t in study.trials]

    ours = states(hl)
    assert ours == states(real)
    assert [s for s, _ in ours] == ["FAIL", "COMPLETE", "FAIL", "FAIL", "FAIL"]


def test_report_and_should_prune_are_refused_with_several_objectives(
    real: ModuleType, tmp_path: Path
) -> None:
    def messages(optuna: ModuleType) -> list[tuple[str, str]]:
        study = _create(optuna, tmp_path, directions=DIRECTIONS)
        trial = study.ask()
        found = [_raised(lambda: trial.report(1.0, 0)), _raised(trial.should_prune)]
        study.tell(trial, [1.0, 2.0])
        _end(optuna, study)
        return found

    ours = messages(hl)
    assert ours == messages(real) and ours[0][0] == "NotImplementedError"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"direction": "minimize", "directions": DIRECTIONS},
        {"directions": []},
        {"directions": ["minimize", "up"]},
        {"direction": "up"},
    ],
)
def test_bad_directions_are_refused_as_in_optuna(real: ModuleType, kwargs: dict) -> None:
    ours = _raised(lambda: hl.create_study(**kwargs))
    assert ours == _raised(lambda: real.create_study(**kwargs)) and ours[0] == "ValueError"


def test_directions_of_one_is_a_single_objective_study(tmp_path: Path) -> None:
    study = _create(hl, tmp_path, directions=["maximize"])
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)
    assert study.direction.name == "MAXIMIZE"
    assert study.best_value == max(t.value for t in study.trials)


def _constrained(trial: Any) -> tuple[float, float]:
    x = trial.suggest_float("x", 0.0, 1.0)
    y = trial.suggest_float("y", 0.0, 1.0)
    trial.set_constraint("budget", x + y - 1.0)
    if trial.number % 3 == 0:
        trial.set_constraint("odd", 0.5 - y)
    return x + y, x * x - y


def test_set_constraint_keeps_infeasible_trials_off_the_front(
    real: ModuleType, tmp_path: Path
) -> None:
    theirs = _enqueued(real, tmp_path, _constrained)
    ours = _enqueued(hl, tmp_path, _constrained)
    assert [t.constraints for t in ours.trials] == [t.constraints for t in theirs.trials]
    front = [t.number for t in ours.best_trials]
    assert front == [t.number for t in theirs.best_trials]
    infeasible = {t.number for t in ours.trials if any(c > 0 for c in t.constraints.values())}
    assert infeasible and not infeasible & set(front)
    # unconstrained, some infeasible trials would be on the front
    free = _enqueued(hl, tmp_path / "free")
    assert infeasible & {t.number for t in free.best_trials}
    pytest.importorskip("pandas", reason="trials_dataframe needs pandas")
    assert list(ours.trials_dataframe().columns) == list(theirs.trials_dataframe().columns)
    # hyperlab's tuner and its view see the constraints
    result = hyperlab.load(ours.experiment_id, storage=f"sqlite:///{tmp_path / 'hl.db'}")
    assert {t.number for t in result.trials if not t.feasible} == infeasible
    assert [t.number for t in result.best_trials] == front


def test_set_constraint_checks_its_value_and_keeps_the_first_as_optuna(
    real: ModuleType, tmp_path: Path
) -> None:
    def checks(optuna: ModuleType) -> list[Any]:
        study = _create(optuna, tmp_path, directions=DIRECTIONS)
        trial = study.ask()
        found: list[Any] = [_raised(lambda: trial.set_constraint("c", "no"))[0]]
        found.append(_raised(lambda: trial.set_constraint("c", float("nan"))))
        trial.set_constraint("c", 1.0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            trial.set_constraint("c", -1.0)
        found.append([str(w.message) for w in caught])
        found.append(study.tell(trial, [1.0, 2.0]).constraints)
        found.append(study.best_trials)
        _end(optuna, study)
        return found

    ours = checks(hl)
    assert ours == checks(real)
    assert ours[0] == "TypeError" and ours[3] == {"c": 1.0} and ours[4] == []


def test_a_single_objective_best_trial_is_the_best_feasible_as_in_optuna(
    real: ModuleType, tmp_path: Path
) -> None:
    def best(optuna: ModuleType, limit: float) -> Any:
        study = _create(optuna, tmp_path / str(limit), direction="minimize")
        for point in POINTS:
            study.enqueue_trial(point)

        def objective(trial: Any) -> float:
            x = trial.suggest_float("x", 0.0, 1.0)
            trial.set_constraint("c", limit - x)  # feasible from x >= limit
            return x

        study.optimize(objective, n_trials=len(POINTS))
        raised = _raised(lambda: study.best_trial)
        first = study.best_trial.number if raised == ("", "") else raised
        return first, [t.number for t in study.best_trials]

    ours = best(hl, 0.45)
    assert ours == best(real, 0.45) and ours == (5, [5])
    beyond = best(hl, 2.0)
    assert beyond == best(real, 2.0)
    assert beyond[0] == ("ValueError", "No feasible trials are completed yet.")


def test_a_trial_told_by_number_keeps_its_attributes(real: ModuleType, tmp_path: Path) -> None:
    def told(optuna: ModuleType) -> Any:
        study = _create(optuna, tmp_path, directions=DIRECTIONS)
        trial = study.ask()
        trial.set_user_attr("note", "kept")
        trial.set_constraint("c", 0.5)
        frozen = study.tell(trial.number, [1.0, 2.0])
        _end(optuna, study)
        return frozen.user_attrs, frozen.constraints, frozen.values

    ours = told(hl)
    assert ours == told(real) and ours[0] == {"note": "kept"}


def _feasible_if_small(trial: Any) -> list[float]:
    return [trial.params["x"] - 0.5]


@pytest.mark.parametrize("sampler", ["NSGAIISampler", "NSGAIIISampler", "TPESampler", "GPSampler"])
def test_a_samplers_constraints_func_judges_each_completed_trial(
    real: ModuleType, tmp_path: Path, sampler: str
) -> None:
    def study(optuna: ModuleType) -> Any:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".* is experimental")  # Optuna's NSGA-III
            with pytest.warns(FutureWarning, match="constraints_func"):
                made = getattr(optuna.samplers, sampler)(
                    seed=0, constraints_func=_feasible_if_small
                )
        return _enqueued(optuna, tmp_path, sampler=made)

    ours = study(hl)
    assert ours.trials[0].system_attrs["constraints"] == [-0.5]
    assert all(t.params["x"] <= 0.5 for t in ours.best_trials) and ours.best_trials
    if sampler != "GPSampler" or importlib.util.find_spec("torch") is not None:
        theirs = study(real)  # Optuna's GPSampler needs torch
        assert [t.constraints for t in ours.trials] == [t.constraints for t in theirs.trials]
        assert [t.number for t in ours.best_trials] == [t.number for t in theirs.best_trials]
    ours.optimize(_objective, n_trials=4)  # the sampler proposes, with several objectives
    assert [t.state.name for t in ours.trials[-4:]] == ["COMPLETE"] * 4
    assert all(t.constraints for t in ours.trials)


def test_nsga_samplers_map_optunas_arguments() -> None:
    nsga2 = hl.samplers.NSGAIISampler(
        population_size=8, mutation_prob=0.2, crossover_prob=0.7, swapping_prob=0.3, seed=1
    )
    assert nsga2.tuner == "nsga2" and nsga2.seed == 1
    assert nsga2.tuner_args == {
        "population_size": 8,
        "mutation_prob": 0.2,
        "crossover_prob": 0.7,
        "swapping_prob": 0.3,
        "crossover": "uniform",
    }
    sbx = hl.samplers.NSGAIISampler(crossover=hl.samplers.nsgaii.SBXCrossover())
    assert sbx.tuner_args["crossover"] == "sbx"
    nsga3 = hl.samplers.NSGAIIISampler(reference_points=[[0.0, 1.0], [1.0, 0.0]])
    assert nsga3.tuner == "nsga3"
    assert nsga3.tuner_args["reference_points"] == [[0.0, 1.0], [1.0, 0.0]]
    with pytest.raises(ValueError, match="population_size"):
        hl.samplers.NSGAIISampler(population_size=1)
    with pytest.raises(NotImplementedError, match="swapping_prob"):
        hl.samplers.NSGAIISampler(crossover=hl.samplers.nsgaii.UniformCrossover(0.2))


def _zdt1(trial: Any) -> tuple[float, float]:
    xs = [trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(5)]
    g = 1.0 + 9.0 * sum(xs[1:]) / 4
    return xs[0], g * (1.0 - math.sqrt(xs[0] / g))


def _hypervolume(trials: list[Any], reference: tuple[float, float] = (1.1, 11.0)) -> float:
    """The area the trials dominate up to ``reference`` (both objectives minimized)."""
    points = sorted(tuple(t.values) for t in trials if t.values is not None)
    area, last = 0.0, reference[1]
    for f1, f2 in points:
        if f1 < reference[0] and f2 < last:
            area += (reference[0] - f1) * (last - f2)
            last = f2
    return area


@pytest.mark.slow
def test_nsga2_reaches_a_front_comparable_to_optunas_on_zdt1(
    real: ModuleType, tmp_path: Path
) -> None:
    def run(optuna: ModuleType) -> Any:
        sampler = optuna.samplers.NSGAIISampler(population_size=20, seed=3)
        study = _create(optuna, tmp_path, directions=["minimize", "minimize"], sampler=sampler)
        study.optimize(_zdt1, n_trials=300)
        return study

    ours, theirs = run(hl), run(real)
    assert len(ours.trials) == 300
    reached = _hypervolume(ours.best_trials)
    assert reached >= 0.9 * _hypervolume(theirs.best_trials)
    assert reached > 1.05 * _hypervolume(ours.trials[:20])  # evolution beats its random start
    result = hyperlab.load(ours.experiment_id, storage=f"sqlite:///{tmp_path / 'hl.db'}")
    assert all(t.status is TrialStatus.SUCCEEDED for t in result.trials)


def test_plots_of_one_value_need_a_target_as_in_optuna(real: ModuleType, tmp_path: Path) -> None:
    pytest.importorskip("plotly", reason="optuna.visualization draws with plotly")
    theirs, ours = _enqueued(real, tmp_path), _enqueued(hl, tmp_path)
    for name in ("plot_optimization_history", "plot_slice", "plot_edf", "plot_contour"):
        found = _raised(lambda n=name: getattr(hl.visualization, n)(ours))
        assert found == _raised(lambda n=name: getattr(real.visualization, n)(theirs)), name
        assert found[0] == "ValueError"
    figure = hl.visualization.plot_optimization_history(
        ours, target=lambda t: t.values[0], target_name="sum"
    )
    assert list(figure.data[0].y) == pytest.approx([t.values[0] for t in theirs.trials])


def _figure(figure: Any) -> list[Any]:
    """What a Pareto-front figure shows: each trace's kind, points, colours and hover label,
    and the axis titles."""
    traces = []
    for trace in figure.data:
        marker = trace.marker
        traces.append(
            (
                type(trace).__name__,
                [list(getattr(trace, axis) or ()) for axis in "xyz" if hasattr(trace, axis)],
                trace.hovertemplate,
                marker.color if isinstance(marker.color, str) else list(marker.color or ()),
                None if marker.colorbar is None else marker.colorbar.title.text,
            )
        )
    layout = figure.layout
    titles = [layout.xaxis.title.text, layout.yaxis.title.text, layout.scene.zaxis.title.text]
    return [traces, titles, layout.title.text]


@pytest.mark.parametrize("objectives", [2, 3])
@pytest.mark.parametrize("dominated", [True, False])
def test_plot_pareto_front_draws_optunas_figure(
    real: ModuleType, tmp_path: Path, objectives: int, dominated: bool
) -> None:
    pytest.importorskip("plotly", reason="optuna.visualization draws with plotly")

    def objective(trial: Any) -> tuple[float, ...]:
        values = _constrained(trial)
        return values if objectives == 2 else (*values, trial.params["y"])

    def figure(optuna: ModuleType) -> list[Any]:
        study = _create(
            optuna, tmp_path, directions=["minimize", "maximize", "minimize"][:objectives]
        )
        for point in POINTS:
            study.enqueue_trial(point)
        study.optimize(objective, n_trials=len(POINTS))
        drawn = optuna.visualization.plot_pareto_front(study, include_dominated_trials=dominated)
        named = optuna.visualization.plot_pareto_front(study, target_names=list("abc")[:objectives])
        return [_figure(drawn), _figure(named)]

    ours = figure(hl)
    assert ours == figure(real)
    kinds = [trace[0] for trace in ours[0][0]]
    assert (
        kinds == ["Scatter" if objectives == 2 else "Scatter3d"] * 3
    )  # infeasible, feasible, best
