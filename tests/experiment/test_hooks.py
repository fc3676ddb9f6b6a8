"""Engine hooks after NNI's sequential engine: ``continue_on_failure=False`` re-raises the failed
trial's exception, ``Experiment.budget_available()``, user callbacks, and ``id=``."""

from __future__ import annotations

import logging
import sys
import threading
import time
from dataclasses import replace
from types import SimpleNamespace

import pytest

import hyperlab
from hyperlab import ExperimentStatus, TrialStatus
from hyperlab import space as hs
from hyperlab.cli import main as cli_main
from hyperlab.executors._exceptions import dump_exception, load_exception
from hyperlab.experiment._callbacks import CallbackRunner
from hyperlab.store import Store
from hyperlab.testing.fakes import Finish
from tests.simulation import simulate

GRID = {"i": hs.choice(0, 1, 2, 3, 4)}


def experiment(objective, space=None, **options):
    """An ``Experiment`` with quiet defaults: a grid over ``i`` and the in-memory store."""
    options.setdefault("storage", ":memory:")
    options.setdefault("progress", False)
    options.setdefault("tuner", "grid")
    return hyperlab.Experiment(objective, space or GRID, **options)


# ---- continue_on_failure=False raises the trial's own exception ------------------------------


class TrainingDiverged(Exception):
    """Raised by ``diverge_at_two``; module-level, so worker processes import it by name."""


def diverge_at_two(params):
    if params["i"] == 2:
        raise TrainingDiverged(f"loss is nan at i={params['i']}")
    return float(params["i"])


def value_of_i(params):
    return float(params["i"])


@pytest.mark.parametrize("executor", ["inprocess", "threads", "processes"])
def test_the_failed_trials_exception_reaches_the_caller_once_the_store_is_consistent(
    executor, tmp_path
):
    storage = str(tmp_path / "runs.db")
    exp = experiment(diverge_at_two, executor=executor, continue_on_failure=False, storage=storage)
    with pytest.raises(TrainingDiverged) as info:
        exp.run()
    assert str(info.value) == "loss is nan at i=2"
    notes = info.value.__notes__
    assert notes[0] == f"in trial 2 of experiment {exp.id}"
    if executor == "processes":  # the traceback it had in the worker travels as a note
        assert "raised:\nTraceback (most recent call last)" in notes[1]
        assert "in diverge_at_two" in notes[1]

    reader = Store.open(storage)  # what anyone reading the store sees now
    record = reader.get_experiment(exp.id)
    assert record.status is ExperimentStatus.ERROR
    assert record.lease_owner is None  # the lease was released before the raise
    trials = reader.get_trials(exp.id)
    assert [t.status for t in trials] == [TrialStatus.SUCCEEDED] * 2 + [TrialStatus.FAILED]
    assert trials[2].error.startswith("Traceback (most recent call last)")
    assert trials[2].error.endswith("TrainingDiverged: loss is nan at i=2")

    # a new driver resumes it: the failed trial stays, the grid goes on
    result = hyperlab.resume(exp.id, storage=storage, objective=value_of_i, progress=False)
    assert result.status is ExperimentStatus.DONE
    assert [t.status for t in result.trials] == (
        [TrialStatus.SUCCEEDED] * 2 + [TrialStatus.FAILED] + [TrialStatus.SUCCEEDED] * 2
    )


@pytest.mark.parametrize("executor", ["inprocess", "threads"])
def test_trials_in_the_drivers_process_raise_the_very_object_with_its_traceback(executor):
    raised: list[BaseException] = []

    def objective(params):
        error = KeyError(f"no column {params['i']}")
        raised.append(error)
        raise error

    exp = experiment(objective, executor=executor, continue_on_failure=False)
    exp.start()
    with pytest.raises(KeyError) as info:
        exp.wait()
    assert info.value is raised[0]
    assert info.value.__notes__ == [f"in trial 0 of experiment {exp.id}"]
    frames = [frame.name for frame in info.traceback]
    assert "objective" in frames  # where it was raised, under where it was re-raised


def test_a_class_made_in_the_test_crosses_to_the_worker_and_back_as_itself():
    class LocalError(RuntimeError):
        pass

    def objective(params):
        raise LocalError(f"local {params['i']}")

    exp = experiment(objective, executor="processes", continue_on_failure=False)
    with pytest.raises(LocalError) as info:
        exp.run()
    assert str(info.value) == "local 0"


class NeedsTwo(Exception):
    """Pickles, but cannot be rebuilt from its ``args`` (its ``__init__`` takes two)."""

    def __init__(self, first, second):
        super().__init__(f"{first} and {second}")


