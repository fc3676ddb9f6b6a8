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
