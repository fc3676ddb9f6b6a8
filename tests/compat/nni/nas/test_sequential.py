"""NNI's ``SequentialExecutionEngine`` on hyperlab's strategy loop: each semantic of NNI 3.0's
engine (``nni.nas.execution.sequential``) as a strategy sees it, and the models as hyperlab
trials in the store. Counts and stored durations are asserted, never elapsed time."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import hyperlab
from hyperlab import space as hs
from hyperlab.compat import nni
from hyperlab.compat.nni.nas.execution import (
    FinalMetricEvent,
    IntermediateMetricEvent,
    ModelEventType,
    SequentialExecutionEngine,
    TrainingEndEvent,
)
from hyperlab.compat.nni.nas.space import Metrics, ModelStatus
from hyperlab.errors import ConfigError, SearchSpaceError
from hyperlab.store import Store
from hyperlab.trial import TrialStatus

SPACE = {"width": hs.choice(8, 16, 32), "op": hs.choice("conv", "pool")}
COMPAT = Path(hyperlab.__file__).parent / "compat"


class Model:
    """A model as the engine takes one: ``execute()`` and ``sample``; it reports ``width``
    divided by 2 and 4 as intermediates and ``width`` as its final result, or raises
    ``error`` (each time, or its first ``fails`` runs), after sleeping ``sleep`` seconds."""

    def __init__(self, width=8, op="conv", *, error=None, fails=None, sleep=0.0, final=True):
        self.sample = {"width": width, "op": op}
        self.error, self.fails, self.sleep, self.final = error, fails, sleep, final
        self.runs = 0

    def execute(self):
        self.runs += 1
        time.sleep(self.sleep)
        nni.report_intermediate_result(self.sample["width"] / 4)
        nni.report_intermediate_result({"default": self.sample["width"] / 2, "loss": 1.0})
        if self.error is not None and (self.fails is None or self.runs <= self.fails):
            raise self.error
        if self.final:
            nni.report_final_result(self.sample["width"])

    def __repr__(self):
        return f"Model({self.sample})"


_made: list[SequentialExecutionEngine] = []


@pytest.fixture(autouse=True)
def _shut_down_engines():
    """Every engine a test made is shut down after it (twice is harmless): a running one
    would keep its experiment's driver and executor alive into the next tests."""
    yield
    while _made:
        _made.pop().shutdown()


def engine(*args, **options):
    options.setdefault("space", SPACE)
    options.setdefault("storage", ":memory:")
    options.setdefault("progress", False)
    made = SequentialExecutionEngine(*args, **options)
    _made.append(made)
    return made


class Recorder:
    """Every event the engine dispatches, as (type, sample, metric or status)."""

    def __init__(self, engine):
        self.events = []
        for kind in ModelEventType:
            engine.register_model_event_callback(kind, self.record)

    def record(self, event):
        detail = event.status if isinstance(event, TrainingEndEvent) else event.metric
        self.events.append((event.event_type.value, event.model.sample["width"], detail))


# ---- models as trials ---------------------------------------------------------------------


def test_each_model_runs_as_a_trial_with_its_sample_as_params(tmp_path):
    url = f"sqlite:///{tmp_path / 'nas.db'}"
    eng = engine(storage=url, mode="max")
    recorder = Recorder(eng)
    models = [Model(16, "conv"), Model(32, "pool")]
    eng.submit_models(*models)
    for model in models:
        assert model.status is ModelStatus.Trained
        width = model.sample["width"]
        assert model.metrics.intermediates == [width / 4, width / 2]
        assert model.metrics.final == width
    assert recorder.events[:4] == [
        ("intermediate_metric", 16, 4.0),
        ("intermediate_metric", 16, {"default": 8.0, "loss": 1.0}),  # a dict, as reported
        ("final_metric", 16, 16),
        ("training_end", 16, ModelStatus.Trained),
    ]
    eng.shutdown()
    assert eng.experiment.status is hyperlab.ExperimentStatus.DONE
    assert not eng.budget_available()
    with pytest.raises(ConfigError, match=r"ended \(DONE\)"):
        eng.submit_models(Model(8))
    stored = Store.open(url).get_trials(eng.experiment.id)
    assert [t.params for t in stored] == [m.sample for m in models]
    assert [t.value for t in stored] == [16, 32]
    assert [t.status for t in stored] == [TrialStatus.SUCCEEDED] * 2