def raise_needs_two(params):
    raise NeedsTwo(params["i"], "more")


def test_an_exception_that_cannot_cross_processes_becomes_a_trial_error():
    exp = experiment(raise_needs_two, executor="processes", continue_on_failure=False)
    with pytest.raises(hyperlab.TrialError) as info:
        exp.run()
    message = str(info.value)
    assert message.startswith(
        f"experiment {exp.id}: trial 0 failed and continue_on_failure=False ended the "
        "experiment; its error:\nTraceback (most recent call last)"
    )
    assert message.endswith("NeedsTwo: 0 and more")
    assert info.value.result.status is ExperimentStatus.ERROR


def test_exceptions_are_pickled_for_the_driver_when_they_can_be():
    copy = load_exception(dump_exception(ValueError("bad lr", 3)))
    assert type(copy) is ValueError and copy.args == ("bad lr", 3)
    assert dump_exception(ValueError(threading.Lock())) is None  # cannot be pickled
    assert load_exception(dump_exception(NeedsTwo(1, 2))) is None  # cannot be unpickled
    assert dump_exception(None) is None and load_exception(None) is None


def test_a_failed_command_trial_raises_a_trial_error_quoting_its_error(tmp_path):
    trial = hyperlab.CommandTrial(
        f"{sys.executable} -c \"import sys; sys.exit('no data here')\"", code_dir=tmp_path
    )
    exp = experiment(trial, executor="command", continue_on_failure=False)
    with pytest.raises(hyperlab.TrialError) as info:
        exp.run()
    (failed,) = info.value.result.trials
    assert failed.status is TrialStatus.FAILED
    assert str(info.value) == (
        f"experiment {exp.id}: trial 0 failed and continue_on_failure=False ended the "
        f"experiment; its error:\n{failed.error.strip()}"
    )
    assert "exited with code 1" in failed.error and "no data here" in failed.error


def test_with_continue_on_failure_the_experiment_goes_on_and_raises_nothing_new():
    result = experiment(diverge_at_two).run()
    assert [t.status for t in result.trials].count(TrialStatus.FAILED) == 1
    assert result.status is ExperimentStatus.DONE


# ---- budget_available ------------------------------------------------------------------------


class BudgetProbe(hyperlab.Callback):
    """Asks the experiment, at each trial's end, whether budget is left."""

    def __init__(self) -> None:
        self.exp: hyperlab.Experiment | None = None
        self.seen: list[bool] = []

    def on_trial_end(self, trial):
        assert self.exp is not None
        self.seen.append(self.exp.budget_available())


def test_budget_available_follows_max_trials_before_during_and_after():
    probe = BudgetProbe()
    exp = experiment(
        value_of_i, tuner="random", space={"i": hs.randint(0, 9)}, max_trials=3, callbacks=[probe]
    )
    probe.exp = exp
    assert exp.budget_available() is True
    exp.run()
    assert probe.seen == [True, True, False]  # after trial 2, the third was created
    assert exp.budget_available() is False


def test_budget_available_is_false_once_an_exhausted_grid_ends():
    probe = BudgetProbe()
    exp = experiment(value_of_i, space={"i": hs.choice(0, 1, 2)}, callbacks=[probe])
    probe.exp = exp
    assert exp.budget_available() is True
    result = exp.run()
    assert len(result.trials) == 3
    assert probe.seen == [True, True, False]
    assert exp.budget_available() is False


def test_budget_available_answers_another_thread_while_a_trial_runs():
    gate = threading.Event()

    def objective(params):
        assert gate.wait(10)
        return 1.0

    exp = experiment(objective, tuner="random", space={"x": hs.uniform(0, 1)}, max_trials=2)
    exp.start()
    try:
        assert exp.budget_available() is True  # one trial created of two, still running
    finally:
        gate.set()
    exp.wait()
    assert exp.budget_available() is False


def test_budget_available_follows_max_duration_in_simulated_time(tmp_path):
    def script(spec):
        yield Finish(4.0, {"default": spec.params["x"]})

    sim = simulate(script, tmp_path, max_duration=10)
    seen: list[tuple[float, bool]] = []
    sim.driver.callbacks = CallbackRunner(
        [
            SimpleNamespace(
                on_trial_end=lambda trial: seen.append(
                    (round(sim.t(trial.finished_at), 6), sim.driver.budget_available())
                )
            )
        ],
        sim.id,
    )
    assert sim.driver.budget_available() is True
    assert sim.run() is ExperimentStatus.DONE
    assert seen == [(4.0, True), (8.0, True), (10.0, False)]  # the third is cut at 10 s
    assert sim.driver.budget_available() is False


