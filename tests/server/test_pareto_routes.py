"""The Pareto front and hypervolume routes, and the objective values, constraints and
feasibility of the trial routes, on SQLite and PostgreSQL; and a real constrained run with two
objectives whose front the server shows as ``Result.best_trials``."""

from __future__ import annotations

import math
import random

import pytest

import hyperlab
from hyperlab import space as hs
from hyperlab.config import ExperimentOptions
from hyperlab.pareto import hypervolume, pareto_front
from hyperlab.server import create_app
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import ExperimentStatus, Mode, Trial, TrialStatus
from tests.server import SESSION_TOKEN, client_for
from tests.server.apidata import BACKENDS, T0, module_storage

MULTI = "par00001"
SINGLE = "par00002"
MODES = (Mode.MIN, Mode.MAX)
N = 60
SPACE = {"x": {"_type": "uniform", "_value": [0, 1]}}


def _write_multi(store: Store) -> list[Trial]:
    options = ExperimentOptions(metric=("loss", "acc"), mode=MODES, constraints=("mem <= 2",))
    store.create_experiment(
        ExperimentRecord(MULTI, "mo", ExperimentStatus.DONE, options, SPACE, 1, None, T0)
    )
    rng = random.Random(5)
    written = []
    for number in range(N):
        status = TrialStatus.FAILED if number % 7 == 3 else TrialStatus.SUCCEEDED
        loss, acc, mem = rng.randint(0, 9) / 3, rng.randint(0, 9) / 3, rng.randint(0, 4)
        done = status is TrialStatus.SUCCEEDED
        trial = Trial(
            MULTI,
            number,
            {"x": number / N},
            status,
            value=loss if done else None,
            metrics={"loss": loss, "acc": acc, "mem": mem} if done else {},
            values=(loss, acc) if done else None,
            constraints=(mem - 2.0,) if done else None,
            created_at=T0,
            started_at=T0,
            finished_at=T0 + 1,
        )
        store.put_trial(trial)
        written.append(trial)
    options = ExperimentOptions(metric="loss", mode="max")
    store.create_experiment(
        ExperimentRecord(SINGLE, "so", ExperimentStatus.DONE, options, SPACE, 1, None, T0)
    )
    for number, value in enumerate([0.3, 0.9, 0.9, 0.1]):
        store.put_trial(Trial(SINGLE, number, {"x": value}, TrialStatus.SUCCEEDED, value=value))
    store.flush()
    return written


@pytest.fixture(scope="module", params=BACKENDS)
def served(request, tmp_path_factory):
    with module_storage(request.param, tmp_path_factory.mktemp("pareto"), request) as url:
        store = Store.open(url)
        trials = _write_multi(store)
        with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
            yield client, trials
        store.close()


