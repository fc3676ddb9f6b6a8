"""Options written once: ``ExperimentOptions`` is the one definition of every option, and the
keyword types of ``run`` and ``Experiment``, the options table of docs/config.md and the
config-file schema are written from it; executor options go through ``executor_args`` (the old
keywords still work, with a ``DeprecationWarning``); ``assessor=`` takes an instance as
``tuner=`` does; the GPU ranges are the model's constraints."""

from __future__ import annotations

import inspect
import json
import re
import warnings
from pathlib import Path

import pytest

import hyperlab
from hyperlab.assessors import MedianAssessor
from hyperlab.config import (
    ExperimentOptions,
    GpuConfig,
    executor_fields,
    load_config,
    validate_executor_args,
)
from hyperlab.config._generate import (
    KEYWORDS_FILE,
    OPTIONS_DOC,
    SCHEMA_FILE,
    config_schema,
    keywords_module,
    with_table,
)
from hyperlab.errors import ConfigError
from hyperlab.experiment._keywords import ExecutorArgs, Options
from hyperlab.store import Store

ROOT = Path(__file__).resolve().parents[2]
SPACE = {"x": hyperlab.uniform(0, 1)}
RECORDED = {"suggested", "budget_signals", "research"}  # not options people set


# ---- what is written from the one definition ----------------------------------------------


def test_the_keyword_types_are_those_generated_from_the_model():
    assert (ROOT / KEYWORDS_FILE).read_text() == keywords_module(), (
        "run `python -m hyperlab.config._generate`"
    )


def test_the_options_table_of_the_docs_is_the_generated_one():
    page = (ROOT / OPTIONS_DOC).read_text()
    assert page == with_table(page), "run `python -m hyperlab.config._generate`"


def test_the_config_file_schema_is_the_generated_one():
    written = json.loads((ROOT / SCHEMA_FILE).read_text())
    assert written == config_schema(), "run `python -m hyperlab.config._generate`"


def test_every_option_is_documented_and_typed_for_the_api():
    for name, field in ExperimentOptions.model_fields.items():
        if name in RECORDED:
            continue
        assert field.description, name
        keys = (
            ExecutorArgs.__optional_keys__
            if name in executor_fields()
            else Options.__optional_keys__
        )
        assert name in keys, name
        assert f"| `{name}` |" in (ROOT / OPTIONS_DOC).read_text(), name
    assert set(Options.__optional_keys__) == (
        set(ExperimentOptions.model_fields) - RECORDED | {"executor_args"}
    )


@pytest.mark.parametrize("function", [hyperlab.run, hyperlab.Experiment.__init__])
def test_run_and_experiment_take_the_options_as_keywords_and_few_of_their_own(function):
    parameters = inspect.signature(function).parameters
    own = {p.name for p in parameters.values() if p.kind is p.KEYWORD_ONLY}
    # research and claim are set by layers (Research, Optuna's Study), not by users
    assert own <= {"storage", "id", "progress", "callbacks", "resume", "research", "claim"}
    (variadic,) = (p for p in parameters.values() if p.kind is p.VAR_KEYWORD)
    assert "Unpack[Options]" in str(variadic.annotation)


def test_an_unknown_keyword_is_a_type_error_as_before():
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_trial'"):
        hyperlab.run(lambda p: p["x"], SPACE, max_trial=3)


@pytest.mark.parametrize(
    ("keyword", "hint"),
    [
        ("max_trial", "did you mean 'max_trials'?"),
        ("num_samples", "hyperlab calls it 'max_trials'"),
        ("n_trials", "hyperlab calls it 'max_trials'"),
        ("time_budget_s", "hyperlab calls it 'max_duration'"),
        ("pruner", "hyperlab calls it 'assessor'"),
    ],
)
def test_an_unknown_keyword_names_the_option_a_peer_user_meant(keyword, hint):
    with pytest.raises(TypeError, match=re.escape(f"argument {keyword!r}; {hint}")):
        hyperlab.run(lambda p: p["x"], SPACE, **{keyword: 3})


def test_an_unknown_keyword_far_from_every_option_has_no_hint():
    with pytest.raises(TypeError, match=r"argument 'zzz_qqq'$"):
        hyperlab.run(lambda p: p["x"], SPACE, zzz_qqq=3)


def test_config_file_schema_takes_durations_as_strings_and_tuners_as_blocks():
    properties = config_schema()["properties"]
    assert {"type": "string", "pattern": properties["max_duration"]["anyOf"][-1]["pattern"]} in (
        properties["max_duration"]["anyOf"]
    )
    assert any(c.get("required") == ["name"] for c in properties["tuner"]["anyOf"])
    assert "suggested" not in properties and "search_space" in config_schema()["required"]


# ---- executor_args -------------------------------------------------------------------------


def test_executor_options_are_those_of_the_executor_alone():
    assert executor_fields() == [
        "gpus",
        "max_log_bytes",
        "echo_output",
        "ray_address",
        "resources",
        "max_node_failures",
        "dask_address",
        "dask_cluster",
        "own_trials",
    ]


