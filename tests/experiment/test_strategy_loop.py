"""A strategy loop of the user's own on ``hyperlab.Experiment``: submit, wait, as_completed,
trials, budget_available, the ``with`` block, NNI's engine semantics where asked, and bad input.

(Resume after SIGKILL and threads racing: test_strategy_resume.py, test_strategy_threads.py.)
"""

from __future__ import annotations

import threading
import time

import pytest

import hyperlab
from hyperlab import TrialStatus
from hyperlab import space as hs
from hyperlab.errors import ConfigError, SearchSpaceError
from hyperlab.store import Store, TrialFilter
from hyperlab.trial import CUSTOM_TRIAL

SPACE = {"x": hs.uniform(-5.0, 5.0), "kind": hs.choice("a", "b")}


def square(params):
    return (params["x"] - 1.0) ** 2


def sleepy(params):
    time.sleep(params["x"])
    return params["x"]


def loop(objective=square, space=SPACE, **options):
    options.setdefault("storage", ":memory:")
    options.setdefault("progress", False)
    return hyperlab.Experiment(objective, space, **options)


def test_a_loop_runs_what_it_submits_and_nothing_else(tmp_path):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    with loop(storage=url, executor="threads", concurrency=2) as exp:
        handles = exp.submit([{"x": float(x), "kind": "a"} for x in range(-2, 3)])
        trials = exp.wait(handles)
        assert [t.params["x"] for t in trials] == [-2.0, -1.0, 0.0, 1.0, 2.0]
        assert [t.value for t in trials] == [9.0, 4.0, 1.0, 0.0, 1.0]
        assert [h.number for h in handles] == [0, 1, 2, 3, 4]
        assert all(h.done() and h.value == t.value for h, t in zip(handles, trials, strict=True))
        again = exp.submit({"x": 3.0, "kind": "b"}, wait=True)
        assert again.number == 5 and again.value == 4.0
    assert exp.status is hyperlab.ExperimentStatus.DONE
    stored = Store.open(url).get_trials(exp.id)
    assert len(stored) == 6  # no tuner named: none of the experiment's own
    assert {t.source for t in stored} == {CUSTOM_TRIAL}
    assert Store.open(url).get_experiment(exp.id).options.tuner == "none"


def test_as_completed_gives_each_trial_as_it_ends():
    with loop(sleepy, {"x": hs.uniform(0.0, 2.0)}, executor="threads", concurrency=2) as exp:
        slow, fast = exp.submit([{"x": 1.0}, {"x": 0.0}])
        order = [h.number for h in exp.as_completed([slow, fast])]
    assert order == [fast.number, slow.number]


def test_trials_filters_by_status_and_resolves_when_they_end():
    gate = threading.Event()

    def gated(params):
        if params["x"] > 0:
            assert gate.wait(30)
        return params["x"]

    with loop(gated, executor="threads", concurrency=2) as exp:
        done, held = exp.submit([{"x": -1.0, "kind": "a"}, {"x": 1.0, "kind": "a"}])
        exp.wait(done)
        assert [h.number for h in exp.trials(status="SUCCEEDED")] == [done.number]
        unended = exp.trials(status=[TrialStatus.WAITING, TrialStatus.RUNNING])
        assert [h.number for h in unended] == [held.number]
        assert not unended[0].done()
        gate.set()
        assert exp.wait(unended)[0].value == 1.0
        assert [h.number for h in exp.trials()] == [0, 1]


def test_a_named_tuner_fills_the_slots_the_strategy_leaves_free():
    with loop(tuner="random", max_trials=6, seed=3, executor="threads", concurrency=2) as exp:
        mine = exp.submit([{"x": 0.5, "kind": "b"}, {"x": -0.5, "kind": "b"}])
        exp.wait(mine)
    trials = exp.result().trials
    assert len(trials) == 6
    assert [t.params for t in trials if t.source == CUSTOM_TRIAL] == [h.params for h in mine]
    assert sum(t.source != CUSTOM_TRIAL for t in trials) == 4


def test_without_a_tuner_run_still_uses_auto_and_needs_a_budget():
    exp = loop()
    with pytest.raises(ConfigError, match="give a budget"):
        exp.run()
    assert loop(max_trials=3).run().trials[0].source != CUSTOM_TRIAL