def test_a_model_without_a_final_result_is_trained_with_no_final_metric():
    eng = engine()
    recorder = Recorder(eng)
    model = Model(8, final=False)
    eng.submit_models(model)
    assert model.status is ModelStatus.Trained
    assert model.metrics.final is None and len(model.metrics.intermediates) == 2
    assert [kind for kind, _, _ in recorder.events].count("final_metric") == 0


def test_list_models_filters_by_status_and_wait_models_returns_for_ended_ones():
    eng = engine(continue_on_failure=True)
    good, bad = Model(8), Model(16, error=ValueError("diverged"))
    eng.submit_models(good, bad)
    assert eng.list_models() == [good, bad]
    assert eng.list_models(ModelStatus.Trained) == [good]
    assert eng.list_models(ModelStatus.Failed) == [bad]
    assert eng.list_models(ModelStatus.Training) == []
    eng.wait_models()
    eng.wait_models(bad)
    with pytest.raises(ValueError, match="was not submitted to this engine"):
        eng.wait_models(Model(32))
    assert eng.idle_worker_available()


# ---- budgets --------------------------------------------------------------------------------


def test_max_model_count_refuses_the_next_model_with_nnis_message():
    eng = engine(max_model_count=3)
    eng.submit_models(Model(8), Model(16))
    assert eng.budget_available()
    eng.submit_models(Model(32))
    assert not eng.budget_available()
    refused = Model(8)
    with pytest.raises(ConfigError, match=r"Maximum number of models reached \(4 > 3\)"):
        eng.submit_models(refused)
    assert not hasattr(refused, "status")  # never made Training
    assert refused.runs == 0 and len(eng.list_models()) == 3
    assert eng.state_dict()["model_count"] == 3


def test_max_duration_is_summed_model_time_and_the_model_that_reaches_it_finishes():
    eng = engine(max_duration=0.1)
    models = []
    while eng.budget_available():
        assert len(models) < 50  # each runs at least 0.02 s: the sum reaches 0.1 long before
        models.append(Model(8, sleep=0.02))
        eng.submit_models(models[-1])
    assert all(model.status is ModelStatus.Trained for model in models)  # the last one too
    with pytest.raises(ConfigError, match=r"Maximum duration reached \(.* > 0\.100000\)"):
        eng.submit_models(Model(8))
    durations = [t.duration for t in eng.experiment.result().trials]
    assert len(durations) == len(models)
    assert sum(durations[:-1]) < 0.1 <= sum(durations)
    assert eng.state_dict()["total_duration"] == pytest.approx(sum(durations))


# ---- failures and callbacks -----------------------------------------------------------------


def test_continue_on_failure_false_raises_the_models_own_exception():
    eng = engine()
    recorder = Recorder(eng)
    boom = ValueError("diverged")
    model = Model(16, error=boom)
    eng.submit_models(Model(8))
    with pytest.raises(ValueError) as raised:
        eng.submit_models(model)
    assert raised.value is boom
    assert model.status is ModelStatus.Failed  # its TrainingEndEvent came first, as in NNI
    assert recorder.events[-1] == ("training_end", 16, ModelStatus.Failed)
    assert eng.experiment.status is hyperlab.ExperimentStatus.ERROR
    assert not eng.budget_available()
    with pytest.raises(ConfigError, match=r"ended \(ERROR\)"):
        eng.submit_models(Model(32))
    eng.shutdown()  # the failure was raised already: not again


def test_continue_on_failure_true_goes_on_past_failures_however_many():
    eng = engine(continue_on_failure=True)
    failing = [Model(8, error=RuntimeError(f"failure {i}")) for i in range(12)]
    eng.submit_models(*failing)
    good = Model(32)
    eng.submit_models(good)
    assert eng.list_models(ModelStatus.Failed) == failing
    assert eng.list_models(ModelStatus.Trained) == [good]
    assert eng.budget_available()
    eng.shutdown()
    assert eng.experiment.status is hyperlab.ExperimentStatus.DONE
    trials = eng.experiment.result().trials
    assert [t.status for t in trials] == [TrialStatus.FAILED] * 12 + [TrialStatus.SUCCEEDED]
    assert "failure 11" in trials[11].error