def test_executor_args_reach_the_stored_options_as_the_old_keywords_did(tmp_path):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    args = {"max_log_bytes": None, "echo_output": True, "max_node_failures": 5}
    new = hyperlab.run(
        lambda p: p["x"], SPACE, max_trials=1, storage=url, progress=False, executor_args=args
    )
    with pytest.warns(DeprecationWarning, match=r"executor_args=\{'max_log_bytes': \.\.\.\}"):
        old = hyperlab.run(lambda p: p["x"], SPACE, max_trials=1, storage=url, **args)
    store = Store.open(url)
    options = [store.get_experiment(r.experiment_id).options for r in (new, old)]
    assert options[0].model_dump(exclude={"seed"}) == options[1].model_dump(exclude={"seed"})
    assert options[0].max_log_bytes is None and options[0].echo_output


def test_the_deprecation_warning_points_at_the_callers_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hyperlab.Experiment(
            lambda p: p["x"], SPACE, max_trials=1, storage=":memory:", echo_output=True
        )
    (warning,) = [w for w in caught if w.category is DeprecationWarning]
    assert warning.filename == __file__


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"gpus": {"indices": [0, 0]}}, r"executor_args\.gpus\.indices: device 0 appears twice"),
        ({"max_log_bytes": 10}, r"executor_args\.max_log_bytes: .*1024, got 10"),
        ({"gpu": 1}, r"executor_args\.gpu: unknown option; the executor's options are: gpus"),
        ([1], r"executor_args: expected a mapping of the executor's options"),
    ],
)
def test_bad_executor_args_name_the_field(args, message):
    with pytest.raises(ConfigError, match=message):
        hyperlab.run(lambda p: p["x"], SPACE, max_trials=1, executor_args=args)


def test_an_executor_option_given_both_ways_is_refused():
    with pytest.raises(ConfigError, match="echo_output: given both as a keyword and in"):
        hyperlab.run(
            lambda p: p["x"],
            SPACE,
            max_trials=1,
            echo_output=True,
            executor_args={"echo_output": False},
        )


def test_config_files_keep_their_flat_executor_options(tmp_path):
    (tmp_path / "c.yml").write_text(
        "search_space: {x: {_type: uniform, _value: [0, 1]}}\n"
        "trial: {command: 'true'}\nmax_trials: 1\nmax_log_bytes: 2048\n"
        "gpus: {indices: [0, 1]}\n"
    )
    config = load_config(tmp_path / "c.yml")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        experiment = hyperlab.Experiment.from_config(config, storage=":memory:")
    assert experiment.executor.max_log_bytes == 2048


# ---- assessor= takes an instance -------------------------------------------------------------


def curve(params):
    for step in range(4):
        hyperlab.report(params["x"] + 1 / (step + 1), step=step)
    return params["x"]


def test_an_assessor_instance_runs_and_is_rebuilt_on_resume(tmp_path):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    options = {"max_trials": 8, "seed": 2, "progress": False}
    by_class = hyperlab.run(
        curve, SPACE, assessor=MedianAssessor, assessor_args={"start_step": 1}, **options
    )
    by_instance = hyperlab.run(curve, SPACE, assessor=MedianAssessor(start_step=1), **options)
    assert [t.status for t in by_instance.trials] == [t.status for t in by_class.trials]
    first = hyperlab.run(
        curve,
        SPACE,
        assessor=MedianAssessor(start_step=1),
        storage=url,
        **{**options, "max_trials": 4},
    )
    stored = Store.open(url).get_experiment(first.experiment_id)
    assert stored.options.assessor == "median" and stored.tuner is not None
    resumed = hyperlab.resume(first.experiment_id, storage=url, max_trials=8, progress=False)
    assert [t.status for t in resumed.trials] == [t.status for t in by_class.trials]


def test_an_assessor_instance_must_match_the_experiment():
    with pytest.raises(ConfigError, match="takes no assessor_args"):
        hyperlab.run(
            curve, SPACE, max_trials=2, assessor=MedianAssessor(), assessor_args={"start_step": 1}
        )
    with pytest.raises(ConfigError, match="mode='max'"):
        hyperlab.run(curve, SPACE, max_trials=2, assessor=MedianAssessor(mode="max"))


# ---- GPU ranges are the model's constraints --------------------------------------------------


@pytest.mark.parametrize(
    ("gpus", "message"),
    [
        (
            {"indices": [0, -1]},
            r"gpus\.indices: expected non-negative integers, got -1 in \[0, -1\]",
        ),
        ({"indices": [0, True]}, r"gpus\.indices: expected non-negative integers, got True"),
        ({"indices": ["0"]}, r"gpus\.indices: expected non-negative integers, got '0'"),
        ({"indices": "01"}, r"gpus\.indices: expected a list of device indices, got '01'"),
        ({"indices": [1, 1]}, r"gpus\.indices: device 1 appears twice in \[1, 1\]"),
        ({"indices": []}, r"gpus\.indices: expected at least one device index, got \[\]"),
        ({"indices": [0], "per_trial": 2}, r"gpus\.per_trial: 2 devices per trial is more than"),
        ({"per_trial": 0}, r"gpus\.per_trial: input should be greater than or equal to 1"),
    ],
)
def test_gpu_ranges_are_checked_by_the_model(gpus, message):
    with pytest.raises(ConfigError, match=message):
        validate_executor_args({"gpus": gpus})
    assert GpuConfig(indices=[0, 2], per_trial=2).indices == [0, 2]
