"""Tests for the research Domain algebra: operators, iteration, repetitions, seeds, aliases."""

from __future__ import annotations

import functools
import itertools
import json
import math
import operator
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from hyperlab.errors import ConfigError
from hyperlab.research._domain import Alias, ConfigItem, Domain, Option
from hyperlab.space import choice, loguniform, randint, uniform


def configs(domain: Domain, **kwargs: Any) -> list[dict[str, Any]]:
    return [item.config for item in domain.iterator(**kwargs)]


def take(domain: Domain, n: int, **kwargs: Any) -> list[ConfigItem]:
    return list(itertools.islice(domain.iterator(**kwargs), n))


class Model:
    """A class option value."""


def relu(x: float) -> float:
    return max(x, 0.0)


# ---------------------------------------------------------------- building


def test_kwargs_mapping_and_option_build_the_same_grid() -> None:
    d = Domain(lr=[0.1, 0.01], layers=[2, 4])
    assert d == Domain({"lr": [0.1, 0.01]}, layers=(2, 4))
    assert d == Option("lr", [0.1, 0.01]) * Option("layers", range(2, 5, 2))
    assert d == Domain(d)
    assert d.keys() == ["lr", "layers"]
    assert configs(d) == [
        {"lr": 0.1, "layers": 2},
        {"lr": 0.1, "layers": 4},
        {"lr": 0.01, "layers": 2},
        {"lr": 0.01, "layers": 4},
    ]


