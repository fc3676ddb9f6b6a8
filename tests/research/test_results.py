"""``ResearchResults``, ``load_research`` and ``remove_research`` over a research written
straight into real stores (SQLite files; PostgreSQL once)."""

from __future__ import annotations

import math
import os
import statistics
import sys
from pathlib import Path

import pytest

from hyperlab.errors import ConfigError, ExperimentBusy, ExperimentNotFound, StoreError
from hyperlab.research._alias import ConfigItem
from hyperlab.research._results import ResearchResults
from hyperlab.research._stored import load_research, remove_research
from hyperlab.store import Store
from hyperlab.trial import Report, Trial, TrialStatus
from tests.research.stored_research import (
    CONFIGS,
    FAILED,
    FAILED_ITERS,
    N_ITERS,
    N_REPS,
    RERUN,
    acc,
    loss,
    research_record,
    trial_folder,
    unit_time,
    write_experiment,
    write_research,
)

pd = pytest.importorskip("pandas", reason="the research extra (pandas) is not installed")

LONG = ["experiment_id", "trial", "repetition", "iteration", "name", "value"]
ALIASES = ["lr_0.1-model_SGD", "lr_0.01-model_Adam"]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    store = Store.open(str(tmp_path / "store.db"))
    write_research(store)
    write_experiment(store)
    return store


@pytest.fixture
def results(store: Store) -> ResearchResults:
    return ResearchResults(store, "grid0001")


def expected_rows() -> set[tuple]:
    """(trial, repetition, iteration, name, value, lr, model, alias, status), from the
    builder's formulas: the re-run trial's first attempt is not among them."""
    rows = set()
    for c, config in enumerate(CONFIGS):
        for rep in range(N_REPS):
            number = c * N_REPS + rep
            status = "FAILED" if number == FAILED else "SUCCEEDED"
            for it in range(FAILED_ITERS if number == FAILED else N_ITERS):
                values = {"loss": loss(c, rep, it)}
                if it in (1, 3):
                    values["acc"] = acc(c, rep, it)
                if it == 0:
                    values["shape"] = (2, 2)
                for name, value in values.items():
                    row = (number, rep, it, name, value, *config.values(), ALIASES[c], status)
                    rows.add(row)
    return rows


def as_tuples(df) -> set[tuple]:
    columns = ["trial", "repetition", "iteration", "name", "value", "lr", "model", "alias"]
    return {
        (*(tuple(v) if isinstance(v, list) else v for v in row[:-1]), row[-1])
        for row in df[[*columns, "status"]].itertuples(index=False)
    }


def test_df_has_one_row_per_config_repetition_iteration_and_variable(results) -> None:
    df = results.df
    assert list(df.columns) == [*LONG, "lr", "model", "alias", "status"]
    assert len(df) == len(expected_rows()) == 39
    assert as_tuples(df) == expected_rows()
    assert set(df["experiment_id"]) == {f"grid0001-{n}" for n in range(6)}
    assert 99.0 not in list(df[df["trial"] == RERUN]["value"])  # the crashed attempt's


def test_alias_is_the_engines_config_key(results) -> None:
    df = results.df
    for config, alias in zip(CONFIGS, ALIASES, strict=True):
        assert ConfigItem(0, 0, config, config).key == alias
        assert set(df[df["lr"] == config["lr"]]["alias"]) == {alias}