def test_a_raising_block_stops_the_experiment_for_a_resume(tmp_path):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    gate = threading.Event()

    def held(params):
        gate.wait(30)
        return 0.0

    exp = loop(held, storage=url, executor="threads", concurrency=1)
    with pytest.raises(RuntimeError, match="strategy bug"), exp:
        exp.submit([{"x": 0.0, "kind": "a"}, {"x": 1.0, "kind": "a"}])
        raise RuntimeError("strategy bug")
    gate.set()
    assert exp.status is hyperlab.ExperimentStatus.STOPPED
    again = hyperlab.Experiment.resume(exp.id, storage=url, objective=square)
    with again:
        trials = again.wait(again.trials())
    assert [t.status for t in trials] == [TrialStatus.SUCCEEDED] * 2
    assert [t.params["x"] for t in trials] == [0.0, 1.0]


# ---- NNI's sequential engine semantics, where asked --------------------------------------


def test_budget_time_trials_counts_trial_time_and_lets_the_last_one_finish():
    """NNI's max_duration: the trials' durations summed, checked before a trial starts."""
    exp = loop(sleepy, {"x": hs.uniform(0.0, 1.0)}, max_duration=0.5, budget_time="trials")
    ran = []
    with exp:
        while exp.budget_available():
            ran.append(exp.submit({"x": 0.2}, wait=True).trial)
        with pytest.raises(ConfigError, match=r"Maximum duration reached \(.* > 0\.500000\)"):
            exp.submit({"x": 0.2})
    assert len(ran) >= 2
    assert all(t.status is TrialStatus.SUCCEEDED for t in ran)  # the last one too
    assert sum(t.duration for t in ran[:-1]) < 0.5 <= sum(t.duration for t in ran)
    assert exp.state_dict()["total_duration"] == pytest.approx(sum(t.duration for t in ran))


def test_experiment_time_cancels_the_trial_running_at_the_limit():
    """hyperlab's own max_duration: wall time of the experiment; the trial at it is cut."""

    def reporting(params):
        for step in range(600):  # 30 s, unless stopped at a report
            time.sleep(0.05)
            hyperlab.report(float(step))
        return 0.0

    exp = loop(reporting, max_duration=0.5, executor="threads")
    with exp:
        cut = exp.submit({"x": 0.0, "kind": "a"}, wait=True)
    assert cut.trial.status is TrialStatus.SYS_CANCELED


def test_max_trials_refuses_with_nnis_message_and_nothing_is_written(tmp_path):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    with loop(storage=url, max_trials=3) as exp:
        exp.submit([{"x": 0.0, "kind": "a"}] * 2)
        with pytest.raises(ConfigError, match=r"Maximum number of models reached \(4 > 3\)"):
            exp.submit([{"x": 0.0, "kind": "a"}] * 2)
        exp.submit({"x": 0.0, "kind": "a"})
        assert not exp.budget_available()
        with pytest.raises(ConfigError, match="Models cannot be submitted anymore"):
            exp.submit({"x": 0.0, "kind": "a"})
    assert Store.open(url).count_trials(exp.id, TrialFilter()) == 3


def test_continue_on_failure_false_raises_the_trials_own_exception():
    boom = ValueError("diverged")

    def fails(params):
        if params["x"] > 0:
            raise boom
        return 0.0

    exp = loop(fails, continue_on_failure=False)
    with pytest.raises(ValueError) as raised, exp:
        exp.submit({"x": -1.0, "kind": "a"}, wait=True)
        exp.submit({"x": 1.0, "kind": "a"}, wait=True)
    assert raised.value is boom
    assert exp.status is hyperlab.ExperimentStatus.ERROR
    with pytest.raises(ConfigError, match="ended"):
        exp.submit({"x": 0.0, "kind": "a"})


def test_continue_on_failure_goes_on_past_failures():
    def fails(params):
        raise ValueError("always")

    with loop(fails, fail_fast=False) as exp:
        trials = exp.wait(exp.submit([{"x": 0.0, "kind": "a"}] * 3))
    assert [t.status for t in trials] == [TrialStatus.FAILED] * 3


class Raising(hyperlab.Callback):
    def on_trial_end(self, trial):
        raise KeyError(f"callback saw trial {trial.number}")


