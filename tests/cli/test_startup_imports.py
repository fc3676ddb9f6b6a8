"""What ``import hyperlab`` and ``hyperlab --help`` import: none of the heavy dependencies,
which only the commands that use them import (behaviour checked, not timings)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hyperlab.cli import COMMANDS, _command

HEAVY = ("sqlalchemy", "numpy", "pydantic", "rich", "scipy", "optuna", "pandas", "yaml")


def _imported_after(code: str) -> set[str]:
    """The top-level packages imported by a fresh interpreter after running ``code``."""
    listing = "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    script = f"{code}\nimport json, sys\n{listing}"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_import_hyperlab_imports_no_heavy_dependency() -> None:
    assert _imported_after("import hyperlab").isdisjoint(HEAVY)


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["ls", "--help"], ["run", "--help"]])
def test_help_imports_no_heavy_dependency(argv: list[str]) -> None:
    code = (
        "import contextlib, io\n"
        "from hyperlab.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        main({argv!r})\n"
        "    except SystemExit:\n"
        "        pass"
    )
    assert _imported_after(code).isdisjoint(HEAVY)


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    from hyperlab.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    for name in COMMANDS:
        assert name in shown


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_its_function(name: str) -> None:
    handler = _command(name)
    assert callable(handler)
    assert handler.__name__ == "cmd_" + ("serve" if name == "dashboard" else name.replace("-", "_"))
