"""Tests for hyperlab.space: NNI semantics, NNI JSON, sampling, grids, errors, encoding."""

from __future__ import annotations

import json
import math
import pickle
import warnings
from collections import Counter
from dataclasses import FrozenInstanceError
from typing import Any

import numpy as np
import pytest

from hyperlab.errors import SearchSpaceError
from hyperlab.space import (
    Choice,
    NestedOption,
    Parameter,
    SearchSpace,
    choice,
    lognormal,
    loguniform,
    normal,
    qlognormal,
    qloguniform,
    qnormal,
    quniform,
    randint,
    uniform,
)

N = 20_000

# NNI's own examples: the search space of its HPO quickstart (PyTorch), and two of the four
# layers of examples/trials/mnist-nested-search-space/search_space.json.
NNI_QUICKSTART = """{
    "features": {"_type": "choice", "_value": [128, 256, 512, 1024]},
    "lr": {"_type": "loguniform", "_value": [0.0001, 0.1]},
    "momentum": {"_type": "uniform", "_value": [0, 1]}
}"""
NNI_NESTED = """{
    "layer0": {
        "_type": "choice",
        "_value": [
            {"_name": "Empty"},
            {"_name": "Conv", "kernel_size": {"_type": "choice", "_value": [1, 2, 3, 5]}},
            {"_name": "Max_pool", "pooling_size": {"_type": "choice", "_value": [2, 3, 5]}},
            {"_name": "Avg_pool", "pooling_size": {"_type": "choice", "_value": [2, 3, 5]}}
        ]
    },
    "layer1": {
        "_type": "choice",
        "_value": [
            {"_name": "Empty"},
            {"_name": "Conv", "kernel_size": {"_type": "choice", "_value": [1, 2, 3, 5]}},
            {"_name": "Max_pool", "pooling_size": {"_type": "choice", "_value": [2, 3, 5]}},
            {"_name": "Avg_pool", "pooling_size": {"_type": "choice", "_value": [2, 3, 5]}}
        ]
    }
}"""
EVERY_TYPE = {
    "c": {"_type": "choice", "_value": ["a", 2, 2.5, True, None, [1, 2], {"k": "v"}]},
    "ri": {"_type": "randint", "_value": [-3, 4]},
    "u": {"_type": "uniform", "_value": [0.1, 1]},
    "qu": {"_type": "quniform", "_value": [1, 10, 3]},
    "lu": {"_type": "loguniform", "_value": [1e-05, 0.1]},
    "qlu": {"_type": "qloguniform", "_value": [1, 100, 10]},
    "n": {"_type": "normal", "_value": [-1, 2]},
    "qn": {"_type": "qnormal", "_value": [0, 1.5, 0.5]},
    "ln": {"_type": "lognormal", "_value": [0, 1]},
    "qln": {"_type": "qlognormal", "_value": [1, 1, 2]},
}


def draw(param: Parameter, n: int = N, seed: int = 0) -> list[Any]:
    return SearchSpace({"p": param}).sample(np.random.default_rng(seed), n)


def column(param: Parameter, n: int = N, seed: int = 0) -> np.ndarray:
    return np.array([p["p"] for p in draw(param, n, seed)])


def nested_space() -> SearchSpace:
    return SearchSpace(
        {
            "lr": loguniform(1e-4, 1e-1),
            "layer0": choice(
                {"_name": "conv", "kernel": randint(1, 4), "act": "relu", "opt": {"m": 1}},
                {
                    "_name": "block",
                    "inner": choice({"_name": "deep", "depth": quniform(1, 5, 1)}, "flat"),
                },
                {"_name": "skip"},
            ),
            "units": {"_type": "quniform", "_value": [16, 64, 16]},
        }
    )


