"""A search space has limits, checked when it is read, before it is parsed: options of a choice,
parameters, levels of nested choices, characters of JSON. A space of one choice of a million
options (52 MB) was once accepted, after which one request for a plot took 70 s of CPU and
4.3 GB; now it is refused at once, naming the parameter, the size and the limit."""

from __future__ import annotations

import json
from typing import Any

import pytest

import hyperlab
from hyperlab.cli import main
from hyperlab.errors import SearchSpaceError
from hyperlab.space import (
    MAX_NESTING,
    MAX_OPTIONS,
    MAX_PARAMETERS,
    MAX_SPACE_SIZE,
    SearchSpace,
    choice,
    uniform,
)
from tests.allocations import peak_allocation
from tests.server.largest import largest_space


def _choice(n: int) -> dict[str, Any]:
    return {"_type": "choice", "_value": list(range(n))}


def _nested(levels: int) -> dict[str, Any]:
    spec: dict[str, Any] = {"_type": "uniform", "_value": [0, 1]}
    for level in range(levels, 0, -1):
        spec = {
            "_type": "choice",
            "_value": [{"_name": f"n{level}", "sub": spec}, {"_name": "off"}],
        }
    return spec


def test_a_million_options_are_refused_at_once_naming_the_parameter_and_the_limit():
    space = {"lr": {"_type": "uniform", "_value": [0, 1]}, "huge": _choice(1_000_000)}
    with peak_allocation() as peak, pytest.raises(SearchSpaceError) as error:
        SearchSpace(space)
    # parsing the options would hold tens of megabytes: nothing of them was parsed
    assert peak.bytes < 1_000_000, f"refusing the space held {peak.bytes:,} bytes at once"
    assert str(error.value) == "huge: a choice has at most 10,000 options, got 1,000,000"
    text = json.dumps(space)
    with pytest.raises(SearchSpaceError, match="huge: a choice has at most 10,000 options"):
        SearchSpace.from_nni(text)
    with pytest.raises(SearchSpaceError, match=r"^a choice has at most 10,000 options"):
        choice(*range(MAX_OPTIONS + 1))


@pytest.mark.parametrize(
    ("space", "message"),
    [
        ({"x": _choice(MAX_OPTIONS + 1)}, "x: a choice has at most 10,000 options, got 10,001"),
        (
            {f"p{i}": {"_type": "uniform", "_value": [0, 1]} for i in range(MAX_PARAMETERS + 1)},
            "p1000: a search space has at most 1,000 parameters (those of nested options "
            "included); this is number 1,001",
        ),
        (
            {"deep": _nested(MAX_NESTING + 1)},
            "choices nest at most 10 levels deep (a choice in a nested option of a choice is "
            "level 2), this one is level 11",
        ),
        (
            {f"p{i}": {"_type": "choice", "_value": ["x" * 1000] * 100} for i in range(11)},
            "p9: a search space has at most 1,000,000 characters of JSON; it passes 1,000,000 here",
        ),
        (
            {"a": {"_type": "choice", "_value": [{"_name": "n", "c": "x" * MAX_SPACE_SIZE}]}},
            "a: a search space has at most 1,000,000 characters of JSON",
        ),
    ],
)
def test_a_space_beyond_a_limit_is_refused_naming_where(space, message):
    with pytest.raises(SearchSpaceError) as error:
        SearchSpace(space)
    assert message in str(error.value)


def test_a_space_at_every_limit_is_taken():
    space = largest_space()  # MAX_PARAMETERS parameters, MAX_OPTIONS options, MAX_NESTING levels
    parsed = SearchSpace(space)
    assert len(parsed.dimensions()) == MAX_PARAMETERS
    assert SearchSpace({"x": _choice(MAX_OPTIONS)})["x"].options[-1] == MAX_OPTIONS - 1
    assert SearchSpace({"deep": _nested(MAX_NESTING)})
    nested_builder = choice({"_name": "a", "k": uniform(0, 1)}, {"_name": "b"})
    assert SearchSpace({"x": nested_builder, "y": _choice(MAX_OPTIONS)})


def test_every_way_of_giving_a_space_checks_the_limits(tmp_path, capsys):
    huge = {"x": _choice(MAX_OPTIONS + 1)}
    path = tmp_path / "space.json"
    path.write_text(json.dumps(huge))
    with pytest.raises(SearchSpaceError, match=r"^x: a choice has at most 10,000 options"):
        SearchSpace.from_nni(path)
    with pytest.raises(SearchSpaceError, match="x: a choice has at most 10,000 options"):
        hyperlab.run(lambda p: 0.0, huge, max_trials=1, storage=":memory:", progress=False)
    config = tmp_path / "experiment.yaml"
    config.write_text(
        f"search_space: {json.dumps(huge)}\ntrial: {{command: 'true'}}\nmax_trials: 1\n"
    )
    storage = str(tmp_path / "runs.db")
    assert main(["--storage", storage, "run", str(config)]) == 2
    assert "x: a choice has at most 10,000 options, got 10,001" in capsys.readouterr().err