def test_budget_available_after_max_duration_ran_out():
    def objective(params):
        time.sleep(0.05)
        return params["x"]

    exp = experiment(objective, tuner="random", space={"x": hs.uniform(0, 1)}, max_duration=0.3)
    assert exp.budget_available() is True
    assert exp.run().status is ExperimentStatus.DONE
    assert exp.budget_available() is False


# ---- callbacks -------------------------------------------------------------------------------


class Recorder(hyperlab.Callback):
    """Records each call; checks the store shows what it is told (flushing pending rows)."""

    def __init__(self) -> None:
        self.exp: hyperlab.Experiment | None = None
        self.calls: list[tuple] = []
        self.threads: set[threading.Thread] = set()

    def stored(self, number):
        assert self.exp is not None
        self.exp.store.flush()  # the driver's own thread: it may flush what it wrote
        return self.exp.store.get_trial(self.exp.id, number)

    def on_trial_start(self, trial):
        self.threads.add(threading.current_thread())
        assert self.stored(trial.number).status is TrialStatus.RUNNING
        self.calls.append(("start", trial.number, trial.status))

    def on_report(self, trial, report):
        self.threads.add(threading.current_thread())
        assert self.stored(trial.number).reports[-1] == report
        self.calls.append(("report", trial.number, report.step, report.metrics["loss"]))

    def on_trial_end(self, trial):
        self.threads.add(threading.current_thread())
        assert replace(self.stored(trial.number), reports=()) == trial
        self.calls.append(("end", trial.number, trial.status, trial.value))


def two_epochs(params):
    for epoch in range(2):
        hyperlab.report(loss=params["i"] + epoch / 10)
    return params["i"]


@pytest.mark.parametrize("executor", ["inprocess", "threads"])
def test_callbacks_see_each_trial_start_report_and_end_in_the_drivers_thread(executor):
    recorder = Recorder()
    exp = experiment(
        two_epochs, space={"i": hs.choice(0, 1)}, executor=executor, callbacks=[recorder]
    )
    recorder.exp = exp
    exp.run()
    running, done = TrialStatus.RUNNING, TrialStatus.SUCCEEDED
    assert recorder.calls == [
        ("start", 0, running),
        ("report", 0, 0, 0.0),
        ("report", 0, 1, 0.1),
        ("end", 0, done, 0.0),
        ("start", 1, running),
        ("report", 1, 0, 1.0),
        ("report", 1, 1, 1.1),
        ("end", 1, done, 1.0),
    ]
    assert recorder.threads == {threading.current_thread()}


def test_plain_objects_with_some_hooks_are_callbacks_too():
    ended: list[int] = []
    failed_then = SimpleNamespace(on_trial_end=lambda trial: ended.append(trial.number))
    experiment(diverge_at_two, callbacks=(failed_then,)).run()
    assert ended == [0, 1, 2, 3, 4]


class Flaky(hyperlab.Callback):
    def on_report(self, trial, report):
        raise ValueError(f"cannot plot step {report.step}")

    def on_trial_end(self, trial):
        raise OSError("disk full")


def test_a_raising_callback_is_logged_once_per_method_and_the_experiment_goes_on(caplog):
    recorder = Recorder()
    exp = experiment(two_epochs, callbacks=[Flaky(), recorder])
    recorder.exp = exp
    with caplog.at_level(logging.WARNING, logger="hyperlab"):
        result = exp.run()
    assert result.status is ExperimentStatus.DONE
    assert [t.status for t in result.trials] == [TrialStatus.SUCCEEDED] * 5
    assert len(recorder.calls) == 5 * 4  # the next callback is called every time
    messages = [record.getMessage() for record in caplog.records]
    assert messages == [
        f"hyperlab: callbacks[0] (Flaky).on_report raised on trial 0 of experiment {exp.id}: "
        "ValueError: cannot plot step 0; the experiment goes on, and later errors of this "
        "method are not logged",
        f"hyperlab: callbacks[0] (Flaky).on_trial_end raised on trial 0 of experiment "
        f"{exp.id}: OSError: disk full; the experiment goes on, and later errors of this "
        "method are not logged",
    ]
    assert all(record.exc_info is not None for record in caplog.records)  # with tracebacks


def test_callbacks_are_given_again_to_resume(tmp_path):
    storage = str(tmp_path / "runs.db")
    first = hyperlab.run(
        value_of_i, GRID, tuner="grid", max_trials=2, storage=storage, progress=False
    )
    ended: list[int] = []
    probe = SimpleNamespace(on_trial_end=lambda trial: ended.append(trial.number))
    result = hyperlab.resume(first.experiment_id, storage=storage, max_trials=4, callbacks=[probe])
    assert len(result.trials) == 4
    assert ended == [2, 3]


