"""``Result.replay``: an assessor run over a stored experiment's learning curves decides what
the same assessor decides live on the same curves (explicit arguments throughout: the
assessors' defaults are not what is tested)."""

from __future__ import annotations

import dataclasses
import math

import pytest

import hyperlab
from hyperlab.assessors import ASHA
from hyperlab.errors import ConfigError
from hyperlab.trial import Report, TrialStatus

EPOCHS = 9
TRIALS = 12
ASHA_ARGS = {"min_resource": 1, "max_resource": EPOCHS, "reduction_factor": 3}
CASES = {
    "asha": ("asha", {**ASHA_ARGS, "variant": "stop"}),
    "asha-promotion": ("asha", {**ASHA_ARGS, "variant": "promotion"}),
    "hyperband": ("hyperband", ASHA_ARGS),
    "median": ("median", {"start_step": 2}),
}


def train(params):
    """Curves that cross: a high ``lr`` learns fast, a wide model ends higher. Continues from
    its checkpoint when a scheduler resumes it."""
    state = hyperlab.load_checkpoint() or {"epoch": 0}
    accuracy = 0.0
    for epoch in range(state["epoch"], EPOCHS):
        accuracy = (1 - math.exp(-params["lr"] * (epoch + 1))) * (0.6 + 0.04 * params["width"])
        hyperlab.report(accuracy=accuracy)
        hyperlab.checkpoint({"epoch": epoch + 1})
    return {"accuracy": accuracy}


SPACE = {"lr": hyperlab.loguniform(0.05, 2.0), "width": hyperlab.randint(1, 10)}


def experiment(storage, assessor=None, assessor_args=None, **options):
    """The same 12 trials (random proposals, seed 3) run one at a time, with or without an
    assessor."""
    return hyperlab.run(
        train,
        SPACE,
        metric="accuracy",
        mode="max",
        tuner="random",
        seed=3,
        max_trials=TRIALS,
        concurrency=1,
        assessor=assessor,
        assessor_args=assessor_args,
        storage=storage,
        progress=False,
        **options,
    )


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """An experiment without early stopping: every curve whole."""
    folder = tmp_path_factory.mktemp("baseline")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HYPERLAB_HOME", str(folder / "home"))
        result = experiment(str(folder / "store.db"))
    assert all(len(t.reports) == EPOCHS for t in result.trials)
    return str(folder / "store.db"), result.experiment_id


def stored(baseline):
    storage, experiment_id = baseline
    return hyperlab.load(experiment_id, storage=storage)


