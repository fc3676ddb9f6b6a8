"""``Store.get_pareto_front``: the Pareto front read from the columns it needs, on SQLite and
PostgreSQL, agrees with ``hyperlab.pareto.pareto_front`` over the trials ``get_trials`` reads
(infeasible trials kept and marked, unfinished and failed ones left out)."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperlab.config import ExperimentOptions
from hyperlab.errors import ExperimentNotFound
from hyperlab.pareto import pareto_front
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import ExperimentStatus, Mode, Trial, TrialStatus

SPACE = {"x": {"_type": "uniform", "_value": [0, 1]}}
IDS = itertools.count()
MODES = (Mode.MIN, Mode.MAX)
STATUSES = [
    TrialStatus.SUCCEEDED,
    TrialStatus.SUCCEEDED,
    TrialStatus.FAILED,
    TrialStatus.RUNNING,
    TrialStatus.EARLY_STOPPED,
]


def _experiment(store: Store, experiment_id: str, options: ExperimentOptions) -> None:
    store.create_experiment(
        ExperimentRecord(experiment_id, None, ExperimentStatus.DONE, options, SPACE, 0, None, 1.0)
    )


@pytest.fixture
def store(persistent_storage):
    with Store.open(persistent_storage) as opened:
        yield opened


small = st.integers(-3, 3).map(float)  # few values: ties and duplicates are common
trial_specs = st.lists(
    st.tuples(
        st.sampled_from(STATUSES),
        st.tuples(small, small),
        st.none() | st.tuples(small),
    ),
    max_size=25,
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(specs=trial_specs)
def test_the_front_agrees_with_hyperlab_pareto_over_the_stored_trials(store, specs):
    experiment_id = f"pf{next(IDS):06d}"  # one database for every example
    options = ExperimentOptions(metric=("a", "b"), mode=("min", "max"), constraints=("c <= 0",))
    _experiment(store, experiment_id, options)
    for number, (status, values, constraints) in enumerate(specs):
        finished = status is not TrialStatus.RUNNING
        store.put_trial(
            Trial(
                experiment_id,
                number,
                {"x": number / 100},
                status,
                value=values[0] if finished else None,
                metrics={"a": values[0], "b": values[1]} if finished else {},
                values=values if finished else None,
                constraints=constraints if finished else None,
            )
        )
    store.flush()

    found = store.get_pareto_front(experiment_id, MODES)

    stored = store.get_trials(experiment_id, reports=False)
    done = [t for t in stored if t.status is TrialStatus.SUCCEEDED]
    assert [p.number for p in found.points] == [t.number for t in done]
    assert found.front == [t.number for t in pareto_front(stored, MODES)]
    for point, trial in zip(found.points, done, strict=True):
        assert point.values == trial.values
        assert point.constraints == trial.constraints
        assert (point.feasible, point.violation) == (trial.feasible, trial.violation)
        assert point.params == trial.params
    assert found.n_infeasible == sum(not t.feasible for t in done)
    assert all(p.feasible for p in found.points if p.on_front)


def test_one_objective_has_the_best_feasible_trials_on_its_front(store):
    options = ExperimentOptions(metric="loss", mode="min", constraints=("c <= 0",))
    _experiment(store, "single", options)
    rows = [(0.5, None), (0.1, (1.0,)), (0.2, (0.0,)), (0.2, (-1.0,)), (0.3, None)]
    for number, (value, constraints) in enumerate(rows):
        store.put_trial(
            Trial(
                "single",
                number,
                {"x": value},
                TrialStatus.SUCCEEDED,
                value=value,
                metrics={"loss": value},
                constraints=constraints,
            )
        )
    store.flush()
    found = store.get_pareto_front("single", [Mode.MIN])
    assert found.front == [2, 3]  # 0.1 violates its constraint; both 0.2 are kept
    assert [p.values for p in found.points] == [(v,) for v, _ in rows]
    assert found.n_infeasible == 1
    assert found.points[1].violation == 1.0 and not found.points[1].feasible


def test_params_and_constraints_are_left_out_when_not_asked_for(store):
    _experiment(store, "noparams", ExperimentOptions(metric=("a", "b")))
    store.put_trial(
        Trial(
            "noparams",
            0,
            {"x": 0.5},
            TrialStatus.SUCCEEDED,
            value=1.0,
            values=(1.0, 2.0),
            constraints=(3.0, -1.0),
        )
    )
    store.flush()
    (point,) = store.get_pareto_front("noparams", ["min", "min"]).points
    assert point.params == {"x": 0.5} and point.constraints == (3.0, -1.0)
    (point,) = store.get_pareto_front("noparams", ["min", "min"], details=False).points
    assert point.params is None and point.constraints is None and point.values == (1.0, 2.0)
    assert (point.feasible, point.violation, point.on_front) == (False, 3.0, False)


def test_trials_with_another_number_of_objectives_are_left_out(store):
    _experiment(store, "changed", ExperimentOptions(metric=("a", "b")))
    store.put_trial(Trial("changed", 0, {}, TrialStatus.SUCCEEDED, value=1.0))
    store.put_trial(Trial("changed", 1, {}, TrialStatus.SUCCEEDED, value=2.0, values=(2.0, 3.0)))
    store.flush()
    assert [p.number for p in store.get_pareto_front("changed", MODES).points] == [1]


def test_an_unknown_experiment_is_not_found_and_an_empty_one_has_no_front(store):
    _experiment(store, "empty", ExperimentOptions(metric=("a", "b")))
    found = store.get_pareto_front("empty", MODES)
    assert found.points == () and found.front == [] and found.n_infeasible == 0
    with pytest.raises(ExperimentNotFound):
        store.get_pareto_front("nothing", MODES)


def test_values_that_are_not_finite_are_read_as_stored(store):
    _experiment(store, "odd", ExperimentOptions(metric=("a", "b"), constraints=("c <= 0",)))
    rows = [
        ((math.inf, 1.0), (-1.0,)),
        ((0.5, math.nan), (math.inf,)),
        ((0.0, 2.0), (0.0,)),
        ((-math.inf, 3.0), None),
    ]
    for number, (values, constraints) in enumerate(rows):
        store.put_trial(
            Trial(
                "odd",
                number,
                {},
                TrialStatus.SUCCEEDED,
                value=values[0],
                values=values,
                constraints=constraints,
            )
        )
    store.flush()
    found = store.get_pareto_front("odd", MODES, details=False)
    stored = store.get_trials("odd", reports=False)
    assert found.front == [t.number for t in pareto_front(stored, MODES)]
    for point, trial in zip(found.points, stored, strict=True):
        assert point.values == pytest.approx(trial.values, nan_ok=True)
        assert (point.feasible, point.violation) == (trial.feasible, trial.violation)
