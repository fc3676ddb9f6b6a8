"""BatchFlow's ``Research`` surface: ``run``'s options by BatchFlow's names (mapped or refused
with what to use instead), per-worker and per-branch configs, ``terminate``, ``is_finished``,
``Research.remove(force=)``, every form of ``when`` and BatchFlow's device sharing."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import hyperlab
from hyperlab import ConfigError, TrialStatus
from hyperlab.research import Domain, Research
from hyperlab.research._devices import split_devices
from hyperlab.research._units import When
from hyperlab.store import Store


def _store(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'r.db'}"


def _research(storage: str | None, **kwargs) -> Research:
    research = Research(name="bf", domain=Domain(x=[1, 2, 3, 4]), storage=storage, **kwargs)
    return research.add_callable(lambda x: x * 10, name="times", save_to="y")


# ---- run's options ------------------------------------------------------------------------


def test_run_renames_and_keeps_results_in_memory_without_dump_results(
    tmp_path, hyperlab_home
) -> None:
    pytest.importorskip("pandas", reason="the research extra (pandas) is not installed")
    research = _research(None).run(
        n_iters=1, name="renamed", dump_results=False, parallel=False, bar=False
    )
    assert research.name == "renamed" and research.experiment.status.name == "DONE"
    assert sorted(research.results.to_df(name="y")["value"]) == [10, 20, 30, 40]
    assert not (Path(hyperlab_home) / "hyperlab.db").exists()  # nothing written to disk
    assert research.is_finished


@pytest.mark.parametrize(
    "run_args, message",
    [
        (
            {"dump_results": False, "redirect_stdout": 1},
            "redirect_stdout: can be 0 or 2 only when dump_results is False, got 1",
        ),
        (
            {"dump_results": False, "redirect_stderr": 3},
            "redirect_stderr: can be 0 or 2 only when dump_results is False, got 3",
        ),
        ({"redirect_stdout": 3}, "one common file for the whole research) is not supported"),
        ({"redirect_stdout": 0}, "for both streams or for neither"),
        ({"redirect_stdout": "yes"}, "redirect_stdout: expected True, False, 0, 1, 2 or 3"),
        ({"debug": True, "parallel": True}, "debug: True needs parallel=False"),
        ({"debug": True, "executor_target": "threads"}, "executor_target='threads'"),
        ({"parallel": False, "executor": "threads"}, "parallel: False runs every experiment"),
        ({"executor_target": "mpc"}, "use 'for' (branches in turn) or 'threads'"),
        ({"bar": object()}, "bar: expected True or False"),
        ({"bar": True, "progress": False}, "give one of them"),
        ({"create_id_prefix": 3}, "create_id_prefix: 3 is not supported"),
        ({"git_meta": "yes"}, "git_meta: expected True or False, got 'yes'"),
        ({"dump_results": False, "_storage": True}, "dump_results: False keeps the research"),
        ({"workers": [{"x": 1}]}, "workers: key 'x' is a key of the domain too"),
        ({"workers": [{"k": 1}], "branches": [{"k": 2}]}, "key 'k' is in both"),
        ({"branches": [{"k": 1}, "gpu"]}, "branches: expected an integer >= 1 or a list"),
        ({"workers": []}, "workers: expected an integer >= 1 or a non-empty list"),
        ({"devices": ["cuda"]}, "got 'cuda'; leave devices=None"),
        ({"devices": [-1]}, "got -1"),
    ],
)
def test_batchflow_options_that_cannot_hold_are_refused_before_anything_is_written(
    tmp_path, run_args, message
) -> None:
    storage = _store(tmp_path)
    built = _research(storage if run_args.pop("_storage", False) else None)
    if "dump_results" not in run_args or run_args["dump_results"]:
        built.storage = storage
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        if "bar" not in run_args:
            run_args["progress"] = False
        built.run(n_iters=1, **run_args)
    assert not Path(tmp_path / "r.db").exists() or Store.open(storage).list_experiments() == []


def test_a_name_given_first_as_batchflow_does_is_refused_with_the_keyword() -> None:
    with pytest.raises(ConfigError, match=r"give it as run\(name=\.\.\.\)"):
        _research(None).run("my-research")  # type: ignore[arg-type]


def test_redirect_zero_shows_the_output_here_and_keeps_the_logs(tmp_path, capsys) -> None:
    research = Research(name="out", domain=Domain(x=[7]), storage=_store(tmp_path))
    research.add_callable(lambda x: print(f"value {x}") or x, name="talk", save_to="y")
    research.run(
        n_iters=1, parallel=False, redirect_stdout=0, redirect_stderr=False, progress=False
    )
    assert "value 7" in capsys.readouterr().out
    folder = research.experiment.store.experiment_folder(
        research.experiment.store.get_experiment(research.id)
    )
    assert "value 7" in (folder / "trials" / "0" / "stdout.log").read_text()


# ---- workers and branches as configs ------------------------------------------------------


def test_worker_and_branch_configs_are_added_to_each_experiments_config(tmp_path) -> None:
    pytest.importorskip("pandas", reason="the research extra (pandas) is not installed")
    research = Research(name="cfg", domain=Domain(x=[1, 2, 3, 4, 5, 6]), storage=_store(tmp_path))
    research.add_callable(
        lambda config: (config["x"], config["place"], config["side"]),
        name="where",
        save_to=["x_", "place", "side"],
    )
    research.add_callable(lambda: hyperlab.get_params()["side"], name="params", save_to="seen")
    research.run(
        n_iters=1,
        workers=[{"place": "w0"}, {"place": "w1"}],
        branches=[{"side": "left"}, {"side": "right"}],
        parallel=False,  # the workers take turns, as BatchFlow's parallel=False cycles them
        progress=False,
    )
    df = research.results.to_df(pivot=True).sort_values("x_")
    assert list(df["place"]) == ["w0", "w0", "w1", "w1", "w0", "w0"]
    assert list(df["side"]) == ["left", "right"] * 3
    assert list(df["seen"]) == list(df["side"])


def test_a_config_key_read_by_reference_must_be_in_every_worker_config(tmp_path) -> None:
    pytest.importorskip("pandas", reason="the research extra (pandas) is not installed")
    from hyperlab.research import C

    research = Research(name="cfg", domain=Domain(x=[1, 2]), storage=_store(tmp_path))
    research.add_callable(lambda v: v, C("lr"), name="use", save_to="y")
    with pytest.raises(ConfigError, match=r"C\('lr'\) is not a config key"):
        research.run(
            n_iters=1, workers=[{"lr": 1}, {"other": 2}], executor="threads", progress=False
        )
    research.run(n_iters=1, workers=[{"lr": 1}, {"lr": 2}], executor="threads", progress=False)
    assert sorted(research.results.to_df(name="y")["value"]) in ([1, 1], [1, 2], [2, 2])


_barrier = threading.Barrier(2, timeout=5)


def _meet(x: int) -> int:
    _barrier.wait()  # both branches must be inside this unit at once
    return x


def test_executor_target_threads_runs_a_workers_branches_at_once(tmp_path) -> None:
    _barrier.reset()
    research = Research(name="threads", domain=Domain(x=[1, 2]), storage=_store(tmp_path))
    research.add_callable(_meet, save_to="y")
    research.run(n_iters=2, branches=2, parallel=False, executor_target="threads", progress=False)
    trials = research.experiment.store.get_trials(research.id, reports=True)
    assert [t.status for t in trials] == [TrialStatus.SUCCEEDED] * 2
    assert [len(t.reports) for t in trials] == [2, 2]


def test_executor_target_for_runs_branches_in_turn(tmp_path) -> None:
    order: list[tuple[int, int]] = []
    research = Research(name="for", domain=Domain(x=[1, 2]), storage=_store(tmp_path))
    research.add_callable(
        lambda x, iteration: order.append((iteration, x)) or x, name="note", save_to="y"
    )
    research.run(n_iters=2, branches=2, parallel=False, executor_target="for", progress=False)
    assert order == [(0, 1), (0, 2), (1, 1), (1, 2)]


# ---- terminate, is_finished, remove -------------------------------------------------------


def test_terminate_stops_a_detached_research_and_it_is_not_finished(tmp_path) -> None:
    def slow(x):
        time.sleep(0.05)
        return x

    research = Research(name="long", domain=Domain(x=list(range(50))), storage=_store(tmp_path))
    research.add_callable(slow, save_to="y")
    assert not research.is_finished
    research.terminate()  # not run yet: nothing to do
    research.run(n_iters=20, executor="threads", detach=True, progress=False)
    time.sleep(0.3)
    research.terminate(force=True)
    assert research.experiment.status is hyperlab.ExperimentStatus.STOPPED
    assert not research.is_finished
    research.terminate()  # ended: nothing to do


def test_remove_warns_about_a_missing_research_and_forces_a_plain_experiment(tmp_path) -> None:
    storage = _store(tmp_path)
    with pytest.warns(UserWarning, match="nothing removed"):
        assert Research.remove("never-ran", storage, ask=False) is False
    plain = hyperlab.run(
        lambda p: p["a"],
        {"a": hyperlab.choice(1, 2)},
        tuner="grid",
        storage=storage,
        name="plain",
        progress=False,
    )
    with pytest.raises(ConfigError, match="is not a research"):
        Research.remove("plain", storage, ask=False)
    assert Research.remove("plain", storage, ask=False, force=True) is True
    assert Store.open(storage).list_experiments() == []
    assert plain.experiment_id


# ---- when, for units and for update_domain ------------------------------------------------


@pytest.mark.parametrize(
    "when, due",
    [
        (3, [2, 5, 8]),
        ("%3", [2, 5, 8]),
        ("#4", [4]),
        ("last", [9]),
        ([4, "#0", "last"], [0, 3, 7, 9]),
        (["%5", "#2"], [2, 4, 9]),
    ],
)
def test_when_forms_schedule_units_as_batchflow(when, due) -> None:
    schedule = When.parse(when, "unit")
    assert [i for i in range(10) if schedule.due(i, last=i == 9)] == due


@pytest.mark.parametrize("when", ["%0", "%x", "#", "first", 0, -2, [], [1, None], 2.0, True])
def test_bad_when_forms_name_the_value(when) -> None:
    with pytest.raises(ConfigError, match="when: expected a positive int or '%N'"):
        When.parse(when, "unit")
    research = Research(domain=Domain(x=[1]))
    with pytest.raises(ConfigError, match="for update_domain, got"):
        research.update_domain(lambda results: None, when=when)


def _adaptive(tmp_path: Path, when, new_domains: list) -> tuple[Research, list[int]]:
    sizes: list[int] = []

    def update(results):
        sizes.append(len(results))
        return new_domains.pop(0) if new_domains else None

    research = (
        Research(name="adaptive", domain=Domain(x=[1, 2, 3, 4]), storage=_store(tmp_path))
        .add_callable(lambda x: x, name="f", save_to="y")
        .update_domain(update, when=when)
    )
    research.run(n_iters=1, parallel=False, progress=False)
    return research, sizes


@pytest.mark.parametrize(
    "when, sizes, xs",
    [
        ("last", [4, 6], [1, 2, 3, 4, 10, 20]),  # each domain run out, then the update
        ("%2", [2, 4], [1, 2, 10, 20]),  # a new domain after two finished; then kept
        ("#0", [1], [1, 10, 20]),  # once, after the first finished
        (["#2", "last"], [3, 5], [1, 2, 3, 10, 20]),
    ],
)
def test_update_domain_when_forms(tmp_path, when, sizes, xs) -> None:
    pytest.importorskip("pandas", reason="the research extra (pandas) is not installed")
    research, seen = _adaptive(tmp_path, when, [Domain(x=[10, 20])])
    assert seen == sizes
    trials = research.experiment.store.get_trials(research.id)
    assert [t.params["x"] for t in trials] == xs


def test_update_domain_refuses_batchflows_iteration_kwargs() -> None:
    with pytest.raises(ConfigError, match=r"update_domain: n_reps= \(BatchFlow's iteration"):
        Research(domain=Domain(x=[1])).update_domain(lambda results: None, when=1, n_reps=2)


# ---- devices --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "devices, workers, branches, split",
    [
        (None, 2, 2, None),
        ([0, 1], 2, 2, [[[0], [0]], [[1], [1]]]),  # 2 GPUs for 2 workers x 2 branches
        (["cuda:0", "cuda:1"], 2, 2, [[[0], [0]], [[1], [1]]]),
        (1, 3, 2, [[[1], [1]], [[1], [1]], [[1], [1]]]),  # BatchFlow's own examples
        ([1, 2], 3, 2, [[[1], [1]], [[1], [2]], [[2], [2]]]),
        ([1, 2, 3, 4, 5], 3, 2, [[[1], [2]], [[3], [4]], [[5], [1]]]),
        (list(range(12)), 3, 2, [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8, 9], [10, 11]]]),
        ([0, 1, 2], 1, 2, [[[0, 1], [2, 0]]]),  # more, not a multiple: wrapped around
        (["GPU:3", " 2 "], 1, 2, [[[3], [2]]]),
        ([[0, "cuda:1"], [[2, 3], 4]], 2, 2, [[[0], [1]], [[2, 3], [4]]]),
    ],
)
def test_devices_are_split_as_batchflow_splits_them(devices, workers, branches, split) -> None:
    got = split_devices(devices, workers, branches)
    assert (None if got is None else [[list(b) for b in w] for w in got]) == split


_SEEN: list[tuple[int, ...]] = []


def _where(devices) -> int:
    _SEEN.append(tuple(devices))
    return 1


def test_two_gpus_shared_by_two_workers_of_two_branches(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)  # threads see every device
    _SEEN.clear()
    research = Research(name="gpus", domain=Domain(i=[0, 1, 2, 3]), storage=_store(tmp_path))
    research.add_callable(_where, save_to="one")
    research.run(
        n_iters=1,
        workers=2,
        branches=2,
        devices=["cuda:0", "cuda:1"],
        executor="threads",
        progress=False,
    )
    assert sorted(_SEEN) == [(0,), (0,), (1,), (1,)]
