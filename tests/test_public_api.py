"""The public surface is exactly ``__all__``: it cannot drift by accident."""

from __future__ import annotations

import importlib
import subprocess
import sys

import hyperlab


def test_all_lists_exactly_the_public_names():
    public = {name for name in dir(hyperlab) if not name.startswith("_")}
    # submodules become attributes once imported; they are not part of the API
    modules = {name for name in public if type(getattr(hyperlab, name)).__name__ == "module"}
    assert set(hyperlab.__all__) - {"__version__"} == public - modules
    for name in hyperlab.__all__:
        assert getattr(hyperlab, name) is not None
    assert set(hyperlab.__all__) - {"__version__"} == set(hyperlab._EXPORTS)


def test_import_is_light():
    """Trial processes import hyperlab; it must not drag in the store, numpy or rich."""
    code = (
        "import sys, hyperlab, hyperlab.reporting; heavy = ('numpy', 'sqlalchemy', 'rich', "
        "'pydantic'); print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_version_matches_the_package_metadata():
    from importlib.metadata import version

    assert hyperlab.__version__ == version("hyperlab")
    assert importlib.import_module("hyperlab.cli")


def test_every_package_lists_its_public_names_and_they_resolve():
    for name in ("space", "experiment", "store", "executors", "tuners", "testing", "server"):
        package = importlib.import_module(f"hyperlab.{name}")
        assert len(set(package.__all__)) == len(package.__all__)
        for public in package.__all__:
            assert getattr(package, public) is not None, f"hyperlab.{name}.{public}"


def test_tuners_package_is_light_until_a_model_is_fitted():
    """SciPy is imported with a model tuner's first model-based proposal, not before."""
    code = (
        "import sys, hyperlab.tuners as t; from hyperlab import space as hs; "
        "from hyperlab.trial import Trial, TrialStatus; "
        "space = hs.SearchSpace({'x': hs.uniform(0, 1)}); loaded = ['scipy' in sys.modules]; "
        "tuners = [t.create_tuner(n, space, mode='min', seed=0) for n in ('tpe', 'gp', 'auto')]; "
        "[tu.suggest(0) for tu in tuners]; loaded.append('scipy' in sys.modules); "
        "gp = tuners[1]; "
        "[gp.observe(Trial('e', n, gp.suggest(n), TrialStatus.SUCCEEDED, value=n)) "
        "for n in range(10)]; gp.suggest(10); loaded.append('scipy' in sys.modules); print(*loaded)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "True"]