def test_a_non_list_value_is_a_constant_and_grid_values_may_be_anything() -> None:
    d = Domain(model=[Model, relu, None, "adam", {"depth": 3}], seed=7, cfg={"a": 1})
    assert d.size == 5
    assert [c["model"] for c in configs(d)] == [Model, relu, None, "adam", {"depth": 3}]
    assert all(c["seed"] == 7 and c["cfg"] == {"a": 1} for c in configs(d))
    assert [c["x"] for c in configs(Domain(x=np.array([1, 2])))] == [1, 2]


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (([1, 2],), {}, r"mapping of option names .*got \[1, 2\]"),
        (({"a": [1]},), {"a": [2]}, r"\['a'\] both in the mapping and as keywords"),
        (({1: [1]},), {}, "option names must be non-empty strings, got 1"),
        (({"": [1]},), {}, "non-empty strings, got ''"),
        ((), {"lr": []}, r"option 'lr' needs at least one value, got \[\]"),
        ((), {"w": np.zeros((2, 2))}, r"'w' needs a 1-d array of values, got shape \(2, 2\)"),
    ],
)
def test_bad_domains_are_refused(args: tuple[Any, ...], kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        Domain(*args, **kwargs)


def test_empty_domain_is_flagged_and_is_the_identity() -> None:
    empty = Domain()
    assert empty.is_empty and not empty and len(empty) == 0 and empty.size == 0
    assert Domain({}).is_empty
    d = Domain(a=[1, 2])
    assert empty * d == d and d * empty == d and empty + d == d and d + empty == d
    assert functools.reduce(lambda x, y: x * y, [Domain(a=[1]), Domain(b=[2])], empty) == Domain(
        a=[1], b=[2]
    )
    with pytest.raises(ConfigError, match="Domain is empty"):
        empty.iterator()


# ---------------------------------------------------------------- operators


def test_product_is_cartesian_with_the_first_part_slowest() -> None:
    d = Domain(a=[1, 2]) * Domain(b=["x", "y"]) * Domain(c=True)
    assert d.size == 4
    assert configs(d) == [
        {"a": 1, "b": "x", "c": True},
        {"a": 1, "b": "y", "c": True},
        {"a": 2, "b": "x", "c": True},
        {"a": 2, "b": "y", "c": True},
    ]


def test_product_distributes_over_sums() -> None:
    d = (Domain(a=[1]) + Domain(b=[2, 3])) * Domain(c=[4, 5])
    assert d.size == 6
    assert configs(d) == [
        {"a": 1, "c": 4},
        {"a": 1, "c": 5},
        {"b": 2, "c": 4},
        {"b": 2, "c": 5},
        {"b": 3, "c": 4},
        {"b": 3, "c": 5},
    ]


def test_product_key_clash_the_later_option_wins() -> None:
    d = Domain(a=[1, 2], b=0) * Domain(a=9)
    assert d.size == 2
    assert configs(d) == [{"a": 9, "b": 0}, {"a": 9, "b": 0}]


def test_sum_concatenates_and_each_config_has_only_its_part_keys() -> None:
    d = Domain(a=[1, 2]) + Domain(b=[3]) + Domain(a=[5], c=[6, 7])
    assert d.size == 5 and d.keys() == ["a", "b", "c"]
    assert configs(d) == [{"a": 1}, {"a": 2}, {"b": 3}, {"a": 5, "c": 6}, {"a": 5, "c": 7}]


def test_zip_pairs_configs_element_wise() -> None:
    d = Domain(a=[1, 2, 3]) @ Domain(b=["x", "y", "z"]) @ Domain(c=[True, False, None])
    assert d.size == 3
    assert configs(d) == [
        {"a": 1, "b": "x", "c": True},
        {"a": 2, "b": "y", "c": False},
        {"a": 3, "b": "z", "c": None},
    ]
    grid = Domain(a=[1, 2], b=[3, 4]) @ (Domain(c=[10, 20]) + Domain(d=[30, 40]))
    assert configs(grid) == [
        {"a": 1, "b": 3, "c": 10},
        {"a": 1, "b": 4, "c": 20},
        {"a": 2, "b": 3, "d": 30},
        {"a": 2, "b": 4, "d": 40},
    ]


def test_zip_keeps_sampled_options_of_a_finite_part() -> None:
    d = Domain(a=[1, 2], u=uniform(0, 1)) @ Domain(b=[3, 4])
    out = configs(d, seed=0)
    assert [(c["a"], c["b"]) for c in out] == [(1, 3), (2, 4)]
    assert all(0 <= c["u"] <= 1 for c in out)


def test_zip_of_different_lengths_names_both() -> None:
    with pytest.raises(ConfigError, match=r"got 3 \(left\) and 2 \(right\)"):
        Domain(a=[1, 2, 3]) @ Domain(b=[1, 2])


def test_zip_refuses_infinite_and_weighted_domains() -> None:
    with pytest.raises(ConfigError, match="finite domains, got an infinite right one"):
        Domain(a=[1]) @ Domain(u=uniform(0, 1))
    with pytest.raises(ConfigError, match=r"unweighted domains .* left"):
        (0.5 * Domain(a=[1])) @ Domain(b=[2])


@pytest.mark.parametrize("op", [operator.add, operator.mul, operator.matmul])
def test_non_domain_operands_are_a_type_error(op: Callable[[Any, Any], Any]) -> None:
    d = Domain(a=[1])
    for other in ("x", [1], None, {"a": [1]}):
        with pytest.raises(TypeError):  # Python's message depends on the operands' types
            op(d, other)
        with pytest.raises(TypeError):
            op(other, d)


# ---------------------------------------------------------------- weighted mixtures


def test_mixture_frequencies_follow_the_weights() -> None:
    d = 0.3 * Domain(a=uniform(0, 1)) + 0.7 * Domain(b=uniform(0, 1))
    assert d.size is None
    counts = Counter(next(iter(item.config)) for item in take(d, 20_000, seed=3))
    assert counts["a"] / 20_000 == pytest.approx(0.3, abs=0.015)
    three = Domain(a=randint(0, 5)) * 1 + Domain(b=uniform(0, 1)) * 2 + 7 * Domain(c=choice(1))
    counts = Counter(next(iter(item.config)) for item in take(three, 20_000, seed=4))
    assert counts["a"] / 20_000 == pytest.approx(0.1, abs=0.015)
    assert counts["b"] / 20_000 == pytest.approx(0.2, abs=0.015)


def test_a_finite_part_of_a_mixture_drops_out_once_exhausted() -> None:
    d = 0.9 * Domain(a=[1, 2, 3]) + 0.1 * Domain(u=uniform(0, 1))
    names = [next(iter(item.config)) for item in take(d, 1_000, seed=0)]
    assert names.count("a") == 3 and names.index("a") < 10


def test_weights_need_not_sum_to_one_and_multiply() -> None:
    a, b = Domain(a=uniform(0, 1)), Domain(b=uniform(0, 1))
    draws = [item.config for item in take(3 * a + 7 * b, 50, seed=5)]
    assert draws == [item.config for item in take(0.3 * a + 0.7 * b, 50, seed=5)]
    assert 2 * (3 * a) == 6 * a == a * 6.0
    assert (0.5 * (Domain(x=[1]) + Domain(y=[2])) * (4 * Domain(z=[3]))).describe() == (
        "2 * (x: [1] * z: [3]) + 2 * (y: [2] * z: [3])"
    )


def test_mixture_of_grids_gives_each_config_once_in_a_seeded_random_order() -> None:
    d = 0.5 * Domain(a=list(range(10))) + 0.5 * Domain(b=list(range(10)))
    assert d.size == 20
    out = configs(d, seed=1)
    assert [c["a"] for c in out if "a" in c] == list(range(10))
    assert [c["b"] for c in out if "b" in c] == list(range(10))
    assert out != configs(Domain(a=list(range(10))) + Domain(b=list(range(10))))
    assert out == configs(d, seed=1)


def test_unweighted_parts_split_mixtures_into_blocks() -> None:
    d = Domain(a=[1, 2]) + 1 * Domain(b=[1, 2]) + 1 * Domain(c=[1, 2]) + Domain(e=[1])
    for seed in range(5):
        names = [next(iter(c)) for c in configs(d, seed=seed)]
        assert names[:2] == ["a", "a"] and names[-1] == "e"
        assert sorted(names[2:6]) == ["b", "b", "c", "c"]


@pytest.mark.parametrize("weight", [0, -1, math.inf, math.nan, True])
def test_bad_weights_are_refused(weight: Any) -> None:
    with pytest.raises(ConfigError, match=r"Domain weight must be a (positive finite|real) number"):
        weight * Domain(a=[1])


def test_weight_overflow_is_refused() -> None:
    with pytest.raises(ConfigError, match="positive finite number, got inf"):
        1e200 * (1e200 * Domain(a=[1]))


# ---------------------------------------------------------------- iteration


def pairs(items: list[ConfigItem]) -> list[tuple[int, int]]:
    return [(item.index, item.repetition) for item in items]


def test_n_reps_repeats_the_whole_finite_grid_by_default() -> None:
    items = list(Domain(a=[10, 20, 30]).iterator(n_reps=2))
    assert pairs(items) == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]
    assert [item.config["a"] for item in items] == [10, 20, 30, 10, 20, 30]