def test_a_training_end_callbacks_exception_comes_out_of_submit_models():
    eng = engine()
    broken = KeyError("strategy bug")

    def callback(event):
        raise broken

    eng.register_model_event_callback(ModelEventType.TrainingEnd, callback)
    model = Model(8)
    with pytest.raises(KeyError) as raised:
        eng.submit_models(model)
    assert raised.value is broken
    assert model.status is ModelStatus.Training  # the callback raised before it was applied
    eng.unregister_model_event_callback(ModelEventType.TrainingEnd, callback)
    eng.submit_models(Model(16))  # the engine goes on, as NNI's does
    assert eng.list_models(ModelStatus.Trained)[0].sample["width"] == 16


def test_a_callback_may_retry_a_failed_model_from_inside_the_event(tmp_path):
    """NNI's FailureHandler: resubmit the failed model from its TrainingEndEvent."""
    url = f"sqlite:///{tmp_path / 'nas.db'}"
    eng = engine(storage=url, continue_on_failure=True)
    later = []

    def retry(event):
        if event.status is ModelStatus.Failed and event.model.runs < 3:
            event.model.status = ModelStatus.Retrying
            event.model.metrics.clear()
            event.stop_propagation()
            eng.submit_models(event.model)

    eng.register_model_event_callback(ModelEventType.TrainingEnd, retry)
    eng.register_model_event_callback(ModelEventType.TrainingEnd, later.append)
    model = Model(16, error=OSError("flaky"), fails=2)
    eng.submit_models(model)
    assert model.runs == 3 and model.status is ModelStatus.Trained
    assert model.metrics.final == 16
    assert [event.status for event in later] == [ModelStatus.Trained]  # not the failures
    assert eng.list_models() == [model] * 3
    stored = Store.open(url).get_trials(eng.experiment.id)
    assert [t.status for t in stored] == [TrialStatus.FAILED] * 2 + [TrialStatus.SUCCEEDED]
    assert {str(t.params) for t in stored} == {str(model.sample)}


def test_events_may_be_stopped_or_kept_from_the_model():
    eng = engine()
    seen = []
    eng.register_model_event_callback("final_metric", lambda event: event.prevent_default())
    eng.register_model_event_callback("final_metric", seen.append)
    eng.register_model_event_callback("intermediate_metric", lambda e: e.stop_propagation())
    eng.register_model_event_callback("intermediate_metric", seen.append)
    model = Model(8)
    eng.submit_models(model)
    assert [type(event) for event in seen] == [FinalMetricEvent]  # the later callback got it
    assert model.metrics.final is None and model.metrics.intermediates == []
    assert not model.metrics
    eng.dispatch_model_event(ModelEventType.FinalMetric, model=model, metric={"default": 3})
    eng.dispatch_model_event(IntermediateMetricEvent(model, 2))
    assert model.metrics.final is None  # still prevented by the first callback
    assert model.metrics.intermediates == []  # still stopped
    model.metrics.add_intermediate({"default": 2, "loss": 1})
    assert model.metrics and model.metrics.intermediates == [2.0]
    with pytest.raises(ValueError, match="expected a number"):
        Metrics().add_intermediate({"loss": 1})


def test_an_experiment_callback_raises_too(tmp_path):
    class Raising(hyperlab.Callback):
        def on_trial_end(self, trial):
            raise LookupError(f"saw trial {trial.number}")

    eng = engine(callbacks=[Raising()])
    with pytest.raises(LookupError, match="saw trial 0"):
        eng.submit_models(Model(8))
    assert eng.experiment.status is hyperlab.ExperimentStatus.ERROR


# ---- resuming ------------------------------------------------------------------------------


def test_state_dict_round_trip_counts_the_models_in_a_new_engine(caplog):
    first = engine(max_model_count=5)
    first.submit_models(Model(8), Model(16))
    state = first.state_dict()
    first.shutdown()
    assert state["model_count"] == 2 and state["total_duration"] > 0
    second = engine(max_model_count=5)
    with caplog.at_level(logging.WARNING):
        second.load_state_dict(state)
    assert "2 models were counted from state_dict, but not brought back" in caplog.text
    assert second.state_dict() == state
    assert second.list_models() == []
    second.submit_models(Model(8), Model(16), Model(32))
    assert not second.budget_available()
    with pytest.raises(ConfigError, match=r"\(6 > 5\)"):
        second.submit_models(Model(8))
    with pytest.raises(ConfigError, match="runs already"):
        second.load_state_dict(state)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        engine().load_state_dict({"model_count": 0, "total_duration": 0.0})
    assert caplog.text == ""