def assert_plain(value: Any) -> None:
    assert not isinstance(value, np.generic), value
    assert type(value) in (int, float, str, bool, type(None), list, dict), type(value)
    if isinstance(value, list):
        for v in value:
            assert_plain(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            assert type(k) is str
            assert_plain(v)


# ---------------------------------------------------------------- semantics of each type


def test_choice_is_uniform_over_options_and_returns_them_unchanged() -> None:
    values = [p["p"] for p in draw(choice("a", 1, 2.5, True, None))]
    counts = Counter(map(repr, values))
    assert set(counts) == {"'a'", "1", "2.5", "True", "None"}
    for count in counts.values():
        assert abs(count / N - 0.2) < 0.015
    assert {type(v) for v in values} == {str, int, float, bool, type(None)}


def test_choice_of_one_list_is_one_option_and_warns_a_ray_user() -> None:
    with pytest.warns(UserWarning, match=r"choice\(\['a', 'b'\]\) has one option.*choice\(\*"):
        one = choice(["a", "b"])
    assert {tuple(p["p"]) for p in draw(one, 50)} == {("a", "b")}
    assert one != choice("a", "b")


def test_choice_of_lists_among_several_options_or_of_a_one_item_list_is_quiet() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        choice([1, 2], [3])
        choice([1])
        choice("a", "b")


def test_randint_excludes_high_and_hits_every_integer() -> None:
    x = column(randint(-2, 3))
    assert set(x.tolist()) == {-2, -1, 0, 1, 2}
    assert all(abs(c / N - 0.2) < 0.015 for c in Counter(x.tolist()).values())


def test_uniform_stays_in_bounds_and_is_flat() -> None:
    x = column(uniform(-1, 3))
    assert x.min() >= -1 and x.max() <= 3
    assert np.quantile(x, [0.25, 0.5, 0.75]) == pytest.approx([0, 1, 2], abs=0.06)


def test_quniform_rounds_to_q_then_clips_with_nni_frequencies() -> None:
    # x ~ U(1, 10); round(x / 3) * 3 is 0 (clipped to 1) for x < 1.5, 3, 6, or 9 for x >= 7.5.
    counts = Counter(column(quniform(1, 10, 3)).tolist())
    assert set(counts) == {1.0, 3.0, 6.0, 9.0}
    expected = {1.0: 0.5 / 9, 3.0: 3 / 9, 6.0: 3 / 9, 9.0: 2.5 / 9}
    for value, p in expected.items():
        assert abs(counts[value] / N - p) < 0.015


def test_quniform_clips_to_high_when_rounding_overshoots() -> None:
    # x / 0.6 < 1.67 rounds to at most 2, and 2 * 0.6 = 1.2 is clipped to 1.
    assert set(column(quniform(0, 1, 0.6)).tolist()) == {0.0, 0.6, 1.0}
    assert set(column(quniform(0, 1, 0.75)).tolist()) == {0.0, 0.75}  # 1 / 0.75 rounds to 1


def test_loguniform_median_is_the_geometric_mean() -> None:
    x = column(loguniform(1e-4, 1.0))
    assert x.min() >= 1e-4 and x.max() <= 1.0
    assert np.median(x) == pytest.approx(1e-2, rel=0.08)
    assert np.mean(np.log10(x)) == pytest.approx(-2, abs=0.03)


def test_qloguniform_rounds_then_clips_to_low() -> None:
    # round(x / 10) * 10 is 0 for x < 5, clipped to 1: P = log(5) / log(100).
    x = column(qloguniform(1, 100, 10)).tolist()
    assert set(x) <= {1.0, *(10.0 * k for k in range(1, 11))}
    assert Counter(x)[1.0] / N == pytest.approx(math.log(5) / math.log(100), abs=0.015)
    assert min(x) == 1.0 and max(x) == 100.0


def test_normal_has_the_given_mean_and_sigma() -> None:
    x = column(normal(5, 2))
    assert x.mean() == pytest.approx(5, abs=0.05)
    assert x.std() == pytest.approx(2, rel=0.03)


def test_qnormal_rounds_without_clipping() -> None:
    x = column(qnormal(0, 1, 0.5))
    assert np.all(np.isclose(x / 0.5, np.round(x / 0.5)))
    assert x.min() <= -3 and x.max() >= 3
    assert 0.0 in x.tolist() and "-0.0" not in {repr(v) for v in x.tolist()}


def test_lognormal_log_is_normal() -> None:
    x = column(lognormal(1, 0.5))
    assert x.min() > 0
    assert np.log(x).mean() == pytest.approx(1, abs=0.02)
    assert np.log(x).std() == pytest.approx(0.5, rel=0.03)


def test_qlognormal_rounds_exp_of_normal() -> None:
    x = column(qlognormal(0, 1, 1))
    assert np.all(x == np.round(x)) and x.min() == 0.0
    p_zero = 0.5 * (1 + math.erf(math.log(0.5) / math.sqrt(2)))  # P(exp(z) < 0.5)
    assert np.mean(x == 0) == pytest.approx(p_zero, abs=0.015)


# ---------------------------------------------------------------- sampling


def test_sample_returns_only_plain_python_types() -> None:
    params = SearchSpace.from_nni(EVERY_TYPE).sample(np.random.default_rng(1), 200)
    params += nested_space().sample(np.random.default_rng(1), 200)
    for p in params:
        assert_plain(p)
    first = params[0]
    assert type(first["ri"]) is int and type(first["u"]) is float
    assert type(first["qu"]) is float and type(first["qln"]) is float


def test_same_seed_same_sets_and_the_stream_moves_on() -> None:
    space = nested_space()
    assert space.sample(np.random.default_rng(7), 50) == space.sample(np.random.default_rng(7), 50)
    assert space.sample(7, 5) == space.sample(np.random.default_rng(7), 5)
    rng = np.random.default_rng(7)
    assert space.sample(rng, 5) != space.sample(rng, 5)
    assert space.sample(np.random.default_rng(8), 5) != space.sample(np.random.default_rng(7), 5)


def test_sample_sizes() -> None:
    space = nested_space()
    assert space.sample(np.random.default_rng(0), 0) == []
    assert len(space.sample(np.random.default_rng(0))) == 1
    assert SearchSpace({}).sample(np.random.default_rng(0), 2) == [{}, {}]
    with pytest.raises(ValueError, match="non-negative integer, got -1"):
        space.sample(np.random.default_rng(0), -1)


def test_nested_sub_parameters_only_for_the_chosen_option() -> None:
    params = nested_space().sample(np.random.default_rng(3), 3000)
    seen = Counter()
    for p in params:
        assert list(p) == ["lr", "layer0", "units"]
        layer = p["layer0"]
        seen[layer["_name"]] += 1
        if layer["_name"] == "conv":
            assert layer == {
                "_name": "conv",
                "kernel": layer["kernel"],
                "act": "relu",
                "opt": {"m": 1},
            }
            assert layer["kernel"] in (1, 2, 3)
        elif layer["_name"] == "block":
            assert set(layer) == {"_name", "inner"}
            inner = layer["inner"]
            if inner != "flat":
                assert set(inner) == {"_name", "depth"} and inner["_name"] == "deep"
                assert inner["depth"] in (1.0, 2.0, 3.0, 4.0, 5.0)
                seen["deep"] += 1
        else:
            assert layer == {"_name": "skip"}
    assert all(abs(seen[name] / 3000 - 1 / 3) < 0.04 for name in ("conv", "block", "skip"))
    assert 0.4 < seen["deep"] / seen["block"] < 0.6


@pytest.mark.filterwarnings("ignore:choice.*has one option")
def test_sampled_mutable_constants_are_not_shared() -> None:
    space = SearchSpace({"c": choice([1, 2]), "n": choice({"_name": "a", "cfg": {"x": [1]}})})
    first, second = space.sample(np.random.default_rng(0), 2)
    first["c"].append(3)
    first["n"]["cfg"]["x"].append(2)
    assert second == {"c": [1, 2], "n": {"_name": "a", "cfg": {"x": [1]}}}
    assert space.to_nni()["n"]["_value"][0]["cfg"] == {"x": [1]}


# ---------------------------------------------------------------- NNI JSON


@pytest.mark.parametrize("text", [NNI_QUICKSTART, NNI_NESTED, json.dumps(EVERY_TYPE)])
def test_nni_json_round_trips_unchanged(text: str) -> None:
    spec = json.loads(text)
    assert SearchSpace.from_nni(spec).to_nni() == spec
    assert json.dumps(SearchSpace.from_nni(spec).to_nni()) == json.dumps(spec)  # order, 1 vs 1.0


def test_ints_stay_ints_and_floats_stay_floats() -> None:
    value = SearchSpace.from_nni({"u": {"_type": "uniform", "_value": [0.1, 1]}}).to_nni()
    assert value["u"]["_value"] == [0.1, 1] and type(value["u"]["_value"][1]) is int
    assert uniform(0.0, 1.0).to_nni()["_value"] == [0.0, 1.0]
    assert type(uniform(0.0, 1.0).to_nni()["_value"][0]) is float


def test_nni_nested_example_samples_like_nni() -> None:
    space = SearchSpace.from_nni(NNI_NESTED)
    names = {"Empty": set(), "Conv": {"kernel_size"}, "Max_pool": {"pooling_size"}}
    names["Avg_pool"] = {"pooling_size"}
    for p in space.sample(np.random.default_rng(0), 500):
        for layer in ("layer0", "layer1"):
            assert set(p[layer]) - {"_name"} == names[p[layer]["_name"]]
    assert space.grid_size() == (1 + 4 + 3 + 3) ** 2 == len(space.grid())


def test_builders_and_nni_dicts_build_equal_spaces() -> None:
    built = SearchSpace(
        {
            "layer0": choice(
                {"_name": "Empty"},
                {"_name": "Conv", "kernel_size": choice(1, 2, 3, 5)},
                {"_name": "Max_pool", "pooling_size": {"_type": "choice", "_value": [2, 3, 5]}},
                NestedOption("Avg_pool", {"pooling_size": choice(2, 3, 5)}),
            )
        }
    )
    nni = SearchSpace.from_nni({"layer0": json.loads(NNI_NESTED)["layer0"]})
    assert built == nni and hash(built) == hash(nni)
    assert built.to_nni() == nni.to_nni()


def test_from_nni_reads_json_yaml_files_and_json_text(tmp_path) -> None:
    spec = json.loads(NNI_NESTED)
    (tmp_path / "space.json").write_text(NNI_NESTED)
    (tmp_path / "space.yaml").write_text("lr:\n  _type: loguniform\n  _value: [0.0001, 0.1]\n")
    assert SearchSpace.from_nni(tmp_path / "space.json").to_nni() == spec
    assert SearchSpace.from_nni(str(tmp_path / "space.json")).to_nni() == spec
    assert SearchSpace.from_nni(tmp_path / "space.yaml") == SearchSpace(
        {"lr": loguniform(1e-4, 0.1)}
    )
    assert SearchSpace.from_nni(NNI_NESTED).to_nni() == spec


def test_coerce() -> None:
    space = nested_space()
    assert SearchSpace.coerce(space) is space
    assert SearchSpace.coerce(space.to_nni()) == space
    assert SearchSpace.coerce(NNI_QUICKSTART) == SearchSpace.from_nni(NNI_QUICKSTART)
    with pytest.raises(SearchSpaceError, match="got list"):
        SearchSpace.coerce([("lr", uniform(0, 1))])


@pytest.mark.filterwarnings("ignore:choice.*has one option")
def test_mapping_interface_equality_repr_and_immutability() -> None:
    space = SearchSpace({"b": randint(0, 3), "a": {"_type": "uniform", "_value": [0, 1]}})
    assert space.names == ("b", "a") and list(space) == ["b", "a"] and len(space) == 2
    assert space["a"] == uniform(0, 1) and "a" in space and "z" not in space
    assert space != SearchSpace({"a": uniform(0, 1), "b": randint(0, 3)})  # order matters
    assert repr(space) == "SearchSpace({'b': randint(0, 3), 'a': uniform(0, 1)})"
    nested = nested_space()
    assert eval(repr(nested)) == nested  # the repr is the builder call
    assert pickle.loads(pickle.dumps(nested)) == nested
    with pytest.raises(FrozenInstanceError):
        space["a"].low = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        space["c"] = uniform(0, 1)  # type: ignore[index]
    assert choice(1) != choice(1.0) and choice(1) != choice(True)
    assert len({choice([1, 2]), choice([1, 2]), choice({"a": 1})}) == 2
    to_nni = space.to_nni()
    to_nni["a"]["_value"][0] = 0.5
    assert space["a"].low == 0


# ---------------------------------------------------------------- grid


def test_grid_is_the_product_in_definition_order() -> None:
    space = SearchSpace({"a": choice("x", "y"), "b": randint(0, 3), "c": quniform(0, 1, 0.5)})
    grid = space.grid()
    assert grid[:4] == [
        {"a": "x", "b": 0, "c": 0.0},
        {"a": "x", "b": 0, "c": 0.5},
        {"a": "x", "b": 0, "c": 1.0},
        {"a": "x", "b": 1, "c": 0.0},
    ]
    assert len(grid) == space.grid_size() == 2 * 3 * 3
    assert grid[-1] == {"a": "y", "b": 2, "c": 1.0}
    assert list(space.iter_grid()) == grid


def test_grid_size_does_not_enumerate() -> None:
    space = SearchSpace({"a": randint(0, 10**6), "b": quniform(0, 1, 1e-6), "c": choice(1, 2)})
    assert space.grid_size() == 10**6 * (10**6 + 1) * 2


def test_grid_expands_nested_options_in_order() -> None:
    space = SearchSpace({"layer0": nested_space()["layer0"], "units": quniform(16, 32, 16)})
    grid = space.grid()
    conv = [{"_name": "conv", "kernel": k, "act": "relu", "opt": {"m": 1}} for k in (1, 2, 3)]
    deep = [{"_name": "block", "inner": {"_name": "deep", "depth": float(d)}} for d in range(1, 6)]
    layers = [*conv, *deep, {"_name": "block", "inner": "flat"}, {"_name": "skip"}]
    assert grid == [{"layer0": layer, "units": u} for layer in layers for u in (16.0, 32.0)]
    assert space.grid_size() == 20
    grid[0]["layer0"]["opt"]["m"] = 2  # points share no dicts
    assert grid[1]["layer0"]["opt"] == {"m": 1}


@pytest.mark.parametrize(
    ("param", "values"),
    [
        (quniform(1, 10, 3), [1.0, 3.0, 6.0, 9.0]),
        (quniform(0, 1, 0.6), [0.0, 0.6, 1.0]),
        (quniform(0, 1, 0.75), [0.0, 0.75]),
        (quniform(0.6, 3.1, 1), [1.0, 2.0, 3.0]),
        (quniform(1.1, 1.4, 2), [1.4]),
        (qloguniform(1, 100, 10), [1.0, *(10.0 * k for k in range(1, 11))]),
        (randint(-1, 2), [-1, 0, 1]),
        (choice("a", {"_name": "b"}), ["a", {"_name": "b"}]),
    ],
)
def test_grid_values_are_the_sampled_support(param: Parameter, values: list[Any]) -> None:
    assert param.grid() == values and param.grid_size() == len(values)
    sampled = {json.dumps(v) for v in column(param, 5000).tolist()}
    assert sampled == {json.dumps(v) for v in values}


def test_grid_includes_a_bound_reached_only_at_the_bound() -> None:
    # clip(round(0.5 / 1) * 1, 0.5, 3) = 0.5 (round half to even): x = low exactly gives low.
    param = quniform(0.5, 3, 1)
    assert param.grid() == [0.5, 1.0, 2.0, 3.0] and param.grid_size() == 4
    assert set(column(param, 5000).tolist()) == {1.0, 2.0, 3.0}


@pytest.mark.parametrize(
    "param", [uniform(0, 1), loguniform(1, 2), normal(0, 1), qnormal(0, 1, 1), lognormal(0, 1)]
)
def test_grid_rejects_float_ranges_and_unbounded_distributions(param: Parameter) -> None:
    space = SearchSpace({"ok": choice(1, 2), "layer0": choice({"_name": "conv", "lr": param})})
    for method in (space.grid, space.grid_size, space.iter_grid):
        with pytest.raises(SearchSpaceError) as info:
            method()
        message = str(info.value)
        assert message.startswith("layer0/conv/lr: grid search needs a choice, randint or q-spaced")
        assert param.type in message


# ---------------------------------------------------------------- errors

INVALID = [
    (
        {"x": {"_type": "gaussian", "_value": [0, 1]}},
        "x: unknown _type 'gaussian'; valid types: choice, randint, uniform",
    ),
    (
        {"x": {"_type": "uniform", "_value": [0, 1, 2]}},
        "x: uniform needs 2 _value items [low, high], got 3",
    ),
    (
        {"x": {"_type": "qnormal", "_value": [0, 1]}},
        "x: qnormal needs 3 _value items [mu, sigma, q], got 2",
    ),
    ({"x": {"_type": "uniform", "_value": 1}}, "x: uniform needs _value to be a list, got 1 (int)"),
    (
        {"x": {"_type": "uniform", "_value": [1, 1]}},
        "x: uniform needs low < high, got low=1, high=1",
    ),
    (
        {"x": {"_type": "randint", "_value": [5, 2]}},
        "x: randint needs low < high (high is excluded), got low=5, high=2",
    ),
    (
        {"x": {"_type": "loguniform", "_value": [0, 1]}},
        "x: loguniform needs low > 0 (it is log-scaled), got low=0",
    ),
    ({"x": {"_type": "qloguniform", "_value": [-1, 1, 1]}}, "x: qloguniform needs low > 0"),
    ({"x": {"_type": "quniform", "_value": [0, 1, 0]}}, "x: quniform needs q > 0, got q=0"),
    (
        {"x": {"_type": "qlognormal", "_value": [0, 1, -0.5]}},
        "x: qlognormal needs q > 0, got q=-0.5",
    ),
    ({"x": {"_type": "normal", "_value": [0, 0]}}, "x: normal needs sigma > 0, got sigma=0"),
    (
        {"x": {"_type": "lognormal", "_value": [0, -1]}},
        "x: lognormal needs sigma > 0, got sigma=-1",
    ),
    ({"x": {"_type": "choice", "_value": []}}, "x: choice needs at least one option, got none"),
    (
        {"x": {"_type": "choice", "_value": [1, {1, 2}]}},
        "x: choice option 1 must be JSON-serializable",
    ),
    (
        {"x": {"_type": "choice", "_value": [object()]}},
        "x: choice option 0 must be JSON-serializable (null, bool",
    ),
    (
        {"x": {"_type": "choice", "_value": [float("nan")]}},
        "x: choice option 0 must be JSON-serializable",
    ),
    (
        {"x": {"_type": "choice", "_value": [{"_name": "a", "c": {1, 2}}]}},
        "x/a/c: a constant must be JSON-serializable",
    ),
    (
        {"x": {"_type": "choice", "_value": [{"_name": "a"}, {"_name": "a"}]}},
        "x: choice has two nested options named 'a' (options 0 and 1); each _name must be unique",
    ),
    (
        {"x": {"_type": "choice", "_value": [{"_name": ""}]}},
        "x: choice option 0: a nested option's _name must be a non-empty string, got ''",
    ),
    (
        {"x": {"_type": "uniform", "_value": [True, 2]}},
        "x: uniform needs low to be a finite real number, got True (bool)",
    ),
    (
        {"x": {"_type": "uniform", "_value": [0, float("inf")]}},
        "x: uniform needs high to be a finite real number, got inf",
    ),
    (
        {"x": {"_type": "normal", "_value": ["0", 1]}},
        "x: normal needs mu to be a finite real number, got '0' (str)",
    ),
    (
        {"x": {"_type": "randint", "_value": [0, 2.5]}},
        "x: randint needs high to be an integer, got 2.5 (float)",
    ),
    (
        {"x": {"_type": "uniform"}},
        "x: an NNI spec needs '_type' and '_value' keys, missing '_value'",
    ),
    (
        {"x": {"_type": "uniform", "_value": [0, 1], "y": 1}},
        "x: an NNI spec has only '_type' and '_value' keys, got extra keys ['y']",
    ),
    ({"x": 5}, "x: a parameter must be a Parameter (e.g. uniform(0, 1)) or an NNI spec dict"),
    ({"x": {"low": 0}}, "x: a parameter must be a Parameter"),
    ({"": uniform(0, 1)}, "parameter names must be non-empty strings, got '' (str)"),
    ({3: uniform(0, 1)}, "parameter names must be non-empty strings, got 3 (int)"),
    (
        {
            "x": {
                "_type": "choice",
                "_value": [{"_name": "a", 7: {"_type": "randint", "_value": [0, 2]}}],
            }
        },
        "x/a: parameter names must be non-empty strings, got 7 (int)",
    ),
    (
        {
            "layer0": {
                "_type": "choice",
                "_value": [{"_name": "conv", "kernel": {"_type": "randint", "_value": [3, 3]}}],
            }
        },
        "layer0/conv/kernel: randint needs low < high (high is excluded), got low=3, high=3",
    ),
    (
        {
            "a": {
                "_type": "choice",
                "_value": [
                    {
                        "_name": "b",
                        "c": {
                            "_type": "choice",
                            "_value": [{"_name": "d", "e": {"_type": "wat", "_value": []}}],
                        },
                    }
                ],
            }
        },
        "a/b/c/d/e: unknown _type 'wat'",
    ),
    (["x"], "a search space must be a mapping of parameter names to specs, got list"),
]


@pytest.mark.parametrize(("spec", "message"), INVALID)
def test_invalid_spaces_name_the_path_the_rule_and_the_value(spec: Any, message: str) -> None:
    with pytest.raises(SearchSpaceError) as info:
        SearchSpace(spec)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: uniform(2, 1), "uniform needs low < high, got low=2, high=1"),
        (lambda: loguniform(-1, 1), "loguniform needs low > 0"),
        (lambda: randint(0, 1.5), "randint needs high to be an integer, got 1.5 (float)"),
        (lambda: quniform(0, 1, -1), "quniform needs q > 0, got q=-1"),
        (lambda: normal(0, 0), "normal needs sigma > 0, got sigma=0"),
        (lambda: choice(), "choice needs at least one option, got none"),
        (lambda: choice({1}), "choice option 0 must be JSON-serializable"),
        (
            lambda: choice({"_name": "c", "k": {"_type": "x", "_value": []}}),
            "c/k: unknown _type 'x'",
        ),
        (lambda: Choice("ab"), "choice needs its options as a list or tuple, got 'ab' (str)"),
        (lambda: NestedOption(""), "a nested option's _name must be a non-empty string"),
        (lambda: choice({"_name": "a", 7: randint(0, 2)}), "a: parameter names must be non-empty"),
    ],
)
def test_builders_validate_at_once(build: Any, message: str) -> None:
    with pytest.raises(SearchSpaceError) as info:
        build()
    assert str(info.value).startswith(message)


