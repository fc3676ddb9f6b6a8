"""A failed function trial's stored error names the user's own file and line, in every local
executor (the ``processes`` one pickles the objective by value, as it does one from
``__main__``), and leaves hyperlab's own frames out: what ``hyperlab logs`` and the dashboard
show."""

from __future__ import annotations

import runpy
import textwrap

import pytest

import hyperlab
from hyperlab.cli import main as cli_main

USER_CODE = textwrap.dedent(
    """\
    import math


    def helper(x):
        return math.sqrt(-1.0 - x)


    def objective(params):
        return helper(params["x"])
    """
)
RAISING_LINE = 5  # the line of USER_CODE that raises
CALLING_LINE = 9


@pytest.mark.parametrize("executor", ["processes", "threads", "inprocess"])
def test_a_failed_trials_error_names_the_users_file_and_line(executor, tmp_path, capsys):
    path = tmp_path / "user_objectives.py"
    path.write_text(USER_CODE)
    # a module not importable by name, so cloudpickle pickles its functions by value
    objective = runpy.run_path(str(path), run_name="user_objectives")["objective"]
    storage = str(tmp_path / "runs.db")
    with pytest.raises(hyperlab.TrialError) as failed:
        hyperlab.run(
            objective,
            {"x": hyperlab.uniform(0, 1)},
            max_trials=1,
            executor=executor,
            storage=storage,
            progress=False,
        )
    experiment_id = failed.value.result.experiment_id
    error = hyperlab.load(experiment_id, storage=storage).trials[0].error
    assert f'File "{path}", line {RAISING_LINE}, in helper' in error
    assert f'File "{path}", line {CALLING_LINE}, in objective' in error
    assert "return math.sqrt(-1.0 - x)" in error  # the line's source is shown
    assert "<dynamic-code>" not in error
    assert "hyperlab" not in error.replace(str(tmp_path), "")  # no frame of hyperlab's own
    assert error.startswith("Traceback (most recent call last):")
    assert error.endswith("ValueError: math domain error")
    capsys.readouterr()
    assert cli_main(["--storage", storage, "logs", experiment_id, "0", "--stderr"]) == 0
    assert f'File "{path}", line {RAISING_LINE}, in helper' in capsys.readouterr().out


def test_hyperlabs_frames_below_the_users_stay_and_so_do_all_when_none_is_the_users(tmp_path):
    def takes_too_many(a, b, c):  # hyperlab cannot call it: every frame is hyperlab's
        return a

    def calls_hyperlab_wrongly(params):
        return hyperlab.uniform(1, 0)  # hyperlab raises, in a frame below the user's

    errors = []
    for objective in (calls_hyperlab_wrongly, takes_too_many):
        with pytest.raises(hyperlab.TrialError) as failed:
            hyperlab.run(
                objective,
                {"x": hyperlab.uniform(0, 1)},
                max_trials=1,
                executor="inprocess",
                storage=str(tmp_path / "runs.db"),
                progress=False,
            )
        errors.append(failed.value.result.failed_trials[0].error)
    user, internal = errors
    assert user.index("in calls_hyperlab_wrongly") < user.index("hyperlab/space")
    assert "hyperlab/executors/_run.py" not in user
    assert "hyperlab/executors/_run.py" in internal
