"""Ray Tune's example scripts, read from the installed ray wheel at test time, run on hyperlab
with only their import lines rewritten (``ray_examples.py``), each shrunk by its own
``--smoke-test`` flag; those that run must also run as shipped with ``python -m
hyperlab.compat.ray``. ``EXPECTED`` records what each does today; a script recorded as running
that stops running fails its test, and so does one that starts running while recorded as
refused (record it then, and update "What runs unchanged" in docs/migrating.md). Scripts that
need a library not installed here (torch, tensorflow...) skip, naming it.

With ``HYPERLAB_CORPUS_REAL_RAY=1`` the scripts that run are also run as shipped, with Ray
itself (minutes each: Ray starts a local cluster), and the table says whether both ran and
printed a best config with the same keys; otherwise "agrees" stays unasked ("-").
"""

from __future__ import annotations

import importlib.util
import os

import pytest

from tests.compat.corpus.ray_examples import (
    UNCHANGED,
    WITH_RAY,
    best_config,
    examples_folder,
    run_example,
)
from tests.compat.corpus.table import record

pytestmark = pytest.mark.slow

RUNS = "runs"
# script -> "runs" | "refused: <what its error line says>" | "needs: <module>"
EXPECTED: dict[str, str] = {
    "async_hyperband_example.py": RUNS,
    "ax_example.py": "refused: AxSearch has no hyperlab equivalent",
    "bayesopt_example.py": RUNS,
    "bohb_example.py": "refused: No module named 'hyperlab.compat.ray.tune.schedulers.hb_bohb'",
    "cifar10_pytorch.py": "needs: torch",
    "custom_checkpointing_with_callback.py": "refused: tune.Callback has no hyperlab equivalent",
    "custom_func_checkpointing.py": RUNS,
    "hyperband_example.py": "refused: No module named 'hyperlab.compat.ray.tune.utils'",
    "hyperband_function_example.py": RUNS,
    "hyperopt_conditional_search_space_example.py": "needs: hyperopt",
    "lightgbm_example.py": "needs: lightgbm",
    "logging_example.py": "refused: No module named 'hyperlab.compat.ray.tune.logger'",
    "mlflow_example.py": "needs: mlflow",
    "mlflow_ptl.py": "needs: lightning",
    "mnist_ptl_mini.py": "needs: lightning",
    "mnist_pytorch.py": "needs: torch",
    "mnist_pytorch_trainable.py": "needs: torch",
    "nevergrad_example.py": "refused: NevergradSearch has no hyperlab equivalent",
    "optuna_define_by_run_example.py": "refused: OptunaSearch(space=<function",
    "optuna_example.py": RUNS,
    "optuna_multiobjective_example.py": "refused: multi-objective search has no hyperlab",
    "pb2_example.py": "refused: PB2 has no hyperlab equivalent",
    "pb2_ppo_example.py": "refused: PB2 has no hyperlab equivalent",
    "pbt_convnet_example.py": "needs: torch",
    "pbt_convnet_function_example.py": "needs: torch",
    "pbt_example.py": "refused: PopulationBasedTraining(hyperparam_mutations={'lr': <function",
    "pbt_function.py": RUNS,
    "pbt_memnn_example.py": "needs: tensorflow",
    "pbt_ppo_example.py": "refused: No module named 'hyperlab.compat.ray.rllib'",
    "pbt_tune_cifar10_with_keras.py": "needs: tensorflow",
    "tf_mnist_example.py": "needs: tensorflow",
    "tune_basic_example.py": RUNS,
    "tune_mnist_keras.py": "needs: tensorflow",
    "xgboost_dynamic_resources_example.py": "needs: xgboost",
    "xgboost_example.py": "needs: xgboost",
}
REAL_RAY_TIMEOUT = 600.0  # Ray's own start takes minutes on two busy cores
NOT_SCRIPTS = {"__init__.py", "utils.py"}  # modules the examples import, with no main


def test_every_shipped_example_is_recorded():
    """A ray upgrade that adds or removes an example shows here, naming it."""
    folder = examples_folder()
    if folder is None:
        pytest.skip("ray is not installed: its examples are read from the installed wheel")
    shipped = {path.name for path in folder.glob("*.py")} - NOT_SCRIPTS
    assert shipped == set(EXPECTED), (
        f"not recorded: {sorted(shipped - set(EXPECTED))}; "
        f"no longer shipped: {sorted(set(EXPECTED) - shipped)}"
    )


@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_a_ray_tune_example_runs_as_recorded(script, tmp_path, request):
    if examples_folder() is None:
        pytest.skip("ray is not installed: its examples are read from the installed wheel")
    expected = EXPECTED[script]
    kind, _, detail = expected.partition(": ")
    if kind == "needs" and importlib.util.find_spec(detail) is None:
        record(request.config, "ray", script, ran=None, agrees=None, note=f"needs {detail}")
        pytest.skip(f"needs {detail}, not installed")
    outcome = run_example(script, tmp_path / "hyperlab")
    agrees, note = None, outcome.error or f"{outcome.seconds:.1f} s"
    unchanged = None
    if kind == RUNS and outcome.ran:  # and not a line changed, with python -m hyperlab.compat.ray
        unchanged = run_example(script, tmp_path / "unchanged", how=UNCHANGED)
        note += f"; as shipped, with -m hyperlab.compat.ray: {unchanged.error or 'ran'}"
    if kind == RUNS and outcome.ran and os.environ.get("HYPERLAB_CORPUS_REAL_RAY") == "1":
        with_ray = run_example(script, tmp_path / "ray", REAL_RAY_TIMEOUT, how=WITH_RAY)
        ours, theirs = best_config(outcome.output), best_config(with_ray.output)
        agrees = (
            with_ray.ran and ours is not None and theirs is not None and (set(ours) == set(theirs))
        )
        note += f"; with Ray: {with_ray.error or 'ran'}, best config keys {sorted(theirs or {})}"
    record(request.config, "ray", script, ran=outcome.ran, agrees=agrees, note=note)
    if kind == "needs" and not outcome.ran:  # installed here, but never seen running
        pytest.xfail(f"{script} (needs {detail}) fails: {outcome.error}")
    if kind == RUNS:
        assert outcome.ran, f"{script} ran before and fails now: {outcome.output[-3000:]}"
        assert agrees is not False, f"{script} disagrees with Ray: {note}"
        assert unchanged is not None and unchanged.ran, (
            f"{script} runs with its imports rewritten, not unchanged with "
            f"python -m hyperlab.compat.ray: {unchanged and unchanged.output[-3000:]}"
        )
    elif kind == "refused":
        assert not outcome.ran, (
            f"{script} now runs unchanged: record it as 'runs' in EXPECTED and update the "
            "counts of 'What runs unchanged' in docs/migrating.md"
        )
        assert detail in outcome.error, (
            f"{script} fails otherwise than recorded ({expected!r}): {outcome.error}"
        )