def test_file_errors_name_the_file_and_line(tmp_path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(SearchSpaceError, match=f"{missing}: search-space file not found"):
        SearchSpace.from_nni(missing)
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "lr": {"_type": "uniform",\n  "_value": [0, 1],}\n}')
    with pytest.raises(SearchSpaceError, match=r"bad.json: invalid JSON at line 3, column"):
        SearchSpace.from_nni(bad)
    bad_yaml = tmp_path / "bad.yml"
    bad_yaml.write_text("lr:\n  _type: uniform\n _value: [0, 1]\n")
    with pytest.raises(SearchSpaceError, match=r"bad.yml: invalid YAML at line 3"):
        SearchSpace.from_nni(bad_yaml)
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    with pytest.raises(SearchSpaceError, match=r"list\.json: a search space must be an object"):
        SearchSpace.from_nni(listed)
    invalid = tmp_path / "invalid.json"
    invalid.write_text('{"lr": {"_type": "uniform", "_value": [1, 0]}}')
    with pytest.raises(
        SearchSpaceError, match=r"^lr: uniform needs low < high.*\(in .*invalid.json\)"
    ):
        SearchSpace.from_nni(invalid)
    with pytest.raises(SearchSpaceError, match="search-space JSON text: invalid JSON at line 1"):
        SearchSpace.from_nni("{lr}")


