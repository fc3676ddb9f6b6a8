"""``hyperlab import-optuna``: a real Optuna study in a SQLite file becomes a new experiment whose
imported results are the study's complete trials, in a search space translated from the study's
distributions; bad input is refused with nothing written."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import hyperlab
from hyperlab.cli import main
from hyperlab.space import SearchSpace
from hyperlab.store import Store
from hyperlab.trial import ExperimentStatus, Mode, TrialStatus

N_TRIALS = 20


@pytest.fixture(scope="module")
def optuna() -> ModuleType:
    module = pytest.importorskip("optuna", reason="Optuna itself is not installed")
    module.logging.set_verbosity(module.logging.ERROR)
    return module


def objective(trial: Any) -> float:
    """Every kind of distribution; trials 1, 5, 9... pruned, 3, 8, 13... failed."""
    x = trial.suggest_float("x", -1.0, 1.0)
    lr = trial.suggest_float("lr", 1e-4, 1e-1, log=True)
    q = trial.suggest_float("q", 0.0, 1.0, step=0.25)
    shifted = trial.suggest_float("shifted", 0.05, 0.95, step=0.1)  # low not a multiple
    n = trial.suggest_int("n", 1, 10)
    width = trial.suggest_int("width", 16, 128, step=16)
    odd = trial.suggest_int("odd", 1, 9, step=2)
    units = trial.suggest_int("units", 8, 256, log=True)
    optimizer = trial.suggest_categorical("optimizer", ["adam", "sgd", None])
    value = x**2 + math.log10(lr) ** 2 / 10 + q + shifted + n / 10 + width / 100 + odd + units
    value += 0.5 if optimizer == "sgd" else 0.0
    if trial.number % 5 == 3:
        raise ValueError("a failing trial")
    trial.report(value, 0)
    if trial.number % 4 == 1:
        raise sys.modules["optuna"].TrialPruned()
    return value


@pytest.fixture(scope="module")
def study_url(optuna: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A study 'demo' (maximize) of N_TRIALS trials, some pruned, some failed, in a SQLite
    file, with a multi-objective study 'pareto' and a study 'hopeless' whose trials all fail
    beside it (made once: the tests only read it)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('optuna') / 'optuna.db'}"
    study = optuna.create_study(
        study_name="demo",
        storage=url,
        direction="maximize",
        sampler=optuna.samplers.RandomSampler(seed=0),
    )
    study.optimize(objective, n_trials=N_TRIALS, catch=(ValueError,))
    pareto = optuna.create_study(study_name="pareto", storage=url, directions=["minimize"] * 2)
    pareto.optimize(lambda t: (t.suggest_float("a", 0, 1), 1.0), n_trials=2)
    hopeless = optuna.create_study(study_name="hopeless", storage=url)
    hopeless.optimize(_fails, n_trials=2, catch=(ValueError,))
    return url


def _fails(trial: Any) -> float:
    trial.suggest_float("a", 0.0, 1.0)
    raise ValueError("always")


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_study_becomes_an_experiment_of_imported_results(
    optuna: ModuleType, study_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = f"sqlite:///{tmp_path / 'hyperlab.db'}"
    code, out, err = run_cli(
        capsys, "--storage", storage, "import-optuna", study_url, "--study", "demo"
    )
    assert code == 0, err
    study = optuna.load_study(study_name="demo", storage=study_url)
    states = [t.state.name for t in study.trials]
    complete = [t for t in study.trials if t.state.name == "COMPLETE"]
    pruned, failed = states.count("PRUNED"), states.count("FAIL")
    assert len(complete) + pruned + failed == N_TRIALS and pruned and failed
    assert f"imported {len(complete)} complete trials of Optuna study 'demo'" in out
    assert f"skipped: {failed} failed, {pruned} pruned" in out

    result = hyperlab.load("demo", storage=storage)
    assert result.status is ExperimentStatus.INITIALIZED
    assert (result.mode, result.metric) == (Mode.MAX, "value")
    assert result.trials == []
    store = Store.open(storage)
    record = store.get_experiment(result.experiment_id)
    assert record.name == "demo" and record.objective is None
    assert record.space == {
        "x": {"_type": "uniform", "_value": [-1.0, 1.0]},
        "lr": {"_type": "loguniform", "_value": [1e-4, 1e-1]},
        "q": {"_type": "quniform", "_value": [0.0, 1.0, 0.25]},
        "shifted": {
            "_type": "choice",
            "_value": [0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95],
        },
        "n": {"_type": "randint", "_value": [1, 11]},  # NNI's upper bound is excluded
        "width": {"_type": "quniform", "_value": [16, 128, 16]},
        "odd": {"_type": "choice", "_value": [1, 3, 5, 7, 9]},
        "units": {"_type": "qloguniform", "_value": [8, 256, 1]},
        "optimizer": {"_type": "choice", "_value": ["adam", "sgd", None]},
    }
    imported = store.get_imported(record.id)
    assert [row.value for row in imported] == [t.value for t in complete]
    space = SearchSpace.from_nni(record.space)
    for row, trial in zip(imported, complete, strict=True):
        space.check(row.params)
        for name, value in trial.params.items():
            assert row.params[name] == pytest.approx(value, abs=1e-12), name

    code, out, _ = run_cli(capsys, "--storage", storage, "show", "demo")
    assert code == 0
    assert f"{len(complete)} results (fed to the tuner)" in out
    assert "value (max)" in out and "Optuna study 'demo'" in out
    code, out, _ = run_cli(capsys, "--storage", storage, "ls")
    assert code == 0 and record.id in out and "demo" in out


def test_the_imported_experiment_goes_on_with_an_objective(
    study_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = f"sqlite:///{tmp_path / 'hyperlab.db'}"
    args = ("--storage", storage, "import-optuna", study_url, "--study", "demo", "--name", "go")
    assert run_cli(capsys, *args)[0] == 0
    code, _, err = run_cli(capsys, "--storage", storage, "resume", "go")
    assert code == 2 and "objective" in err  # none is stored: give it from Python

    def score(params: dict[str, Any]) -> float:
        return float(params["x"]) + float(params["units"])

    result = hyperlab.resume("go", storage=storage, objective=score, max_trials=2, progress=False)
    assert [t.status for t in result.trials] == [TrialStatus.SUCCEEDED] * 2
    space = SearchSpace.from_nni(Store.open(storage).get_experiment(result.experiment_id).space)
    for trial in result.trials:
        space.check(trial.params)


def test_another_name_and_a_name_taken(
    study_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = f"sqlite:///{tmp_path / 'hyperlab.db'}"
    args = ("--storage", storage, "import-optuna", study_url, "--study", "demo")
    assert run_cli(capsys, *args, "--name", "first")[0] == 0
    code, _, err = run_cli(capsys, *args, "--name", "first")
    assert code == 2 and "an experiment named 'first' already exists" in err
    assert [e.name for e in Store.open(storage).list_experiments()] == ["first"]


@pytest.mark.parametrize(
    ("study", "message"),
    [
        ("nope", "no Optuna study named 'nope'"),
        ("pareto", "has 2 objectives"),
        ("hopeless", "no complete trial with a finite value to import (its trials: 2 failed)"),
    ],
)
def test_a_study_that_cannot_be_imported_is_refused_writing_nothing(
    study_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], study: str, message: str
) -> None:
    hyperlab_db = tmp_path / "hyperlab.db"
    code, _, err = run_cli(
        capsys,
        "--storage",
        f"sqlite:///{hyperlab_db}",
        "import-optuna",
        study_url,
        "--study",
        study,
    )
    assert code == 2 and message in err
    if study == "nope":
        assert "studies found: 'demo', 'hopeless', 'pareto'" in err
    assert not hyperlab_db.exists()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("sqlite:///{tmp}/missing.db", "no such file"),
        ("{study}", "did you mean sqlite:///"),
        ("postgresql+psycopg://nobody:secret@127.0.0.1:1/none", "cannot open the Optuna storage"),
        ("sqlite:///{tmp}/other.db", "cannot"),
    ],
)
def test_an_unreachable_storage_is_refused_writing_nothing(
    optuna: ModuleType,
    study_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    url: str,
    message: str,
) -> None:
    (tmp_path / "other.db").write_bytes(b"")  # a file, but no Optuna tables in it
    hyperlab_db = tmp_path / "hyperlab.db"
    given = url.format(tmp=tmp_path, study=study_url.removeprefix("sqlite:///"))
    code, _, err = run_cli(
        capsys, "--storage", f"sqlite:///{hyperlab_db}", "import-optuna", given, "--study", "demo"
    )
    assert code == 2 and message in err, err
    assert "secret" not in err
    assert not hyperlab_db.exists()
    assert not (tmp_path / "missing.db").exists()
    assert (tmp_path / "other.db").read_bytes() == b""


def test_without_optuna_the_error_says_how_to_install_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "optuna", None)  # import optuna raises ImportError
    hyperlab_db = tmp_path / "hyperlab.db"
    code, _, err = run_cli(
        capsys,
        "--storage",
        f"sqlite:///{hyperlab_db}",
        "import-optuna",
        "sqlite:///x.db",
        "--study",
        "s",
    )
    assert code == 2 and "pip install optuna" in err
    assert not hyperlab_db.exists()
