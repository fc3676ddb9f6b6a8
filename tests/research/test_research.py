"""Researches run end to end on the engine: units, schedules, branches with root units,
failures, debug, generators, devices, adaptive domains, bad input."""

from __future__ import annotations

import os
import statistics
from pathlib import Path

import pytest

import hyperlab
from hyperlab import ConfigError, TrialStatus
from hyperlab.research import C, Domain, O, Research
from hyperlab.store import Store


def _store(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'r.db'}"


def make_model(lr, layers):
    return {"lr": lr, "w": 0.0, "layers": layers}


def train(model, iteration):
    model["w"] += model["lr"] * (iteration + 1) / model["layers"]
    return model["w"]


def test_grid_with_repetitions_records_each_iteration_and_aggregates(tmp_path):
    pytest.importorskip("pandas", reason="the research extra (pandas) is not installed")
    research = (
        Research(
            name="grid",
            domain=Domain(lr=[0.1, 0.01]) * Domain(layers=[1, 2]),
            n_reps=3,
            storage=_store(tmp_path),
        )
        .add_callable(make_model, name="model", when="#0")
        .add_callable(train, save_to="w")
        .add_callable(
            lambda w, seed: w + (seed % 1000) / 1e6, name="noisy", save_to="score", when=[2, "last"]
        )
    )
    research.run(n_iters=4, executor="threads", workers=2, seed=3, progress=False)
    store = Store.open(_store(tmp_path))
    trials = store.get_trials(research.id, reports=True)
    assert len(trials) == 12 and all(t.status is TrialStatus.SUCCEEDED for t in trials)
    keys = {(t.params["lr"], t.params["layers"], t.params["repetition"]) for t in trials}
    assert len(keys) == 12  # every config x repetition once
    assert len({t.seed for t in trials}) == 12  # each its own seed
    for trial in trials:
        assert [r.step for r in trial.reports] == [0, 1, 2, 3]
        assert [sorted(r.metrics) for r in trial.reports] == [
            ["w"],
            ["score", "w"],
            ["w"],
            ["score", "w"],
        ]
    df = research.results.df
    assert len(df) == 12 * (4 + 2)
    # the aggregated table equals a hand computation over the stored reports
    table = research.results.aggregate("score")
    for (lr, layers), group in table.groupby(["lr", "layers"]):
        values = [
            t.reports[-1].metrics["score"]
            for t in trials
            if t.params["lr"] == lr and t.params["layers"] == layers
        ]
        assert group["score_mean"].item() == pytest.approx(statistics.mean(values))
        assert group["score_std"].item() == pytest.approx(statistics.stdev(values))
        assert group["score_count"].item() == 3


def _count_calls(path: Path, label: str) -> None:
    with open(path, "a") as f:
        f.write(label + "\n")


def test_branches_share_root_units_computed_once_per_group(tmp_path):
    pytest.importorskip("pandas", reason="the research extra (pandas) is not installed")
    calls = tmp_path / "calls.txt"

    def data():
        _count_calls(calls, "data")
        return [1.0, 2.0]

    def step(data, lr, iteration):
        return sum(data) * lr * (iteration + 1)

    research = (
        Research(name="branches", domain=Domain(lr=[1, 2, 3, 4]), storage=_store(tmp_path))
        .add_callable(data, root=True, when="#0")
        .add_callable(step, save_to="value")
    )
    research.run(n_iters=3, workers=1, branches=4, progress=False)
    assert calls.read_text().split() == ["data"]  # one group of four branches
    df = research.results.to_df(name="value", iterations=2)
    assert sorted(df["value"]) == [9.0, 18.0, 27.0, 36.0]


def test_root_unit_reading_a_config_value_that_differs_fails_clearly(tmp_path):
    research = Research(name="bad-root", domain=Domain(lr=[1, 2]), storage=_store(tmp_path))
    research.add_callable(lambda x: x, name="root", root=True, save_to="r", x=C("lr"))
    with pytest.raises(hyperlab.TrialError) as err:
        research.run(n_iters=1, executor="inprocess", branches=2, progress=False)
    assert "differs between them" in str(err.value)