def _get(client, path: str, **params):
    response = client.get(f"/api/v1/experiments/{path}", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_pareto_lists_every_succeeded_trial_front_first_with_infeasible_ones_marked(served):
    client, trials = served
    body = _get(client, f"{MULTI}/pareto")
    assert body["metrics"] == ["loss", "acc"] and body["modes"] == ["min", "max"]
    done = [t for t in trials if t.status is TrialStatus.SUCCEEDED]
    front = [t.number for t in pareto_front(trials, MODES)]
    assert body["front"] == front and front
    listed = [row["number"] for row in body["trials"]]
    assert listed == front + [t.number for t in done if t.number not in front]
    assert body["total"] == len(done)
    assert body["n_infeasible"] == sum(not t.feasible for t in done) > 0
    by_number = {t.number: t for t in done}
    for row in body["trials"]:
        trial = by_number[row["number"]]
        assert row["values"] == list(trial.values)
        assert row["constraints"] == list(trial.constraints)
        assert row["feasible"] is trial.feasible
        assert row["violation"] == trial.violation
        assert row["params"] == trial.params
        assert row["on_front"] is (row["number"] in front)
    assert all(row["feasible"] for row in body["trials"] if row["on_front"])


@pytest.mark.parametrize("limit", [1, 4, 7])
def test_pages_of_the_pareto_list_join_into_the_whole_and_front_only_lists_the_front(served, limit):
    client, _ = served
    whole = _get(client, f"{MULTI}/pareto")
    pages, offset = [], 0
    while offset < whole["total"]:
        page = _get(client, f"{MULTI}/pareto", limit=limit, offset=offset)
        assert len(page["trials"]) <= limit and page["front"] == whole["front"]
        pages += page["trials"]
        offset += limit
    assert pages == whole["trials"]
    only = _get(client, f"{MULTI}/pareto", front_only="true")
    assert [row["number"] for row in only["trials"]] == whole["front"] == only["front"]
    assert only["total"] == len(whole["front"])


def test_a_single_objective_front_is_its_best_trials(served):
    client, _ = served
    body = _get(client, f"{SINGLE}/pareto")
    assert body["metrics"] == ["loss"] and body["modes"] == ["max"]
    assert body["front"] == [1, 2] and body["n_infeasible"] == 0
    assert [row["values"] for row in body["trials"]] == [[0.9], [0.9], [0.3], [0.1]]
    volume = _get(client, f"{SINGLE}/hypervolume", reference="0.0")
    assert volume == {"hypervolume": pytest.approx(0.9), "reference": [0.0], "front_size": 2}


def test_hypervolume_is_the_fronts_up_to_the_reference(served):
    client, trials = served
    front = pareto_front(trials, MODES)
    expected = hypervolume([t.values for t in front], [4.0, -1.0], MODES)
    body = _get(client, f"{MULTI}/hypervolume", reference="4.0,-1")
    assert body["hypervolume"] == pytest.approx(expected) and expected > 0
    assert body["reference"] == [4.0, -1.0] and body["front_size"] == len(front)
    beyond = _get(client, f"{MULTI}/hypervolume", reference="-10,10")
    assert beyond["hypervolume"] == 0.0


@pytest.mark.parametrize("reference", ["1.0", "1,2,3", "1,x", "", "nan,1", "1,,2", "inf,0"])
def test_a_reference_of_the_wrong_dimension_or_unparsable_is_a_422_naming_it(served, reference):
    client, _ = served
    response = client.get(
        f"/api/v1/experiments/{MULTI}/hypervolume", params={"reference": reference}
    )
    assert response.status_code == 422, response.text
    assert response.json()["detail"].startswith("reference: ")
    assert repr(reference) in response.json()["detail"]


def test_a_missing_reference_or_an_unknown_experiment_is_an_error_not_a_crash(served):
    client, _ = served
    missing = client.get(f"/api/v1/experiments/{MULTI}/hypervolume")
    assert missing.status_code == 422 and "reference" in missing.json()["detail"]
    for path in ("pareto", "hypervolume?reference=1,2"):
        assert client.get(f"/api/v1/experiments/nothing0/{path}").status_code == 404


def test_trial_routes_carry_values_constraints_violation_and_feasibility(served):
    client, trials = served
    rows = _get(client, f"{MULTI}/trials", limit=N)
    assert len(rows) == N
    for row, trial in zip(rows, trials, strict=True):
        assert row["values"] == (None if trial.values is None else list(trial.values))
        assert row["constraints"] == (
            None if trial.constraints is None else list(trial.constraints)
        )
        assert (row["feasible"], row["violation"]) == (trial.feasible, trial.violation)
    infeasible = next(t for t in trials if not t.feasible)
    detail = _get(client, f"{MULTI}/trials/{infeasible.number}")
    assert detail["feasible"] is False and detail["violation"] == infeasible.violation
    changes = _get(client, f"{MULTI}/changes")
    assert {row["number"]: row["feasible"] for row in changes["trials"]} == {
        t.number: t.feasible for t in trials
    }
    single = _get(client, f"{SINGLE}/trials")
    assert all(r["values"] is None and r["constraints"] is None for r in single)
    assert all(r["feasible"] is True and r["violation"] == 0.0 for r in single)


def _two_objectives(params):
    x, y = params["x"], params["y"]
    return {"a": x, "b": y, "c": x + y}


def test_a_real_constrained_run_is_served_with_its_front(tmp_path):
    storage = str(tmp_path / "mo.db")
    result = hyperlab.run(
        _two_objectives,
        {"x": hs.uniform(0, 1), "y": hs.uniform(0, 1)},
        metric=["a", "b"],
        mode=["min", "max"],
        tuner="random",
        max_trials=25,
        storage=storage,
        constraints=["c <= 1"],
        seed=3,
        progress=False,
    )
    with client_for(create_app(storage, session_token=SESSION_TOKEN)) as client:
        body = _get(client, f"{result.experiment_id}/pareto")
        assert body["front"] == [t.number for t in result.best_trials]
        assert body["n_infeasible"] == sum(not t.feasible for t in result.trials) > 0
        assert all(r["values"] == [r["params"]["x"], r["params"]["y"]] for r in body["trials"])


def test_values_that_are_not_finite_are_served_as_null(tmp_path):
    storage = f"sqlite:///{tmp_path / 'odd.db'}"
    store = Store.open(storage)
    options = ExperimentOptions(metric=("a", "b"), constraints=("a <= 1",))
    store.create_experiment(
        ExperimentRecord("odd00001", None, ExperimentStatus.DONE, options, SPACE, 1, None, T0)
    )
    rows = [((math.inf, 1.0), (-1.0,)), ((0.5, math.nan), (math.inf,)), ((0.0, 2.0), (0.0,))]
    for number, (values, constraints) in enumerate(rows):
        store.put_trial(
            Trial(
                "odd00001",
                number,
                {"x": 0.5},
                TrialStatus.SUCCEEDED,
                value=values[0],
                values=values,
                constraints=constraints,
            )
        )
    store.flush()
    with client_for(create_app(storage, session_token=SESSION_TOKEN)) as client:
        body = _get(client, "odd00001/pareto")
        served = {row["number"]: row for row in body["trials"]}
        assert served[0]["values"] == [None, 1.0]
        assert served[1]["values"] == [0.5, None] and served[1]["constraints"] == [None]
        assert served[1]["violation"] is None and served[1]["feasible"] is False
        trials = _get(client, "odd00001/trials")
        assert trials[0]["values"] == [None, 1.0] and trials[1]["violation"] is None
        volume = _get(client, "odd00001/hypervolume", reference="1,3")
        assert volume["hypervolume"] == pytest.approx(1.0)  # the finite point (0, 2) alone
    store.close()
