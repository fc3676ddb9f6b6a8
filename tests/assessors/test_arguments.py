"""Bad assessor names and arguments are refused with a ConfigError that names them, when the
experiment is made (before anything runs)."""

from __future__ import annotations

import pytest

import hyperlab
from hyperlab.assessors import ASHA, assessor_names, create_assessor
from hyperlab.errors import ConfigError


def make(name: str, **args):
    return create_assessor(name, mode="min", metric=None, seed=0, args=args)


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(ConfigError) as info:
        make("medain")
    message = str(info.value)
    assert "'medain'" in message
    for known in ("median", "curvefit", "asha", "Medianstop", "Curvefitting"):
        assert known in message
    assert {"median", "curvefit", "asha", "Medianstop", "Curvefitting"} <= set(assessor_names())


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("median", {"start": 2}, r"does not accept 'start'; its arguments are: start_step"),
        ("median", {"start_step": "two"}, r"start_step: .*integer.*'two'"),
        ("median", {"start_step": -1}, r"`start_step >= 0` must hold, got start_step=-1"),
        ("median", {"mode": "max"}, r"does not accept 'mode'"),  # the experiment's mode
        ("curvefit", {}, r"epoch_num: field required"),
        ("curvefit", {"epoch_num": 0}, r"`epoch_num >= 1` must hold, got epoch_num=0"),
        ("curvefit", {"epoch_num": 9, "gap": 0}, r"`gap >= 1` must hold, got gap=0"),
        ("curvefit", {"epoch_num": 9, "threshold": 0}, r"`threshold > 0` must hold"),
        ("Curvefitting", {"epoch_num": 9, "treshold": 0.9}, r"does not accept 'treshold'"),
        ("asha", {"eta": 3}, r"does not accept 'eta'.*reduction_factor"),
        (
            "asha",
            {"min_resource": 9, "max_resource": 3},
            r"`min_resource < max_resource` must hold, got min_resource=9.0, max_resource=3.0",
        ),
        (
            "asha",
            {"min_resource": 3, "max_resource": 3},
            r"`min_resource < max_resource` must hold, got min_resource=3.0, max_resource=3.0",
        ),
        (
            "asha",
            {"reduction_factor": 1},
            r"`reduction_factor >= 2` must hold, got reduction_factor=1",
        ),
        ("asha", {"reduction_factor": 2.5}, r"reduction_factor: .*integer.*2.5"),
        ("asha", {"min_resource": 0}, r"`min_resource > 0` must hold, got min_resource=0"),
        ("asha", {"max_resource": -5}, r"`max_resource > 0` must hold, got max_resource=-5"),
        ("asha", {"variant": "promote"}, r"variant: .*'stop' or 'promotion'.*'promote'"),
        ("asha", {"variant": "promotion"}, r"variant='promotion' needs max_resource"),
        ("asha", {"mode": "promotion"}, r"variant='promotion' needs max_resource"),
    ],
)
def test_bad_arguments_are_named_with_their_values(name, args, message):
    with pytest.raises(ConfigError, match=message):
        make(name, **args)


def test_bad_arguments_stop_an_experiment_before_it_starts():
    with pytest.raises(ConfigError, match="min_resource < max_resource"):
        hyperlab.Experiment(
            lambda params: 0.0,
            {"x": hyperlab.uniform(0, 1)},
            assessor="asha",
            assessor_args={"min_resource": 10, "max_resource": 5},
            storage=":memory:",
        )
    with pytest.raises(ConfigError, match="unknown assessor 'nope'"):
        hyperlab.Experiment(
            lambda params: 0.0, {"x": hyperlab.uniform(0, 1)}, assessor="nope", storage=":memory:"
        )


def test_valid_arguments_are_converted_to_their_types():
    asha = make("asha", min_resource="1", max_resource="27", reduction_factor="3")
    assert isinstance(asha, ASHA)
    assert (asha.min_resource, asha.max_resource, asha.reduction_factor) == (1.0, 27.0, 3)
    assert asha.variant == "stop" and asha.n_rungs == 3


def test_asha_takes_mode_promotion_as_the_variant():
    asha = create_assessor(
        "asha",
        mode="max",
        metric=None,
        seed=0,
        args={"mode": "promotion", "max_resource": 9},
    )
    assert asha.variant == "promotion" and asha.mode.value == "max"


@pytest.mark.parametrize("given", [3, int, object()])
def test_an_assessor_that_is_no_name_nor_class_is_named_in_the_error(given):
    with pytest.raises(ConfigError, match=r"^assessor: expected a registered name, an Assessor"):
        hyperlab.run(
            lambda params: params["x"],
            {"x": hyperlab.uniform(0, 1)},
            max_trials=1,
            assessor=given,
            storage=":memory:",
            progress=False,
        )
