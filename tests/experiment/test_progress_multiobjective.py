"""Progress of an experiment with several objectives: its lines show the size of the Pareto
front so far (``front N``) in place of a best value, counted as ``hyperlab.pareto`` counts it."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

import hyperlab
from hyperlab.experiment._progress import FrontSize
from hyperlab.pareto import pareto_front
from hyperlab.trial import Mode, Trial, TrialStatus

MODES = (Mode.MIN, Mode.MAX)

small = st.integers(-2, 2).map(float)
specs = st.lists(
    st.tuples(
        st.sampled_from([TrialStatus.SUCCEEDED, TrialStatus.SUCCEEDED, TrialStatus.FAILED]),
        st.tuples(small, small),
        st.none() | st.tuples(small),
    ),
    max_size=30,
)


@given(specs=specs)
def test_the_front_size_grows_as_hyperlab_pareto_counts_the_front(specs):
    trials = [
        Trial("e", n, {}, status, value=values[0], values=values, constraints=constraints)
        for n, (status, values, constraints) in enumerate(specs)
    ]
    front = FrontSize(MODES)
    for seen, trial in enumerate(trials, start=1):
        front.add(trial)
        assert len(front) == len(pareto_front(trials[:seen], MODES))


def _objective(params):
    return {"a": params["x"], "b": params["x"] ** 2, "c": params["x"]}


def test_progress_lines_of_a_multi_objective_run_show_the_front_size(capsys):
    result = hyperlab.run(
        _objective,
        {"x": hyperlab.uniform(-1, 1)},
        metric=["a", "b"],
        mode=["min", "min"],
        constraints=["c <= 0.5"],
        tuner="random",
        max_trials=15,
        storage=":memory:",
        progress=1e-9,  # a line at every turn of the driver's loop
        seed=2,
    )
    lines = capsys.readouterr().err.splitlines()
    counted = [re.search(r"failed, (front \d+|best .*?), \d+m", line) for line in lines]
    shown = [m.group(1) for m in counted if m is not None]
    assert shown and all(s.startswith("front ") for s in shown), lines
    assert shown[-1] == f"front {len(result.best_trials)}"