# ---------------------------------------------------------------- unit-cube encoding


def test_dimensions_flatten_nested_options_depth_first() -> None:
    dims = nested_space().dimensions()
    assert [(d.path, d.condition) for d in dims] == [
        ("lr", None),
        ("layer0", None),
        ("layer0/conv/kernel", ("layer0", "conv")),
        ("layer0/block/inner", ("layer0", "block")),
        ("layer0/block/inner/deep/depth", ("layer0/block/inner", "deep")),
        ("units", None),
    ]
    assert dims[2].param == randint(1, 4)


@pytest.mark.parametrize(
    "space", [SearchSpace.from_nni(EVERY_TYPE), nested_space()], ids=["flat", "nested"]
)
def test_decode_inverts_encode_for_sampled_params(space: SearchSpace) -> None:
    params = space.sample(np.random.default_rng(5), 300)
    X = np.array([space.encode(p) for p in params])
    assert X.shape == (300, len(space.dimensions()))
    active = ~np.isnan(X)
    assert np.all((X[active] >= 0) & (X[active] <= 1))
    decoded = space.decode_many(X)
    assert decoded == [space.decode(x) for x in X]
    for p, d in zip(params, decoded, strict=True):
        assert_same(p, d)


def assert_same(expected: Any, actual: Any) -> None:
    assert type(actual) is type(expected), (expected, actual)
    if isinstance(expected, dict):
        assert list(actual) == list(expected)
        for key in expected:
            assert_same(expected[key], actual[key])
    elif isinstance(expected, float):
        assert actual == pytest.approx(expected, rel=1e-9, abs=1e-12)
    else:
        assert actual == expected