@pytest.mark.parametrize("order", ["time", "sequential"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_replay_decides_as_the_assessor_does_live(baseline, tmp_path, case, order):
    name, args = CASES[case]
    live = experiment(str(tmp_path / "live.db"), name, args)
    replay = stored(baseline).replay(name, args, order=order)

    live_stopped = {t.number for t in live.trials if t.status is TrialStatus.EARLY_STOPPED}
    assert {t.number for t in replay.stopped} == live_stopped
    assert live_stopped or case == "median"  # the curves give every assessor work
    for t in live.trials:
        replayed = replay.trial(t.number)
        assert replayed.kept == len(t.reports), t.number  # stopped at the same step
        if replayed.stopped:
            assert replayed.stopped_at == t.reports[-1].step
            assert replayed.last_value == pytest.approx(t.reports[-1].metrics["accuracy"])
        else:
            assert replayed.outcome == "ran" and replayed.stopped_at is None
    # the epochs it saves are those the live run did not train
    assert replay.resource == TRIALS * EPOCHS
    assert replay.kept_resource == sum(len(t.reports) for t in live.trials)
    assert replay.saved_percent == pytest.approx(100 * replay.saved / replay.resource)
    # the best it would have found is the live run's best
    assert replay.best_with == (live.best_trial.number,)
    assert replay.best_value_with == pytest.approx(live.best_value)
    assert replay.best_without == (stored(baseline).best_trial.number,)
    assert replay.best_survived == (replay.best_with == replay.best_without)


def test_a_stopped_best_says_what_would_have_been_found_instead(baseline):
    replay = stored(baseline).replay("asha", CASES["asha"][1])
    best = stored(baseline).best_trial
    assert replay.best_without == (best.number,)
    assert replay.trial(best.number).stopped  # these curves cross: ASHA cuts the best
    assert not replay.best_survived
    assert replay.best_value_with < replay.best_value_without
    kept = [t for t in replay.trials if t.outcome == "ran"]
    assert replay.best_value_with == max(t.value for t in kept)
    lenient = stored(baseline).replay("median", {"start_step": 8})
    assert lenient.best_survived and lenient.best_with == lenient.best_without


def test_pauses_count_as_stops_unless_resumed(baseline):
    replay = stored(baseline).replay(*CASES["hyperband"])
    resumed = [t for t in replay.trials if t.pauses and t.outcome == "ran"]
    assert resumed, "some trial is paused at a rung and promoted"
    assert all(t.kept == EPOCHS for t in resumed)  # it went on from where it paused
    never = [t for t in replay.trials if t.pauses and t.outcome == "stopped"]
    assert never and all(t.kept < EPOCHS for t in never)


def test_an_instance_is_replayed_as_a_copy(baseline):
    asha = ASHA(mode="max", **ASHA_ARGS)
    first = stored(baseline).replay(asha)
    again = stored(baseline).replay(asha)
    assert first.as_dict() == again.as_dict()
    assert first.stopped == stored(baseline).replay("asha", ASHA_ARGS).stopped
    with pytest.raises(ConfigError, match="mode"):
        stored(baseline).replay(ASHA(mode="min", **ASHA_ARGS))  # the experiment maximises


def test_the_json_form_holds_what_the_table_shows(baseline):
    replay = stored(baseline).replay("asha", CASES["asha"][1])
    found = replay.as_dict()
    assert found["stopped"] == [t.number for t in replay.stopped]
    assert found["resource"] == TRIALS * EPOCHS
    assert found["saved"] == found["resource"] - found["kept_resource"]
    assert found["best"]["survived"] is False
    assert found["best"]["with"] == list(replay.best_with)
    assert len(found["trials"]) == TRIALS
    assert {"number", "outcome", "stopped_at_step", "kept_reports"} <= set(found["trials"][0])


def test_time_order_interleaves_trials_and_sequential_order_does_not(baseline):
    """Trial 1 (worse) reports its first epoch before trial 0 does: in time order it leads the
    rung then and goes on; run one at a time, trial 0 is there first and trial 1 is stopped."""
    result = stored(baseline)
    record = result.store.get_experiment(result.experiment_id)
    good, bad = result.trials[0], result.trials[1]

    def curve(trial, start, values):
        reports = tuple(Report(i, {"accuracy": v}, start + 1 + i) for i, v in enumerate(values))
        return dataclasses.replace(
            trial, started_at=start, finished_at=start + 10, reports=reports, value=values[-1]
        )

    trials = [curve(good, 100.0, [0.5, 0.6, 0.7]), curve(bad, 90.0, [0.2, 0.3, 0.4])]
    from hyperlab.experiment._whatif import replay_assessor

    args = {"min_resource": 1, "max_resource": 3, "reduction_factor": 2, "variant": "stop"}
    by_time = replay_assessor(record, trials, "asha", args, order="time")
    one_by_one = replay_assessor(record, trials, "asha", args, order="sequential")
    assert [t.number for t in by_time.stopped] == []
    assert [(t.number, t.stopped_at) for t in one_by_one.stopped] == [(bad.number, 0)]


def test_bad_input_is_a_clear_error(baseline, tmp_path):
    result = stored(baseline)
    with pytest.raises(ConfigError, match="'ashaa'"):
        result.replay("ashaa")
    with pytest.raises(ConfigError, match="'foo'"):
        result.replay("asha", {"foo": 1})
    with pytest.raises(ConfigError, match="min_resource < max_resource"):
        result.replay("asha", {"min_resource": 5, "max_resource": 2})
    with pytest.raises(ConfigError, match="'backwards'"):
        result.replay("asha", ASHA_ARGS, order="backwards")
    with pytest.raises(ConfigError, match="resource_attr='epoch'"):
        result.replay("median", {"start_step": 1, "resource_attr": "epoch"})
    silent = hyperlab.run(
        lambda p: p["x"],
        {"x": hyperlab.uniform(0, 1)},
        max_trials=2,
        storage=str(tmp_path / "silent.db"),
        progress=False,
    )
    with pytest.raises(ConfigError, match=f"experiment {silent.experiment_id} has no intermediate"):
        silent.replay("asha", ASHA_ARGS)


def two_objectives(params):
    for epoch in range(EPOCHS):
        hyperlab.report(loss=params["x"] / (epoch + 1), size=params["y"] + epoch)
    return {"loss": params["x"] / EPOCHS, "size": params["y"] + EPOCHS}


def test_several_objectives_judge_one_named_or_all_with_moasha(tmp_path):
    result = hyperlab.run(
        two_objectives,
        {"x": hyperlab.uniform(0, 1), "y": hyperlab.uniform(0, 1)},
        metric=["loss", "size"],
        mode=["min", "min"],
        tuner="random",
        seed=5,
        max_trials=9,
        storage=str(tmp_path / "mo.db"),
        progress=False,
    )
    with pytest.raises(ConfigError, match="objective"):
        result.replay("asha", ASHA_ARGS)
    by_loss = result.replay("asha", {**ASHA_ARGS, "objective": "loss"})
    assert by_loss.stopped and by_loss.best_value_with is None  # no one best: a front
    assert set(by_loss.best_with) <= {t.number for t in by_loss.trials if t.outcome == "ran"}
    both = result.replay("moasha", ASHA_ARGS)
    assert both.stopped
    assert both.best_without == tuple(t.number for t in result.best_trials)


@pytest.mark.postgres
def test_a_postgresql_store_replays_as_sqlite(baseline, new_storage):
    storage = new_storage("postgresql")
    on_pg = experiment(storage)
    name, args = CASES["hyperband"]
    replayed = hyperlab.load(on_pg.experiment_id, storage=storage).replay(
        name,
        args,
        order="sequential",  # the stored times differ; the curves do not
    )
    on_sqlite = stored(baseline).replay(name, args, order="sequential")
    assert replayed.as_dict()["trials"] == on_sqlite.as_dict()["trials"]
    assert replayed.stopped


def test_a_running_experiment_is_replayed_as_far_as_it_went(baseline):
    """A trial still running (4 epochs stored so far) and one not started: the replay uses the
    reports there are, and says so."""
    from hyperlab.experiment._whatif import replay_assessor
    from hyperlab.trial import ExperimentStatus

    result = stored(baseline)
    record = result.store.get_experiment(result.experiment_id)
    running = dataclasses.replace(record, status=ExperimentStatus.RUNNING)
    trials = list(result.trials[:6])
    trials[5] = dataclasses.replace(
        trials[5],
        status=TrialStatus.RUNNING,
        value=None,
        finished_at=None,
        reports=trials[5].reports[:4],
    )
    trials.append(
        dataclasses.replace(
            result.trials[6], status=TrialStatus.WAITING, started_at=None, reports=(), value=None
        )
    )
    replay = replay_assessor(running, trials, "median", {"start_step": 10})
    assert [t.number for t in replay.trials] == [0, 1, 2, 3, 4, 5]
    assert replay.trial(5).outcome == "unfinished" and replay.trial(5).kept == 4
    assert not replay.stopped  # nothing is judged below resource 10
    assert any("have not ended" in note for note in replay.notes)


def test_curves_cut_short_in_the_store_are_noted(tmp_path):
    cut = experiment(str(tmp_path / "cut.db"), *CASES["asha"])
    replay = cut.replay("median", {"start_step": 2})
    assert any("stopped early in the experiment itself" in note for note in replay.notes)
    assert replay.resource == sum(len(t.reports) for t in cut.trials)
