"""Ray Tune's search primitives translated into hyperlab parameters: the values a trainable
gets are the ones Ray would give (bounds, exclusive ends, ints, log scales, quantization,
objects), and what cannot be a tuner's distribution is refused by name."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from hyperlab.compat.ray import tune
from hyperlab.compat.ray.tune._space import translate
from hyperlab.errors import SearchSpaceError
from hyperlab.space import SearchSpace


def draws(domain, n=3000):
    """``n`` values the trainable would get for ``{"x": domain}``."""
    template = translate({"x": domain})
    space = SearchSpace(template.space())
    return [template.resolve(p)["x"] for p in space.sample(np.random.default_rng(0), n)]


def test_randint_excludes_its_upper_bound_and_gives_ints():
    values = draws(tune.randint(0, 3))
    assert set(values) == {0, 1, 2}
    assert all(type(v) is int for v in values)


@pytest.mark.parametrize(
    ("domain", "expected"),
    [
        (tune.qrandint(0, 10, 5), {0, 5, 10}),  # q > 1: both bounds included
        (tune.qrandint(1, 10, 3), {3, 6, 9}),  # multiples of q inside the bounds
        (tune.qrandint(0, 4, 1), {0, 1, 2, 3}),  # q == 1: upper bound excluded
    ],
)
def test_qrandint_draws_multiples_of_q_uniformly(domain, expected):
    counts = Counter(draws(domain))
    assert set(counts) == expected
    assert all(type(v) is int for v in counts)
    share = 3000 / len(expected)
    assert all(0.85 * share < n < 1.15 * share for n in counts.values())


def test_lograndint_is_log_scaled_and_excludes_its_upper_bound():
    counts = Counter(draws(tune.lograndint(1, 4)))
    assert set(counts) == {1, 2, 3}
    assert counts[1] > counts[2] > counts[3]
    assert all(type(v) is int for v in counts)


def test_qlograndint_draws_multiples_of_q_on_a_log_scale():
    counts = Counter(draws(tune.qlograndint(1, 100, 10)))
    assert set(counts) == set(range(10, 101, 10))
    assert counts[10] > counts[50] > counts[100]


def test_quniform_and_qloguniform_round_inside_the_bounds_as_floats():
    assert set(draws(tune.quniform(1, 10, 3))) == {3.0, 6.0, 9.0}
    values = draws(tune.qloguniform(1, 100, 5))
    assert all(isinstance(v, float) and v % 5 == 0 and 5 <= v <= 100 for v in values)


def test_uniform_loguniform_and_randn_keep_their_distributions():
    uniform = draws(tune.uniform(-1, 1))
    assert min(uniform) >= -1 and max(uniform) <= 1 and abs(np.mean(uniform)) < 0.05
    log = draws(tune.loguniform(1e-4, 1e-0))
    assert abs(math.log10(np.median(log)) + 2) < 0.1  # log-uniform: median 10**-2
    normal = draws(tune.randn(3, 2))
    assert abs(np.mean(normal) - 3) < 0.15 and abs(np.std(normal) - 2) < 0.15
    assert all(v % 0.5 == 0 for v in draws(tune.qrandn(0, 1, 0.5)))


def test_choice_gives_back_the_objects_listed():
    class Relu:
        pass

    options = [(16, 16), Relu, None, "adam"]
    values = draws(tune.choice(options), n=200)
    assert {id(v) for v in values if v is Relu} == {id(Relu)}
    assert (16, 16) in values and all(v != [16, 16] for v in values)
    assert set(map(repr, values)) == set(map(repr, options))


def test_a_nested_param_space_comes_back_nested_with_its_constants():
    data = np.arange(3)
    template = translate(
        {
            "model": {"lr": tune.loguniform(1e-4, 1e-1), "layers": [tune.randint(1, 4), 8]},
            "data": data,
            "name": "run",
        }
    )
    assert sorted(template.space()) == ["model/layers/0", "model/lr"]
    config = template.resolve({"model/lr": 0.01, "model/layers/0": 2})
    assert config["model"] == {"lr": 0.01, "layers": [2, 8]}
    assert config["name"] == "run"
    assert np.array_equal(config["data"], data) and config["data"] is not data  # a copy


def test_choice_options_holding_primitives_are_nested_choices():
    template = translate(
        {"opt": tune.choice([{"kind": "sgd", "momentum": tune.uniform(0, 1)}, {"kind": "adam"}])}
    )
    space = SearchSpace(template.space())
    configs = [template.resolve(p)["opt"] for p in space.sample(np.random.default_rng(1), 50)]
    sgd = [c for c in configs if c["kind"] == "sgd"]
    assert sgd and all(0 <= c["momentum"] <= 1 for c in sgd)
    assert {"kind": "adam"} in configs


def test_grid_search_is_marked_for_the_grid():
    template = translate({"a": tune.grid_search([1, 2, 3]), "b": {"grid_search": ["x", "y"]}})
    assert template.grid() == ["a", "b"]
    assert template.grid_size() == 6


def test_sample_from_computes_a_value_from_the_rest_of_the_config():
    template = translate(
        {
            "model": {"width": tune.choice([8, 16]), "depth": 2},
            "units": tune.sample_from(lambda spec: spec.config.model.width * 2),
            "both": tune.sample_from(lambda spec: spec["config"]["units"] + spec.config.lr),
            "lr": tune.uniform(0, 1),
        }
    )
    assert set(template.space()) == {"model/width", "lr"}  # not searched: computed
    config = template.resolve({"model/width": 16, "lr": 0.5})
    assert config == {"model": {"width": 16, "depth": 2}, "units": 32, "both": 32.5, "lr": 0.5}


def test_sample_from_draws_are_the_trials_own_whenever_its_config_is_built():
    import random

    import numpy as np

    template = translate(
        {"a": tune.sample_from(lambda: np.random.uniform()), "b": tune.sample_from(random.random)}
    )
    before = np.random.get_state()[1].copy(), random.getstate()
    first, again, other = (template.resolve({}, seed) for seed in (7, 7, 8))
    assert first == again and first["a"] != other["a"] and first["b"] != other["b"]
    assert first["a"] != first["b"]
    assert (np.random.get_state()[1] == before[0]).all() and random.getstate() == before[1]


def test_sample_from_functions_waiting_for_each_other_are_named():
    template = translate(
        {
            "a": tune.sample_from(lambda spec: spec.config.b),
            "b": tune.sample_from(lambda spec: spec.config.a),
            "c": 1,
        }
    )
    with pytest.raises(SearchSpaceError, match=r"param_space: a, b: these tune\.sample_from"):
        template.resolve({})


def test_a_failing_sample_from_names_its_parameter():
    template = translate({"opt": {"lr": tune.sample_from(lambda spec: spec.config.missing)}})
    with pytest.raises(RuntimeError, match=r"param_space: opt/lr: .* raised AttributeError"):
        template.resolve({})


def test_sample_from_takes_a_function_of_zero_or_one_argument():
    with pytest.raises(TypeError, match="must take 0 or 1 arguments"):
        tune.sample_from(lambda a, b: a)
    with pytest.raises(TypeError, match="expected a function"):
        tune.sample_from(3)


def test_bad_bounds_name_the_parameter():
    with pytest.raises(SearchSpaceError, match=r"param_space: opt/lr: tune\.uniform\(1, 0\)"):
        translate({"opt": {"lr": tune.uniform(1, 0)}})
    with pytest.raises(SearchSpaceError, match="no multiple of q=5"):
        translate({"k": tune.qrandint(1, 4, 5)})
