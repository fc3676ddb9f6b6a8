"""The README's two commands stay true: CI runs exactly the test command it gives."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```bash\n(.+?)\n```", text)


def test_ci_runs_the_readme_test_command():
    test_command = readme_commands()[1]
    assert "pytest" in test_command
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_command in ci_lines


def test_quickstart_command_names_an_existing_example():
    install_and_run = readme_commands()[0]
    script = install_and_run.split("python ")[-1].strip()
    assert (ROOT / script).is_file()


def test_quickstart_runs_end_to_end(tmp_path):
    import os
    import subprocess
    import sys

    env = {**os.environ, "HYPERLAB_HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples/quickstart/quickstart.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "best parameters: {'learning_rate':" in out.stdout
    assert (tmp_path / "hyperlab.db").is_file()


SWITCH = r'environ\.get\(\s*"(HYPERLAB_(?:SKIP|TEST)_[A-Z_]+)"'


def test_the_readme_says_what_each_group_of_tests_needs_from_the_machine():
    """Every switch the tests read to find or skip a service is named where the README gives
    the test command, beside the services themselves."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("**Install what the tests need") : text.index("The fast lane")]
    read = {
        name
        for path in (ROOT / "tests").rglob("*.py")
        for name in re.findall(SWITCH, path.read_text())
    }
    assert {"HYPERLAB_SKIP_POSTGRES", "HYPERLAB_SKIP_NNI_CLIENT"} <= read
    for needed in [*sorted(read), "127.0.0.1:5432", "chromium", "`ray`", "nni==3.0", "`git`"]:
        assert needed in section, needed
