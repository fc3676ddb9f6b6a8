"""Every public module of Optuna imports in module form from ``hyperlab.compat.optuna``; the
names hyperlab has no equivalent for raise ``NotImplementedError`` naming what to use."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import hyperlab.compat.optuna as optuna
from hyperlab.compat.optuna.storages import RDBStorage

REFUSED = {
    "artifacts": ("upload_artifact", "trial_dir"),
    "cli": ("main", "hyperlab import-optuna"),
    "integration": ("LightGBMPruningCallback", "trial.report"),
    "progress_bar": ("ProgressBar", "show_progress_bar"),
    "search_space": ("IntersectionSearchSpace", "intersection search space"),
    "storages": ("JournalStorage", "database URL"),
    "terminator": ("TerminatorCallback", "study.stop()"),
    "testing": ("storages", "hyperlab.testing"),
    "version": ("version", "hyperlab.__version__"),
}
"""Optuna's modules hyperlab has no equivalent for: a name of each and a word of what to use."""

OTHERS = {"visualization", "importance"}
"""Modules tested with their own code."""


def test_every_public_module_of_optuna_imports() -> None:
    real = pytest.importorskip("optuna")
    names = {m.name for m in pkgutil.iter_modules(real.__path__) if not m.name.startswith("_")}
    assert set(REFUSED) <= names
    for name in sorted(names - OTHERS):
        module = importlib.import_module(f"hyperlab.compat.optuna.{name}")
        assert module.__name__ == f"hyperlab.compat.optuna.{name}"


@pytest.mark.parametrize("module", sorted(REFUSED))
def test_a_name_of_a_module_without_equivalent_is_refused_naming_what_to_use(module: str) -> None:
    name, instead = REFUSED[module]
    found = importlib.import_module(f"hyperlab.compat.optuna.{module}")
    with pytest.raises(NotImplementedError, match=f"optuna.{module}.{name}") as raised:
        getattr(found, name)
    assert instead in str(raised.value)
    with pytest.raises(AttributeError):
        found.__wrapped__  # noqa: B018  (Python's own look-ups of dunder names get no error)


def test_the_modules_optuna_imports_are_attributes_as_in_optuna() -> None:
    for name in ("storages", "integration", "artifacts", "search_space", "version"):
        assert getattr(optuna, name).__name__ == f"hyperlab.compat.optuna.{name}"
    with pytest.raises(NotImplementedError, match="import-optuna"):
        optuna.copy_study  # noqa: B018


def test_module_form_in_a_fresh_interpreter(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(
        "import hyperlab.compat.optuna.storages\n"
        "import hyperlab.compat.optuna.terminator as terminator\n"
        "from hyperlab.compat.optuna.integration import *\n"
        "try:\n"
        "    terminator.Terminator()\n"
        "except NotImplementedError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "optuna.terminator.Terminator: not in hyperlab" in done.stdout


def test_an_rdb_storage_is_its_url(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'study.db'}"
    study = optuna.create_study(storage=RDBStorage(url), study_name="s")
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=2)
    assert optuna.get_all_study_names(url) == ["s"]
    assert len(optuna.load_study(study_name="s", storage=RDBStorage(url)).trials) == 2
    with pytest.raises(NotImplementedError, match="engine_kwargs"):
        RDBStorage(url, engine_kwargs={"pool_size": 5})
    with pytest.raises(NotImplementedError, match="lease"):
        RDBStorage(url, heartbeat_interval=60)
    with pytest.raises(TypeError, match="url"):
        RDBStorage(None)  # type: ignore[arg-type]
