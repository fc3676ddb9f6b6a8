"""Every number a user sets has a range, and the same one wherever it is given: ``hyperlab.run``,
config files, ``hyperlab resume``'s flags, the steering of a running experiment, and the REST
API's bodies (hyperlab's PATCH and NNI's PUT); docs/config.md lists each range as the options
take it. ``PATCH {"concurrency": 1180591620717411303424}`` was once applied (191 command trials
then ran at once on 2 cores), and a config file took the same."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import hyperlab
from hyperlab._steering import budget_changes
from hyperlab.cli import main
from hyperlab.config import (
    MAX_CHECKPOINTS,
    MAX_CONCURRENCY,
    MAX_DURATION,
    MAX_TRIAL_NUMBER,
    MAX_TRIALS,
    ExperimentConfig,
    ExperimentOptions,
    executor_fields,
    load_config,
    parse_stored_options,
    validate_options,
)
from hyperlab.errors import ConfigError
from hyperlab.server import create_app
from tests.server import SESSION_TOKEN, client_for, start_live, wait_for_control

DOCS = Path(__file__).resolve().parents[1] / "docs" / "config.md"
HUGE = 1180591620717411303424  # 2**70: what was seen
RECORDED = {"suggested", "budget_signals"}  # written by the driver, not by users

# (field, the largest value taken, the smallest refused above it)
EDGES = [
    ("concurrency", MAX_CONCURRENCY, MAX_CONCURRENCY + 1),
    ("concurrency", MAX_CONCURRENCY, HUGE),
    ("max_trials", MAX_TRIALS, MAX_TRIALS + 1),
    ("max_failed_trials", MAX_TRIALS, MAX_TRIALS + 1),
    ("fail_fast", MAX_TRIALS, MAX_TRIALS + 1),
    ("max_duration", "3650d", "3651d"),
    ("max_duration", MAX_DURATION, MAX_DURATION * 1.001),
    ("trial_timeout", "3650d", 1e300),
    ("checkpoint_keep", MAX_CHECKPOINTS, MAX_CHECKPOINTS + 1),
    ("max_node_failures", 1000, 1001),
    ("max_log_bytes", 1 << 40, (1 << 40) + 1),
]


def _numeric_fields() -> Iterator[tuple[str, dict[str, Any]]]:
    """(dotted name, JSON schema) of every number of the options, nested ones included."""
    schema = ExperimentOptions.model_json_schema()
    defs = schema.get("$defs", {})

    def walk(properties: dict[str, Any], prefix: str) -> Iterator[tuple[str, dict[str, Any]]]:
        for name, prop in properties.items():
            if prefix + name in RECORDED:
                continue
            for variant in prop.get("anyOf", [prop]):
                ref = variant.get("$ref")
                model = defs[ref.rsplit("/", 1)[1]] if ref is not None else {}
                if "properties" in model:  # GpuConfig, ResearchOptions (not an enum)
                    yield from walk(model["properties"], f"{name}.")
                elif variant.get("type") in ("integer", "number"):
                    yield prefix + name, variant

    yield from walk(schema["properties"], "")


def _bounds(prop: dict[str, Any]) -> tuple[float | None, float | None]:
    low = prop.get("minimum", prop.get("exclusiveMinimum"))
    high = prop.get("maximum", prop.get("exclusiveMaximum"))
    return low, high


def test_every_number_of_the_options_has_a_lower_and_an_upper_bound():
    fields = dict(_numeric_fields())
    assert {
        "concurrency",
        "max_trials",
        "max_duration",
        "gpus.per_trial",
        "research.workers",
    } <= set(fields)
    unbounded = {
        name: _bounds(prop)
        for name, prop in fields.items()
        if None in _bounds(prop) and name != "fail_fast"  # its int is checked by a validator
    }
    assert not unbounded, f"numbers without a range: {unbounded}"


def _documented() -> dict[str, tuple[float, float]]:
    """The Ranges table of docs/config.md: field -> (low, high)."""
    text = DOCS.read_text()
    table = text.split("## Ranges", 1)[1].split("\n## ", 1)[0]
    ranges = {}
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        found = re.search(r"([\d,]+(?:\.\d+)?)\s*\.\.\s*([\d,]+)", cells[1])
        assert found, f"no range in {line!r}"
        low, high = (float(part.replace(",", "")) for part in found.groups())
        for name in re.findall(r"`([\w.]+)`", cells[0]):
            ranges[name] = (low, high)
    return ranges


def test_the_docs_list_every_range_as_the_options_take_it():
    documented = _documented()
    for name, prop in _numeric_fields():
        assert name in documented, f"docs/config.md's Ranges table lacks {name}"
        if name != "fail_fast":
            assert documented[name] == _bounds(prop), name
    assert documented["fail_fast"] == (1, MAX_TRIALS)


@pytest.mark.parametrize(("field", "taken", "refused"), EDGES)
def test_the_python_api_and_config_files_take_the_same_range(tmp_path, field, taken, refused):
    assert getattr(validate_options(**{field: taken}), field) is not None
    with pytest.raises(ConfigError, match=rf"^{field}: .*got {re.escape(repr(refused))}"):
        validate_options(**{field: refused})
    # the executor's own options are given in executor_args in Python (named so in errors)
    given, named = (
        ({"executor_args": {field: refused}}, f"executor_args\\.{field}")
        if field in executor_fields()
        else ({field: refused}, field)
    )
    with pytest.raises(ConfigError, match=rf"^{named}: "):
        hyperlab.run(
            lambda p: 0.0,
            {"x": hyperlab.uniform(0, 1)},
            storage=":memory:",
            progress=False,
            **{"max_trials": 1, **given},
        )
    budget = "" if field == "max_trials" else "max_trials: 5\n"
    for value, ok in ((taken, True), (refused, False)):
        path = tmp_path / f"{ok}.yaml"
        path.write_text(
            f"search_space: {{x: {{_type: uniform, _value: [0, 1]}}}}\n"
            f"trial: {{command: 'true'}}\n{budget}{field}: {value}\n"
        )
        if ok:
            assert isinstance(load_config(path), ExperimentConfig)
        else:
            with pytest.raises(ConfigError, match=rf"{field}: "):
                load_config(path)


def test_steering_and_resume_take_the_same_range():
    at = budget_changes(concurrency=MAX_CONCURRENCY, max_trials=MAX_TRIALS, max_duration="3650d")
    assert at == {
        "concurrency": MAX_CONCURRENCY,
        "max_trials": MAX_TRIALS,
        "max_duration": MAX_DURATION,
    }
    for given in ({"concurrency": HUGE}, {"max_trials": MAX_TRIALS + 1}, {"max_duration": "3651d"}):
        (field,) = given
        with pytest.raises(ConfigError, match=rf"^--{field.replace('_', '-')}: "):
            budget_changes(**given, names={field: f"--{field.replace('_', '-')}"})


def test_the_cli_takes_the_same_range(tmp_path, capsys):
    storage = str(tmp_path / "runs.db")
    done = hyperlab.run(
        lambda p: p["x"],
        {"x": hyperlab.uniform(0, 1)},
        max_trials=2,
        storage=storage,
        progress=False,
    )
    exp_id = done.experiment_id
    assert main(["--storage", storage, "resume", exp_id, "--concurrency", str(HUGE)]) == 2
    err = capsys.readouterr().err
    assert f"--concurrency: input should be less than or equal to {MAX_CONCURRENCY}" in err
    assert main(["--storage", storage, "resume", exp_id, "--max-duration", "3651d"]) == 2
    assert "--max-duration: expected at most 315360000 seconds" in capsys.readouterr().err
    flags = ["--concurrency", str(MAX_CONCURRENCY), "--quiet"]
    assert main(["--storage", storage, "resume", exp_id, *flags]) == 0
    assert f"concurrency 1 -> {MAX_CONCURRENCY}" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["--storage", storage, "logs", exp_id, "9" * 20])
    assert exit_.value.code == 2
    assert f"expected a trial number from 0 to {MAX_TRIAL_NUMBER}" in capsys.readouterr().err


def test_stored_options_beyond_a_range_read_as_its_end():
    stored = ExperimentOptions().model_dump(mode="json")
    stored |= {"concurrency": HUGE, "max_trials": 10**10, "max_duration": 1e12}  # "no end"
    options = parse_stored_options(stored)
    assert options.concurrency == MAX_CONCURRENCY
    assert options.max_trials == MAX_TRIALS
    assert options.max_duration == MAX_DURATION


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """(client, experiment) of a running experiment of slow thread trials, 3 at most."""
    folder = tmp_path_factory.mktemp("ranges")
    url = f"sqlite:///{folder / 'live.db'}"
    exp = start_live(url, folder / "work", max_trials=3)
    try:
        with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
            yield client, exp
    finally:
        exp.stop()
        exp.wait(timeout=30)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            {"concurrency": HUGE},
            f"concurrency: input should be less than or equal to {MAX_CONCURRENCY}, got {HUGE}",
        ),
        ({"concurrency": 0}, "concurrency: input should be greater than or equal to 1, got 0"),
        ({"max_trials": MAX_TRIALS + 1}, "max_trials: input should be less than or equal to"),
        ({"max_duration": "3651d"}, "max_duration: expected at most 315360000 seconds"),
        ({"max_duration": 1e300}, "max_duration: expected at most 315360000 seconds"),
        ({"concurrency": "4"}, "concurrency: input should be a valid integer"),
    ],
)
def test_the_rest_api_refuses_what_the_options_refuse(live, body, expected):
    client, exp = live
    response = client.patch(f"/api/v1/experiments/{exp.id}", json=body)
    assert response.status_code == 422, response.text
    assert expected in response.json()["detail"]


@pytest.mark.parametrize(
    ("update", "body", "expected"),
    [
        (
            "TRIAL_CONCURRENCY",
            {"trialConcurrency": HUGE},
            "params.trialConcurrency: input should be less than or equal to",
        ),
        (
            "MAX_TRIAL_NUM",
            {"maxTrialNumber": MAX_TRIALS + 1},
            "params.maxTrialNumber: input should be less than or equal",
        ),
        ("MAX_EXEC_DURATION", {"maxExperimentDuration": "3651d"}, "expected at most"),
    ],
)
def test_nnis_profile_update_refuses_what_the_options_refuse(live, update, body, expected):
    client, exp = live
    response = client.put(
        "/api/v1/nni/experiment",
        params={"update_type": update, "experiment_id": exp.id},
        json={"params": body},
    )
    assert response.status_code == 422, response.text
    assert expected in response.json()["error"]


def test_the_rest_api_applies_a_value_at_the_end_of_its_range(live):
    client, exp = live
    response = client.patch(f"/api/v1/experiments/{exp.id}", json={"concurrency": MAX_CONCURRENCY})
    assert response.status_code == 202, response.text
    (control,) = response.json()["controls"]
    assert wait_for_control(client, control["id"])["state"] == "applied"
    shown = client.get(f"/api/v1/experiments/{exp.id}").json()["options"]
    assert shown["concurrency"] == MAX_CONCURRENCY