def test_encoding_scales() -> None:
    space = SearchSpace(
        {
            "c": choice("a", "b", "c", "d"),
            "r": randint(0, 4),
            "u": uniform(-1, 1),
            "lu": loguniform(1, 100),
            "n": normal(3, 2),
            "ln": lognormal(0, 1),
        }
    )
    x = space.encode({"c": "b", "r": 3, "u": 0.5, "lu": 10, "n": 3, "ln": 1.0})
    assert x == pytest.approx([0.375, 0.875, 0.75, 0.5, 0.5, 0.5])
    x = space.encode({"c": "a", "r": 0, "u": -1, "lu": 1, "n": 5, "ln": math.e})
    assert x == pytest.approx([0.125, 0.125, 0.0, 0.0, 0.8413447, 0.8413447])


def test_inactive_dimensions_are_nan_and_ignored_by_decode() -> None:
    space = nested_space()
    x = space.encode({"lr": 0.01, "layer0": {"_name": "skip"}, "units": 32.0})
    assert np.isnan(x[2:5]).all() and not np.isnan(x[[0, 1, 5]]).any()
    x[2:5] = [0.3, np.nan, 0.9]
    assert space.decode(x)["layer0"] == {"_name": "skip"}
    x[1] = np.nan
    with pytest.raises(ValueError, match="layer0: coordinate 1 is NaN but the dimension is active"):
        space.decode(x)