def test_a_failing_unit_fails_its_experiment_after_finalize_and_others_go_on(tmp_path):
    marks = tmp_path / "finalized.txt"

    def step(lr, iteration):
        if lr == 2 and iteration == 1:
            raise ValueError("diverged at lr=2")
        return lr * iteration

    def close(lr):
        _count_calls(marks, f"closed {lr}")

    research = (
        Research(name="fail", domain=Domain(lr=[1, 2, 3]), storage=_store(tmp_path))
        .add_callable(step, save_to="value")
        .add_callable(close, when="last")
    )
    research.run(n_iters=3, executor="threads", progress=False)
    trials = research.experiment.store.get_trials(research.id)
    status = {t.params["lr"]: t.status for t in trials}
    assert status == {1: TrialStatus.SUCCEEDED, 2: TrialStatus.FAILED, 3: TrialStatus.SUCCEEDED}
    failed = next(t for t in trials if t.params["lr"] == 2)
    assert "unit 'step' failed at iteration 1" in failed.error
    assert "ValueError: diverged at lr=2" in failed.error
    assert sorted(marks.read_text().splitlines()) == ["closed 1", "closed 2", "closed 3"]


def test_debug_reraises_the_units_exception_at_once(tmp_path):
    def step(lr):
        raise KeyError(f"no such layer {lr}")

    research = Research(name="debug", domain=Domain(lr=[1, 2]), storage=_store(tmp_path))
    research.add_callable(step, save_to="value")
    with pytest.raises(KeyError, match="no such layer 1"):
        research.run(n_iters=2, debug=True, progress=False)
    trials = research.experiment.store.get_trials(research.id)
    assert [t.status for t in trials] == [TrialStatus.FAILED]  # the second never started


def test_generator_ends_the_experiment_and_last_units_run(tmp_path):
    pytest.importorskip("pandas", reason="the research extra (pandas) is not installed")

    def batches(size):
        yield from range(size)

    research = (
        Research(name="gen", domain=Domain(size=[2, 4]), storage=_store(tmp_path))
        .add_generator(batches, save_to="batch")
        .add_callable(lambda batch: batch * 10, name="final", save_to="final", when="last")
    )
    research.run(executor="inprocess", progress=False)  # n_iters=None: until exhausted
    df = research.results.to_df(pivot=True)
    by_size = {size: group for size, group in df.groupby("size")}
    assert list(by_size[2]["iteration"]) == [0, 1, 2]
    assert by_size[2]["final"].dropna().tolist() == [10.0]
    assert by_size[4]["final"].dropna().tolist() == [30.0]


def test_units_see_the_trial_api_and_references(tmp_path):
    seen = tmp_path / "seen.txt"

    class Counter:
        def __init__(self, start):
            self.value = start

        def bump(self, by):
            self.value += by
            return self.value

    def check(counter, bumped):
        params = hyperlab.get_params()
        _count_calls(seen, f"{params['start']} {params['repetition']} {hyperlab.trial_seed()}")
        hyperlab.report(extra=counter.value, step=100)
        return bumped

    research = (
        Research(name="api", domain=Domain(start=[10]), n_reps=2, storage=_store(tmp_path))
        .add_instance("counter", Counter, C("start"))
        .add_callable("counter.bump", name="bumped", by=2)
        .add_callable(check, save_to="value", bumped=O("bumped"))
    )
    research.run(n_iters=2, executor="processes", progress=False)
    trials = research.experiment.store.get_trials(research.id, reports=True)
    lines = seen.read_text().splitlines()
    assert sorted(lines) == sorted(
        f"10 {t.params['repetition']} {t.seed}" for t in trials for _ in range(2)
    )
    assert [r.metrics.get("value") for r in trials[0].reports if r.step < 100] == [12, 14]


def test_update_domain_receives_results_and_proposes_the_next_domain(tmp_path):
    pytest.importorskip("pandas", reason="the research extra (pandas) is not installed")
    received = []

    def refine(results, factor):
        received.append(sorted(results["x"]))
        best = results.sort_values("y").iloc[0]["x"]
        return Domain(x=[best * factor, best / factor]) if len(received) == 1 else None

    research = (
        Research(name="adaptive", domain=Domain(x=[1.0, 4.0]), storage=_store(tmp_path), metric="y")
        .add_callable(lambda x: (x - 2.5) ** 2, name="f", save_to="y")
        .update_domain(refine, when=2, factor=2.0)
    )
    research.run(n_iters=1, executor="inprocess", progress=False)
    xs = [t.params["x"] for t in research.experiment.store.get_trials(research.id)]
    assert received[0] == [1.0, 4.0]
    assert xs[:2] == [1.0, 4.0] and sorted(xs[2:]) == [0.5, 2.0]