# ---- bad input: named, nothing run --------------------------------------------------------


class NoExecute:
    sample = {"width": 8, "op": "conv"}


def altered(**attributes):
    model = Model(8)
    vars(model).update(attributes)
    return model


@pytest.mark.parametrize(
    ("model", "error", "named"),
    [
        (NoExecute(), TypeError, r"models\[0\]: .* has no execute\(\) method"),
        (altered(sample=None), TypeError, r"models\[0\]\.sample: expected a mapping"),
        (Model(width=object()), TypeError, r"\.sample: expected JSON values"),
        (altered(status=ModelStatus.Initialized), RuntimeError, "frozen.*Initialized"),
        (Model(width=64), SearchSpaceError, "width"),
    ],
)
def test_a_bad_model_is_named_and_nothing_is_run_or_written(tmp_path, model, error, named):
    url = f"sqlite:///{tmp_path / 'nas.db'}"
    eng = engine(storage=url)
    with pytest.raises(error, match=named):
        eng.submit_models(model)
    assert eng.list_models() == [] and getattr(model, "runs", 0) == 0
    assert Store.open(url).list_experiments() == []


def test_a_completed_model_is_not_submitted_again():
    eng = engine()
    model = Model(8)
    eng.submit_models(model)
    with pytest.raises(RuntimeError, match="Trained"):
        eng.submit_models(model)
    assert model.runs == 1


def test_the_options_the_engine_sets_are_refused():
    with pytest.raises(ConfigError, match="executor='threads' is the engine's to set"):
        engine(executor="threads")
    with pytest.raises(TypeError, match="space"):
        SequentialExecutionEngine(max_model_count=3)


# ---- NNI's import paths -------------------------------------------------------------------


def test_a_strategy_written_for_nni_runs_with_the_shim_on_the_path(tmp_path):
    script = textwrap.dedent(
        """
        import nni
        from nni.nas.execution import TrainingEndEvent
        from nni.nas.execution.sequential import SequentialExecutionEngine
        from nni.nas.space import ModelStatus

        class Model:
            def __init__(self, lr):
                self.sample = {"lr": lr}
            def execute(self):
                nni.report_final_result(self.sample["lr"] * 10)

        space = {"lr": {"_type": "choice", "_value": [0.1, 0.2]}}
        engine = SequentialExecutionEngine(max_model_count=2, space=space, progress=False,
                                           storage=STORAGE)
        ends = []
        engine.register_model_event_callback("training_end", ends.append)
        for lr in (0.1, 0.2):
            engine.submit_models(Model(lr))
        assert not engine.budget_available()
        assert all(isinstance(e, TrainingEndEvent) for e in ends)
        print([m.metrics.final for m in engine.list_models(ModelStatus.Trained)])
        engine.shutdown()
        """
    ).replace("STORAGE", repr(f"sqlite:///{tmp_path / 'nas.db'}"))
    env = {**os.environ, "PYTHONPATH": str(COMPAT)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[1.0, 2.0]"


def test_a_model_the_experiments_stop_cuts_short_ends_interrupted():
    eng = engine()
    recorder = Recorder(eng)

    class Stopping(Model):
        def execute(self):
            eng.experiment.stop()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:  # a report is told to stop, soon
                nni.report_intermediate_result(1.0)
                time.sleep(0.01)
            raise AssertionError("the model was never told to stop")

    model = Stopping(8)
    eng.submit_models(model)
    assert model.status is ModelStatus.Interrupted
    assert recorder.events[-1] == ("training_end", 8, ModelStatus.Interrupted)
    assert eng.experiment.status is hyperlab.ExperimentStatus.STOPPED
    assert eng.experiment.result().trials[0].status is TrialStatus.SYS_CANCELED
    with pytest.raises(ConfigError, match=r"ended \(STOPPED\)"):
        eng.submit_models(Model(16))