def test_filters_select_trials_variables_and_iterations(results) -> None:
    assert len(results.to_df(name="loss")) == 5 * N_ITERS + FAILED_ITERS
    by_config = results.to_df(config={"lr": 0.1}, name="loss")
    assert sorted(set(by_config["trial"])) == [0, 1, 2]
    both = results.to_df(config={"lr": [0.1, 0.01], "model": "Adam"})
    assert sorted(set(both["trial"])) == [3, 4, 5]
    assert sorted(set(results.to_df(alias=ALIASES[1])["trial"])) == [3, 4, 5]
    assert set(results.to_df(status="failed")["trial"]) == {FAILED}
    one = results.to_df(experiment_id=["grid0001-4"], name=["loss", "acc"])
    assert set(one["trial"]) == {4} and len(one) == N_ITERS + 2
    assert len(results.to_df(iterations=range(2), name="loss")) == 6 * 2
    picked = results.to_df(iterations=[0, 3], name="loss")
    assert sorted(set(picked["iteration"])) == [0, 3] and len(picked) == 5 * 2 + 1

    last = results.to_df(iterations="last", name="acc")
    assert dict(zip(last["trial"], last["iteration"], strict=True)) == {
        0: 3,
        1: 3,
        2: 3,
        3: 3,
        4: 3,
        FAILED: 1,
    }
    assert list(last["value"]) == [acc(0, 0, 3), acc(0, 1, 3), acc(0, 2, 3),
                                   acc(1, 0, 3), acc(1, 1, 3), acc(1, 2, 1)]  # fmt: skip
    no_config = results.to_df(include_config=False)
    assert list(no_config.columns) == [*LONG, "alias", "status"]


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"config": {"lrr": 0.1}}, "config: unknown key 'lrr'; the research's config keys are "
                                   "['lr', 'model']"),
        ({"name": "lss"}, "name: unknown variable 'lss'; the research saves ['loss', 'acc', "
                          "'shape']"),
        ({"iterations": -1}, "iterations: expected an iteration number >= 0, a list of them or "
                             "'last', got -1"),
        ({"status": "DONE"}, "status: unknown status 'DONE'; expected one of WAITING, RUNNING"),
    ],
)  # fmt: skip
def test_bad_filters_are_named(results, filters, message) -> None:
    with pytest.raises(ConfigError) as info:
        results.to_df(**filters)
    assert str(info.value).startswith(message)


def test_pivot_has_one_row_per_iteration_and_a_column_per_variable(results) -> None:
    df = results.to_df(pivot=True)
    head = ["experiment_id", "trial", "repetition", "iteration", "lr", "model", "alias"]
    assert list(df.columns) == [*head, "status", "loss", "acc", "shape"]
    assert len(df) == 5 * N_ITERS + FAILED_ITERS
    rerun = df[df["trial"] == RERUN].set_index("iteration")
    assert list(rerun["loss"]) == [loss(1, 1, it) for it in range(N_ITERS)]
    assert pd.isna(rerun.loc[0, "acc"]) and rerun.loc[1, "acc"] == acc(1, 1, 1)
    assert rerun.loc[0, "shape"] == [2, 2] and rerun.loc[1, "shape"] is None
    last = results.to_df(pivot=True, iterations="last", name=["loss", "acc"])
    assert len(last) == 6  # each trial saved both last at its last iteration


def hand_aggregate(store: Store, name: str, iteration: int | str) -> dict[tuple, tuple]:
    """(lr, model) -> (mean, std, count) of ``name``, computed from the stored reports."""
    values: dict[tuple, list[float]] = {}
    for trial in store.get_trials("grid0001", reports=True):
        kept = [r for r in trial.reports if r.attempt == trial.attempt and name in r.metrics]
        if iteration != "last":
            kept = [r for r in kept if r.step == iteration]
        if kept:
            key = (trial.params["lr"], trial.params["model"])
            values.setdefault(key, []).append(max(kept, key=lambda r: r.step).metrics[name])
    return {
        key: (
            statistics.mean(items),
            statistics.stdev(items) if len(items) > 1 else math.nan,
            len(items),
        )
        for key, items in values.items()
    }


@pytest.mark.parametrize("iteration", ["last", 3, 0])
def test_aggregate_equals_a_hand_computation_over_the_stored_reports(
    results, store, iteration
) -> None:
    table = results.aggregate(iteration=iteration)
    names = ["loss", "acc"] if iteration != 0 else ["loss"]  # shape is a list; no acc at 0
    stats = [f"{n}_{part}" for n in names for part in ("mean", "std", "count")]
    assert list(table.columns) == ["lr", "model", *stats]
    assert [tuple(k) for k in table[["lr", "model"]].itertuples(index=False)] == [
        (0.1, "SGD"),
        (0.01, "Adam"),
    ]
    for name in names:
        hand = hand_aggregate(store, name, iteration)
        for row in table.itertuples(index=False):
            mean, std, count = hand[(row.lr, row.model)]
            assert getattr(row, f"{name}_count") == count
            assert getattr(row, f"{name}_mean") == pytest.approx(mean, rel=1e-12)
            assert getattr(row, f"{name}_std") == pytest.approx(std, rel=1e-12)
    if iteration == 3:  # the failed trial never reached iteration 3
        assert list(table["loss_count"]) == [3, 2]