def test_repeat_each_makes_blocks_and_the_last_may_be_shorter() -> None:
    items = list(Domain(a=list(range(5))).iterator(n_reps=2, repeat_each=2))
    assert pairs(items) == [
        (0, 0), (1, 0), (0, 1), (1, 1),
        (2, 0), (3, 0), (2, 1), (3, 1),
        (4, 0), (4, 1),
    ]  # fmt: skip
    assert [item.config["a"] for item in items] == [0, 1, 0, 1, 2, 3, 2, 3, 4, 4]


def test_n_configs_takes_a_prefix_or_starts_the_grid_over() -> None:
    d = Domain(a=[1, 2, 3])
    assert [c["a"] for c in configs(d, n_configs=2)] == [1, 2]
    items = list(d.iterator(n_configs=5))
    assert [item.config["a"] for item in items] == [1, 2, 3, 1, 2]
    assert [item.index for item in items] == [0, 1, 2, 3, 4]


def test_infinite_domain_is_endless_with_blocks_of_100_by_default() -> None:
    items = take(Domain(u=uniform(0, 1)), 450, n_reps=2, seed=0)
    assert pairs(items[:200]) == [(i, 0) for i in range(100)] + [(i, 1) for i in range(100)]
    assert pairs(items[200:202]) == [(100, 0), (101, 0)]
    assert [i.config for i in items[:100]] == [i.config for i in items[100:200]]
    bounded = list(Domain(u=uniform(0, 1)).iterator(n_configs=3, n_reps=2, seed=0))
    assert pairs(bounded) == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]