@pytest.mark.parametrize(
    ("callbacks", "message"),
    [
        (hyperlab.Callback(), r"^callbacks: expected a list of callbacks .*pass \[callback\]"),
        ([object()], r"^callbacks\[0\]: expected an object with an on_trial_start, on_report"),
        (
            [hyperlab.Callback(), SimpleNamespace(on_report=3)],
            r"^callbacks\[1\]\.on_report: "
            r"expected a method, got 3$",
        ),
    ],
)
def test_bad_callbacks_are_refused_before_anything_is_written(callbacks, message, tmp_path):
    storage = tmp_path / "runs.db"
    with pytest.raises(hyperlab.ConfigError, match=message):
        experiment(value_of_i, storage=storage, callbacks=callbacks)
    assert not storage.exists()


# ---- id= -------------------------------------------------------------------------------------


def test_a_chosen_id_names_the_experiment_everywhere(tmp_path, hyperlab_home, capsys):
    storage = str(tmp_path / "runs.db")
    result = hyperlab.run(
        value_of_i, GRID, tuner="grid", id="my-study_1", storage=storage, progress=False
    )
    assert result.experiment_id == "my-study_1"
    assert [t.id for t in result.trials][:2] == ["my-study_1-0", "my-study_1-1"]
    assert (hyperlab_home / "experiments" / "my-study_1" / "experiment.json").is_file()
    assert hyperlab.load("my-study_1", storage=storage).best_value == 0.0

    assert cli_main(["--storage", storage, "show", "my-study_1"]) == 0
    shown = capsys.readouterr().out
    assert "my-study_1" in shown and "DONE" in shown


def test_the_rest_api_serves_an_experiment_by_its_chosen_id(tmp_path):
    from hyperlab.server import create_app
    from tests.server import SESSION_TOKEN, client_for

    storage = f"sqlite:///{tmp_path / 'runs.db'}"
    hyperlab.run(value_of_i, GRID, tuner="grid", id="study-2", storage=storage, progress=False)
    with client_for(create_app(storage, session_token=SESSION_TOKEN)) as client:
        assert client.get("/api/v1/experiments/study-2").json()["id"] == "study-2"
        trials = client.get("/api/v1/experiments/study-2/trials").json()
        assert [t["number"] for t in trials] == [0, 1, 2, 3, 4]
        job = client.get("/api/v1/nni/trial-jobs/study-2-3", params={"experiment_id": "study-2"})
        assert job.status_code == 200 and job.json()["trialJobId"] == "study-2-3"


def test_an_id_already_in_the_store_is_refused_before_anything_is_written(tmp_path):
    storage = tmp_path / "runs.db"
    first = hyperlab.run(
        value_of_i, GRID, tuner="grid", id="study", max_trials=2, storage=storage, progress=False
    )
    before = Store.open(storage).get_trials("study")
    url = Store.open(storage).masked_url
    with pytest.raises(hyperlab.ConfigError) as info:
        experiment(diverge_at_two, id="study", storage=storage, name="again")
    assert str(info.value) == (
        f"id: 'study' already names an experiment in {url}; resume it with "
        f"hyperlab.resume('study', storage={str(storage)!r}) or choose another id"
    )
    store = Store.open(storage)
    assert [e.id for e in store.list_experiments()] == ["study"]
    assert store.get_trials("study") == before and first.experiment_id == "study"


@pytest.mark.parametrize(
    "bad", ["", "My-Study", "-lead", "_lead", "a" * 33, "two words", "dot.ted", "über", 42]
)
def test_invalid_ids_are_refused_naming_the_rule(bad, tmp_path):
    storage = tmp_path / "runs.db"
    with pytest.raises(hyperlab.ConfigError) as info:
        experiment(value_of_i, id=bad, storage=storage)
    assert str(info.value) == (
        "id: expected 1 to 32 lowercase letters, digits, '-' or '_', starting with a letter "
        f"or a digit (such as 'my-study-1'), got {bad!r}"
    )
    assert not storage.exists()


def test_the_longest_id_is_accepted():
    longest = "a" + "-_0" * 10 + "z"
    assert len(longest) == 32
    assert experiment(value_of_i, id=longest).run().experiment_id == longest


def test_resume_keeps_its_id():
    with pytest.raises(hyperlab.ConfigError, match=r"^id: 'new' given with resume='old'"):
        hyperlab.run(value_of_i, GRID, id="new", resume="old", storage=":memory:")