def test_aggregate_groups_by_the_keys_asked_and_refuses_lists(results, store) -> None:
    by_model = results.aggregate("loss", by="model")
    assert list(by_model.columns) == ["model", "loss_mean", "loss_std", "loss_count"]
    assert list(by_model["model"]) == ["SGD", "Adam"]
    with pytest.raises(ConfigError, match="name: variable 'shape' is not numeric"):
        results.aggregate("shape")
    with pytest.raises(ConfigError, match="by: unknown key 'lrr'; the research's config keys"):
        results.aggregate(by="lrr")


def test_one_repetition_has_no_std_and_no_profile(tmp_path) -> None:
    store = Store.open(str(tmp_path / "one.db"))
    store.create_experiment(research_record("single01", "single", n_reps=1, profile=False))
    trial = Trial(
        "single01", 0, {"lr": 0.1, "model": "SGD", "repetition": 0}, TrialStatus.SUCCEEDED
    )
    store.put_trial(trial)
    store.add_report("single01", 0, Report(0, {"loss": 0.5}, 1.0))
    store.flush()
    results = ResearchResults(store, "single01")
    table = results.aggregate()
    assert table.loc[0, "loss_mean"] == 0.5 and table.loc[0, "loss_count"] == 1
    assert math.isnan(table.loc[0, "loss_std"])
    assert "0.5 (1)" in results.table() and "±" not in results.table()
    assert list(results.profile.columns) == ["trial", "iteration", "unit", "time", "calls"]
    assert results.profile.empty and results.profile_summary().empty


def test_table_shows_mean_and_std_per_config(results, store) -> None:
    text = results.table()
    lines = text.splitlines()
    assert lines[0].split() == ["lr", "model", "loss", "acc"]
    mean, std, count = hand_aggregate(store, "loss", "last")[(0.01, "Adam")]
    assert lines[2].split()[:2] == ["0.01", "Adam"]
    assert f"{mean:.4g} ± {std:.4g} ({count})" in lines[2]
    assert "grid0001" in repr(results) and "6 config x repetitions" in repr(results)


def test_profile_keeps_each_trials_last_attempt(results, store) -> None:
    profile = results.profile
    assert list(profile.columns) == ["trial", "iteration", "unit", "time", "calls"]
    assert len(profile) == 5 * N_ITERS * 2 + FAILED_ITERS * 2
    assert 9.0 not in set(profile["time"])  # the crashed attempt's lines
    rerun = profile[(profile["trial"] == RERUN) & (profile["unit"] == "train")]
    assert list(rerun["time"]) == [unit_time(RERUN, it, "train") for it in range(N_ITERS)]

    summary = results.profile_summary()
    assert list(summary.columns) == ["unit", "total_time", "mean_time", "calls", "share"]
    assert list(summary["unit"]) == ["train", "test"]  # most time first
    iters = {n: FAILED_ITERS if n == FAILED else N_ITERS for n in range(6)}
    train = sum(unit_time(n, it, "train") for n in range(6) for it in range(iters[n]))
    test = sum(unit_time(n, it, "test") for n in range(6) for it in range(iters[n]))
    first = summary.iloc[0]
    assert first["total_time"] == pytest.approx(train)
    assert first["calls"] == sum(iters.values())
    assert first["mean_time"] == pytest.approx(train / sum(iters.values()))
    assert first["share"] == pytest.approx(train / (train + test))