def test_decode_clips_and_rounds() -> None:
    space = SearchSpace(
        {
            "q": quniform(0, 10, 2.5),
            "r": randint(5, 8),
            "c": choice("x", "y"),
            "u": uniform(0, 1),
            "n": normal(0, 1),
        }
    )
    low, high = space.decode([-3, -1, -0.1, -5, 0]), space.decode([4, 2, 1.5, 9, 1])
    assert low == {"q": 0.0, "r": 5, "c": "x", "u": 0.0, "n": pytest.approx(-8.2, abs=0.1)}
    assert high == {"q": 10.0, "r": 7, "c": "y", "u": 1.0, "n": pytest.approx(8.2, abs=0.1)}
    assert space.decode([0.27, 0.5, 0.5, 0.5, 0.5])["q"] == 2.5
    assert type(space.decode([0.5] * 5)["r"]) is int


def test_encode_and_decode_reject_bad_input() -> None:
    space = SearchSpace({"c": choice(16, 32), "u": uniform(0, 1)})
    with pytest.raises(ValueError, match="c: cannot encode 8: 8 is not one of the options"):
        space.encode({"c": 8, "u": 0.5})
    with pytest.raises(ValueError, match="u: missing"):
        space.encode({"c": 16})
    with pytest.raises(ValueError, match=r"shape \(2,\), got \(3,\)"):
        space.decode([0.5, 0.5, 0.5])
    assert space.encode({"c": 32.0, "u": 0.5})[0] == 0.75  # 32.0 matches option 32
