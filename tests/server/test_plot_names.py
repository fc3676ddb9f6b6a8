"""Every plot answers on any parameter or metric name, on SQLite and PostgreSQL, with the values
that were stored: slashes and dots (a parameter named ``a/b`` once made ``/plots/importance`` a
500), double quotes, backslashes, control characters and NUL (which the databases' JSON paths
cannot address: the plots read them from the decoded JSON), long Unicode, HTML and template
syntax, and pairs of names that look alike (``a/b`` and ``a.b``, composed and decomposed
accents, case)."""

from __future__ import annotations

import itertools
import math
import unicodedata
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperlab.config import ExperimentOptions
from hyperlab.server import create_app
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import ExperimentStatus, Report, Trial, TrialStatus
from tests.server import SESSION_TOKEN, client_for
from tests.server.apidata import BACKENDS, module_storage

T0 = 1_700_000_000.0
N_TRIALS = 9
ODD = [
    "a/b",
    "a.b",
    "param.x",
    "metric.y",
    'say "hi"',
    "nul\x00byte",
    "\x00",
    "x" * 2000,
    "é" * 400,
    "😀/😀",
    "<a href='https://evil.example/x'>CLICK</a>",
    "%{x}",
    "a,b",
    " edge ",
    "$.x[0]",
    "'; DROP TABLE trials; --",
    "\\",
    "\u202eright-to-left",
]
NAMES = st.one_of(
    st.sampled_from(ODD),
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=300),
)


def _twin(name: str) -> str:
    """A name that looks like ``name`` (what a careless sanitiser would merge with it)."""
    for candidate in (
        name.replace("/", "."),
        name.replace(".", "/"),
        unicodedata.normalize("NFD", name),
        name.upper(),
        name.replace(" ", "_"),
        name + "\x00",
    ):
        if candidate != name:
            return candidate
    raise AssertionError("unreachable: the last candidate always differs")


@pytest.fixture(scope="module", params=BACKENDS)
def served(request, tmp_path_factory):
    """(client, store) over an empty database; each example writes its own experiment."""
    with module_storage(request.param, tmp_path_factory.mktemp("names"), request) as url:
        store = Store.open(url)
        with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
            yield client, store
        store.close()


_ids = itertools.count()


def _write(store: Store, name: str, twin: str, metric: str) -> tuple[str, list[Trial]]:
    """An experiment over the number ``name`` and the choice ``twin`` (whose options are odd
    names too), whose objective is the metric ``metric``; N_TRIALS succeeded trials."""
    experiment_id = f"nm{next(_ids):06d}"
    options = ["plain", name, twin]
    space = {
        name: {"_type": "uniform", "_value": [0, 1]},
        twin: {"_type": "choice", "_value": options},
    }
    store.create_experiment(
        ExperimentRecord(
            experiment_id,
            "names",
            ExperimentStatus.DONE,
            ExperimentOptions(metric=metric),
            space,
            1,
            None,
            T0,
        )
    )
    trials = []
    for number in range(N_TRIALS):
        x = (number * 0.37) % 1.0
        params = {name: x, twin: options[number % 3]}
        value = (x - 0.4) ** 2 + number * 1e-3
        trial = Trial(
            experiment_id,
            number,
            params,
            TrialStatus.SUCCEEDED,
            1,
            value,
            {metric: value, twin: -value},
            (),
            None,
            number,
            T0 + number,
            T0 + number,
            T0 + number + 1 + x,
            None,
            None,
        )
        store.put_trial(trial)
        for step in range(3):
            store.add_report(
                experiment_id, number, Report(step, {metric: value + 1 / (step + 1)}, T0, 1)
            )
        trials.append(trial)
    store.flush()
    return experiment_id, trials


def _get(client: Any, experiment_id: str, plot: str, **params: Any) -> dict[str, Any]:
    response = client.get(f"/api/v1/experiments/{experiment_id}/plots/{plot}", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def _column(body: dict[str, Any], key: str) -> dict[int, Any]:
    (axis,) = [a for a in body["axes"] if a["key"] == key]
    return dict(zip(body["numbers"], axis["values"], strict=True))


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(name=NAMES, metric=NAMES)
def test_every_plot_answers_with_the_stored_values_on_any_name(served, name, metric):
    client, store = served
    twin = _twin(name)
    experiment_id, trials = _write(store, name, twin, metric)
    by_number = {t.number: t for t in trials}

    scatter = _get(client, experiment_id, "scatter", x=f"param.{name}", y=f"metric.{metric}")
    assert sorted(scatter["numbers"]) == list(range(N_TRIALS))
    xs, ys = _column(scatter, f"param.{name}"), _column(scatter, f"metric.{metric}")
    for number, trial in by_number.items():
        assert xs[number] == pytest.approx(trial.params[name])
        assert ys[number] == pytest.approx(trial.metrics[metric])

    choice = _get(client, experiment_id, "scatter", x=f"param.{twin}", y=f"metric.{twin}")
    options = _column(choice, f"param.{twin}")
    assert options == {n: t.params[twin] for n, t in by_number.items()}
    (axis,) = [a for a in choice["axes"] if a["kind"] == "choice"]
    assert axis["options"] == ["plain", name, twin]

    parallel = _get(client, experiment_id, "parallel")
    assert [a["key"] for a in parallel["axes"]] == [f"param.{name}", f"param.{twin}", "value"]
    assert _column(parallel, f"param.{twin}") == options
    chosen = _get(client, experiment_id, "parallel", params=f'["{_json(twin)}"]')
    assert [a["key"] for a in chosen["axes"]] == [f"param.{twin}", "value"]
    by_metric = _get(client, experiment_id, "parallel", target=f"metric.{twin}")
    assert _column(by_metric, f"metric.{twin}") == {n: -t.value for n, t in by_number.items()}

    curves = _get(client, experiment_id, "curves", top=3)
    assert curves["metric"] == metric
    assert [c["steps"] for c in curves["curves"]] == [[0, 1, 2]] * 3
    named = _get(client, experiment_id, "curves", trials="4", metric=metric)
    (curve,) = named["curves"]
    assert curve["values"] == pytest.approx([by_number[4].value + 1 / (s + 1) for s in range(3)])

    best = _get(client, experiment_id, "best")
    assert best["n_trials"] == N_TRIALS

    response = client.get(  # the target "value" is the plots tests' (a forest costs 0.2 s)
        f"/api/v1/experiments/{experiment_id}/plots/importance",
        params={"target": f"metric.{metric}"},
    )
    if response.status_code == 501:  # without scikit-learn: it says which extra to install
        assert "hyperlab[importance]" in response.json()["detail"]
        return
    assert response.status_code == 200, response.text
    assert response.json()["n_used"] == N_TRIALS
    scores = {p["name"]: p["importance"] for p in response.json()["params"]}
    assert set(scores) == {name, twin}
    assert math.isclose(sum(scores.values()), 1.0)


def _json(name: str) -> str:
    """``name`` as the inside of a JSON string."""
    import json

    return json.dumps(name)[1:-1]