def test_profile_skips_a_line_being_written_but_not_a_broken_one(results, store) -> None:
    path = trial_folder(store, "grid0001") / "trials" / "0" / "profile.jsonl"
    path.write_text(path.read_text() + '{"iteration": 4, "unit": "tr')
    assert len(results.profile) == 5 * N_ITERS * 2 + FAILED_ITERS * 2
    path.write_text('{"oops": 1}\n' + path.read_text())
    with pytest.raises(StoreError, match=r"profile.jsonl, line 1: expected a JSON object"):
        results.profile  # noqa: B018


def test_results_follow_a_running_research_from_another_store(results, tmp_path) -> None:
    writer = Store.open(str(tmp_path / "store.db"))
    before = len(results.df)
    trial = Trial("grid0001", 6, {"lr": 0.5, "model": "SGD", "repetition": 0}, TrialStatus.RUNNING)
    writer.put_trial(trial)
    writer.add_report("grid0001", 6, Report(0, {"loss": 2.0}, 1.0))
    writer.flush()
    df = results.df
    assert len(df) == before + 1
    assert df.iloc[-1].to_dict()["alias"] == "lr_0.5-model_SGD"
    assert df.iloc[-1]["status"] == "RUNNING"


def test_load_research_reads_a_research_and_refuses_other_experiments(store) -> None:
    research = load_research("grid", store)
    assert research.id == "grid0001" and research.name == "grid"
    assert research.status.value == "DONE"
    assert research.options.n_reps == N_REPS and research.options.units == ["train", "test"]
    assert len(research.trials) == 6 and len(research.results.df) == 39
    assert len(research.profile) == 5 * N_ITERS * 2 + FAILED_ITERS * 2
    with pytest.raises(ConfigError, match="experiment plain001 is not a research"):
        load_research("plain001", store)
    with pytest.raises(ExperimentNotFound):
        load_research("nothere1", store)


def test_load_research_opens_a_storage_string(store, tmp_path) -> None:
    research = load_research("grid0001", str(tmp_path / "store.db"))
    assert len(research.results.to_df(name="loss")) == 22


def test_remove_research_deletes_its_rows_and_folder(store, monkeypatch) -> None:
    folder = trial_folder(store, "grid0001")
    assert (folder / "trials" / "0" / "profile.jsonl").exists()
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert remove_research("grid", store) is False
    assert store.get_experiment("grid0001").id == "grid0001"
    with pytest.raises(ConfigError, match="experiment plain001 is not a research"):
        remove_research("plain001", store, ask=False)

    assert remove_research("grid", store, ask=False) is True
    with pytest.raises(ExperimentNotFound):
        store.get_experiment("grid0001")
    with pytest.raises(ExperimentNotFound):
        store.get_trials("grid0001")
    assert not folder.exists()
    assert [s.id for s in store.list_experiments()] == ["plain001"]


def test_remove_research_refuses_a_running_one(store) -> None:
    store.acquire_lease("grid0001", owner="another-driver", pid=os.getppid())
    with pytest.raises(ExperimentBusy, match="experiment grid0001 is being run by a driver"):
        remove_research("grid0001", store, ask=False)
    assert store.get_experiment("grid0001").id == "grid0001"


@pytest.mark.postgres
def test_results_and_remove_on_postgresql(new_storage) -> None:
    store = Store.open(new_storage("postgresql"))
    write_research(store)
    results = load_research("grid", store).results
    assert as_tuples(results.df) == expected_rows()
    table = results.aggregate("loss")
    hand = hand_aggregate(store, "loss", "last")
    for row in table.itertuples(index=False):
        assert (row.loss_mean, row.loss_count) == pytest.approx(hand[(row.lr, row.model)][::2])
    assert remove_research("grid", store, ask=False)
    assert store.list_experiments() == []


def test_tables_without_pandas_name_the_extra_and_text_still_works(results, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` raises ImportError
    with pytest.raises(ImportError, match=r'needs pandas: pip install "hyperlab\[research\]"'):
        results.df  # noqa: B018
    assert len(results.to_rows().rows) == 39
    assert results.table().splitlines()[0].split() == ["lr", "model", "loss", "acc"]