def test_callbacks_raise_ends_the_run_with_the_callbacks_exception():
    exp = loop(callbacks=[Raising()], callbacks_raise=True, executor="threads")
    with pytest.raises(KeyError, match="callback saw trial 0"), exp:
        exp.submit({"x": 0.0, "kind": "a"}, wait=True)
    assert exp.status is hyperlab.ExperimentStatus.ERROR


def test_a_callbacks_error_is_logged_by_default_and_the_loop_goes_on():
    with loop(callbacks=[Raising()]) as exp:
        trials = exp.wait(exp.submit([{"x": 0.0, "kind": "a"}] * 2))
    assert [t.status for t in trials] == [TrialStatus.SUCCEEDED] * 2


def test_state_dict_carries_the_counters_into_a_new_loop():
    with loop(max_trials=5) as first:
        first.wait(first.submit([{"x": 0.0, "kind": "a"}] * 2))
        state = first.state_dict()
    assert state["model_count"] == 2
    second = loop(max_trials=5)
    second.load_state_dict(state)
    assert second.state_dict()["model_count"] == 2
    with second:
        second.submit([{"x": 0.0, "kind": "a"}] * 3)
        assert not second.budget_available()
        with pytest.raises(ConfigError, match=r"\(6 > 5\)"):
            second.submit({"x": 0.0, "kind": "a"})
    with pytest.raises(ConfigError, match="runs already"):
        second.load_state_dict(state)


@pytest.mark.parametrize(
    ("state", "named"),
    [
        ({"model_count": -1, "total_duration": 0.0}, "model_count"),
        ({"model_count": 1, "total_duration": float("nan")}, "total_duration"),
        ({"model_count": 1}, "keys"),
    ],
)
def test_a_bad_state_is_named(state, named):
    with pytest.raises(ConfigError, match=named):
        loop().load_state_dict(state)


# ---- bad input: a clear error, nothing written ------------------------------------------


def test_params_outside_the_space_name_the_parameter_and_the_bound(tmp_path):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    exp = loop(storage=url)
    with pytest.raises(SearchSpaceError, match=r"params\[1\].*x.*5"):
        exp.submit([{"x": 0.0, "kind": "a"}, {"x": 7.5, "kind": "a"}])
    assert Store.open(url).list_experiments() == []  # the first submit starts nothing
    with exp:
        with pytest.raises(SearchSpaceError, match="kind"):
            exp.submit({"x": 0.0, "kind": "c"})
        with pytest.raises(SearchSpaceError, match="expected a mapping"):
            exp.submit([0.5])
        exp.submit({"x": 0.0, "kind": "a"}, wait=True)
    assert Store.open(url).count_trials(exp.id, TrialFilter()) == 1


def test_wait_refuses_a_handle_of_another_experiment():
    with loop() as one, loop() as other:
        theirs = other.submit({"x": 0.0, "kind": "a"})
        with pytest.raises(ConfigError, match=f"belongs to experiment {other.id}, not to {one.id}"):
            one.wait([theirs])
        with pytest.raises(ConfigError, match="expected a TrialHandle"):
            one.wait([3])
        with pytest.raises(ConfigError, match="belongs to experiment"):
            one.as_completed([theirs])


def test_a_timeout_names_what_had_not_ended():
    with loop(sleepy, {"x": hs.uniform(0.0, 5.0)}, executor="threads") as exp:
        slow = exp.submit({"x": 2.0})
        with pytest.raises(TimeoutError, match="1 of the 1 trials"):
            exp.wait([slow], timeout=0.01)


def test_submitting_after_the_end_is_refused():
    exp = loop()
    with exp:
        exp.submit({"x": 0.0, "kind": "a"}, wait=True)
    assert not exp.budget_available()
    with pytest.raises(ConfigError, match=r"ended \(DONE\).*Experiment\.resume"):
        exp.submit({"x": 0.0, "kind": "a"})


def test_a_loaded_experiment_is_read_only(tmp_path):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    with loop(storage=url) as exp:
        exp.submit({"x": 0.0, "kind": "a"}, wait=True)
    loaded = hyperlab.load(exp.id, storage=url)
    with pytest.raises(AttributeError, match=r"read-only.*Experiment\.resume"):
        loaded.submit({"x": 0.0, "kind": "a"})