def test_an_update_function_that_raises_ends_the_research_with_its_name(tmp_path):
    pytest.importorskip("pandas", reason="the research extra (pandas) is not installed")

    def refine(results):
        raise ValueError("no best config")

    research = (
        Research(name="adaptive", domain=Domain(x=[1.0, 4.0]), storage=_store(tmp_path))
        .add_callable(lambda x: x, name="f", save_to="y")
        .update_domain(refine, when=1)
    )
    with pytest.raises(ConfigError, match=r"update_domain: refine\(\) raised ValueError: no best"):
        research.run(n_iters=1, executor="inprocess", progress=False)
    assert research.experiment.status is hyperlab.ExperimentStatus.ERROR


def test_devices_are_split_over_workers_and_branches(tmp_path):
    out = tmp_path / "devices.txt"

    def where(devices):
        _count_calls(out, f"{os.environ.get('CUDA_VISIBLE_DEVICES')} {list(devices)}")
        return 1

    research = Research(
        name="gpus", domain=Domain(i=[0, 1, 2, 3]), storage=_store(tmp_path)
    ).add_callable(where, save_to="one")
    research.run(n_iters=1, workers=2, branches=2, devices=[0, 1, 2, 3], progress=False)
    lines = sorted(out.read_text().splitlines())
    assert lines == ["0,1 [0]", "0,1 [1]", "2,3 [0]", "2,3 [1]"]


def test_devices_of_thread_workers_are_the_devices_own_indices(tmp_path, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)  # the driver's process sees all
    seen = []
    research = Research(
        name="gpus", domain=Domain(i=[0, 1, 2, 3]), storage=_store(tmp_path)
    ).add_callable(lambda devices: seen.append(tuple(devices)) or 1, name="where", save_to="one")
    research.run(
        n_iters=1, workers=2, branches=2, devices=[4, 5, 6, 7], executor="threads", progress=False
    )
    assert sorted(seen) == [(4,), (5,), (6,), (7,)]


@pytest.mark.parametrize(
    "build, run_args, message",
    [
        (lambda s: Research(domain=Domain(), storage=s).add_callable(len), {}, "domain"),
        (
            lambda s: Research(domain={"x": [1]}, n_reps=0, storage=s),
            {},
            "n_reps: expected an integer >= 1, got 0",
        ),
        (
            lambda s: Research(domain={"x": [1]}, storage=s).add_callable(abs).add_callable(abs),
            {},
            "a unit named 'abs' was already added",
        ),
        (lambda s: Research(domain={"x": [1]}, mode="maximize", storage=s), {}, "mode: expected"),
        (
            lambda s: Research(domain={"x": [1]}, storage=s).add_callable(abs, when=1.5),
            {},
            "when: expected",
        ),
        (
            lambda s: Research(domain={"x": [1]}, storage=s).add_callable(abs, O("nothing")),
            {},
            "O('nothing') names no earlier unit",
        ),
        (
            lambda s: Research(domain={"x": [1]}, storage=s, metric="loss").add_callable(
                abs, save_to="y"
            ),
            {},
            "metric: 'loss' is not saved by any unit",
        ),
        (
            lambda s: Research(domain={"x": [1, 2]}, storage=s).add_callable(abs),
            {"workers": 2, "branches": 2, "devices": [0, "cpu"]},
            "devices: expected GPU indices (0, '0') or names like 'cuda:0', got 'cpu'",
        ),
        (
            lambda s: Research(domain={"x": [1]}, storage=s).add_callable(abs),
            {"devices": [0], "memory_ratio": 1.5},
            "memory_ratio",
        ),
    ],
)
def test_bad_input_is_refused_before_anything_is_written(tmp_path, build, run_args, message):
    storage = _store(tmp_path)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build(storage).run(n_iters=1, progress=False, **run_args)
    assert Store.open(storage).list_experiments() == []


def test_zip_of_different_lengths_is_refused():
    with pytest.raises(ConfigError, match="same number of configs"):
        Domain(a=[1, 2]) @ Domain(b=[1, 2, 3])


def test_a_research_is_listed_and_loadable(tmp_path):
    pytest.importorskip("pandas", reason="the research extra (pandas) is not installed")
    storage = _store(tmp_path)
    research = Research(name="listed", domain=Domain(x=[1, 2]), storage=storage)
    research.add_callable(lambda x: x * 2, name="double", save_to="y")
    research.run(n_iters=2, executor="inprocess", profile=True, progress=False)
    loaded = Research.load("listed", storage)
    assert loaded.id == research.id
    assert sorted(loaded.results.to_df(name="y", iterations="last")["value"]) == [2, 4]
    profile = loaded.results.profile
    assert set(profile["unit"]) == {"double"} and (profile["calls"] == 1).all()
    assert len(profile) == 4  # 2 experiments x 2 iterations