def test_repetitions_share_values_but_not_dicts() -> None:
    first, second = Domain(u=uniform(0, 1)).iterator(n_configs=1, n_reps=2, seed=0)
    assert first.config == second.config and first.alias == second.alias
    first.config["u"] = "changed"
    assert second.config["u"] != "changed"


def test_a_sampled_alias_is_a_copy_of_the_value() -> None:
    (item,) = Domain(layer=choice({"_name": "conv", "k": randint(1, 3)})).iterator(n_configs=1)
    assert item.alias == item.config and item.config["layer"]["_name"] == "conv"
    item.config["layer"]["k"] = 99
    assert item.alias["layer"]["k"] in (1, 2)


def test_sampling_is_deterministic_per_seed() -> None:
    d = Domain(lr=loguniform(1e-4, 1e-1), opt=choice("sgd", "adam")) * Domain(n=[1, 2])
    d = d + 0.5 * Domain(u=uniform(0, 1)) + 0.5 * Domain(v=uniform(0, 1))
    assert d.size is None
    a, b = take(d, 40, seed=11), take(d, 40, seed=np.random.SeedSequence(11))
    assert [i.config for i in a] == [i.config for i in b]
    assert [i.config for i in a] != [i.config for i in take(d, 40, seed=12)]


def test_distributions_are_sampled_within_bounds_for_each_config() -> None:
    d = Domain(n=[1, 2, 3, 4], lr=loguniform(1e-4, 1e-1), k=randint(2, 5), w=uniform(-1, 1))
    assert d.size == 4
    out = configs(d, n_configs=400, seed=2)
    assert all(1e-4 <= c["lr"] <= 1e-1 and -1 <= c["w"] <= 1 for c in out)
    assert {c["k"] for c in out} == {2, 3, 4}
    assert len({c["w"] for c in out}) == 400


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_reps": 0}, "n_reps to be a positive int, got 0"),
        ({"n_reps": -2}, "n_reps to be a positive int, got -2"),
        ({"n_reps": 1.5}, "n_reps to be a positive int, got 1.5"),
        ({"n_reps": True}, "n_reps to be a positive int, got True"),
        ({"n_reps": None}, "n_reps to be a positive int, got None"),
        ({"n_configs": 0}, "n_configs to be a positive int or None, got 0"),
        ({"repeat_each": 0}, "repeat_each to be a positive int or None, got 0"),
        ({"repeat_each": "2"}, "repeat_each to be a positive int or None, got '2'"),
        ({"seed": -1}, "seed to be an int >= 0, a SeedSequence or None, got -1"),
        ({"seed": "x"}, "seed to be an int >= 0, a SeedSequence or None, got 'x'"),
    ],
)
def test_bad_iteration_parameters_are_refused(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        Domain(a=[1]).iterator(**kwargs)


# ---------------------------------------------------------------- sizes and descriptions


def test_sizes() -> None:
    grid = Domain(a=[1, 2, 3], b=[1, 2])
    assert len(grid) == grid.size == 6
    assert (grid + Domain(c=[1])).size == 7
    assert (grid * Domain(c=[1, 2])).size == 12
    assert (Domain(a=[1, 2]) @ Domain(b=[3, 4])).size == 2
    assert (0.2 * grid + 0.8 * Domain(c=[1, 2])).size == 8
    assert Domain(a=[1, 2], u=uniform(0, 1)).size == 2
    infinite = grid + Domain(u=uniform(0, 1))
    assert infinite.size is None and bool(infinite)
    with pytest.raises(TypeError, match="infinite Domain has no len"):
        len(infinite)


def test_describe_is_a_readable_string() -> None:
    d = Domain(lr=[0.1, 0.01], opt=["adam", Alias(Model, "m")]) * Domain(act=relu)
    d = d + 0.5 * Domain(u=uniform(0, 1))
    text = d.describe()
    assert text == ("lr: [0.1, 0.01] * opt: ['adam', m] * act: [relu] + 0.5 * u: uniform(0, 1)")
    assert json.loads(json.dumps(text)) == text and repr(d) == f"Domain({text})"
    assert Domain().describe() == ""


# ---------------------------------------------------------------- aliases


def test_default_aliases() -> None:
    class Opaque:
        pass

    class Long:
        def __repr__(self) -> str:
            return "Long(" + "x" * 60 + ")"

    values = [Model, relu, len, 0.5, 3, "s", True, None, np.float64(0.25), Opaque(), Long(), [1, 2]]
    (item,) = Domain(v=Alias.of({"nb": Model})).iterator()
    assert item.alias == {"v": "nb"} and item.config == {"v": Model}
    aliases = [item.alias["v"] for item in Domain(v=values).iterator()]
    assert aliases == [
        "Model", "relu", "len", 0.5, 3, "s", True, None, 0.25, "Opaque", "Long(" + "x" * 32 + "...",
        "[1, 2]",
    ]  # fmt: skip
    assert type(aliases[8]) is float
    assert json.loads(json.dumps(aliases)) == aliases


def test_key_is_sorted_name_alias_pairs() -> None:
    items = list(Domain(lr=[0.1], layers=[2], model=Alias(Model, "m")).iterator(n_reps=2))
    assert [item.key for item in items] == ["layers_2-lr_0.1-model_m"] * 2


def test_alias_wraps_any_value() -> None:
    fn = Alias(lambda x: x, "identity")
    assert Alias(fn).alias == "identity" and Alias(fn, "id").alias == "id"
    assert Alias(fn).value is fn.value
    assert [a.alias for a in Alias.of({"sgd": Model, "relu": relu})] == ["sgd", "relu"]
    for bad in ("", 3, None.__class__):
        with pytest.raises(ConfigError, match="Alias needs alias to be a non-empty string"):
            Alias(1, bad)  # type: ignore[arg-type]


def test_resolve_round_trips_stored_aliases() -> None:
    d = Domain(model=[Model, Alias(relu, "r"), "adam", None, 1, 1.0, True], lr=[0.1])
    d = d + Domain(lr=loguniform(1e-3, 1e-1), depth=choice([1, 2], [3]))
    items = take(d, 20, seed=0)
    for item in items:
        stored = json.loads(json.dumps(item.alias))
        assert d.resolve_config(stored) == item.config
        assert all(type(d.resolve(k, v)) is type(item.config[k]) for k, v in stored.items())
    assert d.resolve("model", "r") is relu and d.resolve("model", "Model") is Model
    assert d.resolve("lr", 0.05) == 0.05  # a sampled option's alias is its value
    table = d.values_by_alias()
    assert list(table) == ["model", "lr"]
    assert [(a.alias, a.value) for a in table["model"]] == [
        ("Model", Model), ("r", relu), ("adam", "adam"), (None, None), (1, 1), (1.0, 1.0),
        (True, True),
    ]  # fmt: skip
    assert [type(a.alias) for a in table["model"][-3:]] == [int, float, bool]
    assert [(a.alias, a.value) for a in table["lr"]] == [(0.1, 0.1)]
    assert d.distributions() == {"lr": loguniform(1e-3, 1e-1), "depth": choice([1, 2], [3])}


def test_resolve_errors_name_the_option_and_alias() -> None:
    d = Domain(model=[Model], lr=uniform(0, 1))
    with pytest.raises(ConfigError, match=r"no option 'opt'; its options are \['model', 'lr'\]"):
        d.resolve("opt", "x")
    with pytest.raises(ConfigError, match=r"'model' has no value with alias 'M'.*\['Model'\]"):
        d.resolve("model", "M")


def test_two_values_with_one_alias_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"'f' has two different values with alias '<lambda>'"):
        Domain(f=[lambda x: x, lambda x: -x])
    with pytest.raises(ConfigError, match=r"alias 'm': .*Model.* and .*relu"):
        Domain(f=[Alias(Model, "m")]) + Domain(f=Alias(relu, "m"))
    same = Domain(a=[Model, 1]) + Domain(a=[Model, 1.0, True])
    assert same.resolve("a", 1.0) == 1.0 and same.resolve("a", True) is True