def test_a_loop_on_an_experiment_another_driver_runs_is_refused(tmp_path):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    gate = threading.Event()

    def held(params):
        gate.wait(30)
        return 0.0

    with loop(held, storage=url, executor="threads") as exp:
        exp.submit({"x": 0.0, "kind": "a"})
        again = hyperlab.Experiment.resume(exp.id, storage=url, objective=square)
        with pytest.raises(hyperlab.ExperimentBusy, match="pid"):
            again.submit({"x": 0.0, "kind": "a"})
        gate.set()


def test_a_submit_after_the_failure_raises_the_failure_not_the_end():
    boom = ValueError("diverged")

    def fails(params):
        raise boom

    exp = loop(fails, continue_on_failure=False)
    with pytest.raises(ValueError) as raised, exp:
        failed = exp.submit({"x": 1.0, "kind": "a"})
        while not failed.done():
            time.sleep(0.01)
        exp.submit({"x": 0.0, "kind": "a"})  # the run ended at the failure meanwhile
    assert raised.value is boom


def test_ctrl_c_in_the_block_stops_and_says_how_to_resume(tmp_path, capsys):
    exp = loop(storage=f"sqlite:///{tmp_path / 'h.db'}")
    with pytest.raises(KeyboardInterrupt), exp:
        exp.submit({"x": 0.0, "kind": "a"})
        raise KeyboardInterrupt
    assert exp.status is hyperlab.ExperimentStatus.STOPPED
    assert f"hyperlab.resume('{exp.id}'" in capsys.readouterr().err


@pytest.mark.parametrize("executor", ["inprocess", "threads"])
def test_submit_and_wait_raises_the_failure_of_the_trial_it_waited_on(executor):
    boom = ValueError("diverged")

    def fails(params):
        if params["x"] > 0:
            raise boom
        return 0.0

    exp = loop(fails, continue_on_failure=False, executor=executor)
    exp.submit({"x": -1.0, "kind": "a"}, wait=True)
    with pytest.raises(ValueError) as raised:
        exp.submit({"x": 1.0, "kind": "a"}, wait=True)
    assert raised.value is boom
    with pytest.raises(ConfigError, match=r"ended \(ERROR\)"):  # given once; then the state
        exp.submit({"x": 0.0, "kind": "a"})


def test_waiting_from_the_drivers_own_thread_is_refused_not_a_deadlock():
    seen: list[BaseException] = []

    class WaitsInACallback(hyperlab.Callback):
        def on_trial_end(self, trial):
            try:
                exp.wait(exp.submit({"x": 0.0, "kind": "b"}))
            except ConfigError as exc:
                seen.append(exc)

    exp = loop(callbacks=[WaitsInACallback()], max_trials=3)
    with exp:
        exp.submit({"x": 0.0, "kind": "a"}, wait=True)
    assert seen and "driver's thread" in str(seen[0])


def test_waiting_for_the_end_of_a_run_only_the_loop_can_end_is_refused():
    with loop() as exp:
        exp.submit({"x": 0.0, "kind": "a"})
        with pytest.raises(ConfigError, match=r"strategy loop.*drain\(\)"):
            exp.wait()
        exp.drain()
        assert exp.wait(30).status is hyperlab.ExperimentStatus.DONE  # drained: it ends


def test_show_says_where_a_loops_trials_come_from(tmp_path, capsys):
    from hyperlab.cli import main

    url = f"sqlite:///{tmp_path / 'h.db'}"
    with loop(storage=url) as exp:
        exp.submit({"x": 0.0, "kind": "a"}, wait=True)
    main(["--storage", url, "show", exp.id])
    assert "none (its trials are submitted: a strategy loop" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda exp: exp.submit(5), r"params: expected a mapping .* got 5"),
        (lambda exp: exp.submit("x=1"), r"params: expected a mapping .* got 'x=1'"),
        (lambda exp: exp.trials(status=3), r"status: expected a trial status .* got 3"),
        (lambda exp: exp.trials(status="DONE"), r"status: 'DONE' is no trial status"),
        (lambda exp: exp.wait(object()), r"handles: expected a TrialHandle"),
    ],
)
def test_a_call_of_the_wrong_shape_is_named(call, named):
    with pytest.raises(ConfigError, match=named):
        call(loop(max_trials=2))
