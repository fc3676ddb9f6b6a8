"""The terminal shows text, not commands: control characters in what users named (experiments,
parameters and their values, metrics) and in trials' errors are printed as escapes by every
command that prints a table or a summary, and rich's markup in them is shown as it is.
``hyperlab logs`` alone prints a trial's output as the trial wrote it, as ``cat`` would."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import hyperlab
from hyperlab._terminal import printable
from hyperlab.cli import main
from hyperlab.errors import TrialError
from hyperlab.research._aggregate import Aggregate, Stats
from hyperlab.store import Store

ROOT = Path(__file__).resolve().parents[2]

# what a terminal acts on or shows out of order: C0/C1 controls and DEL, line and paragraph
# separators, bidirectional controls, lone surrogates (written out here, not taken from the
# code under test)
BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
UNSAFE_CATEGORIES = {"Cc", "Cs", "Zl", "Zp"}


def raw_controls(text: str) -> list[str]:
    """The characters of ``text`` a terminal would act on, a line feed apart."""
    return [
        char
        for char in text
        if char != "\n" and (unicodedata.category(char) in UNSAFE_CATEGORIES or char in BIDI)
    ]


SPECIAL = [
    "\x1b[2J",  # clears the screen
    "\x1b]0;title\x07",  # sets the window's title
    "\x1b]52;c;aGk=\x07",  # writes the clipboard
    "\x9b31m",  # C1 control sequence introducer
    "\r",
    "\n",
    "\t",
    "\x00",
    "\x7f",
    "\x85",
    "\u202e",
    "\u2066",
    "\u2028",
    "[bold]",
    "[/]",
    "[link=https://evil.example/x]",
    ":smile:",
    "\\x1b",
]
USER_TEXT = (
    st.lists(
        st.one_of(st.text(st.characters(codec="utf-8"), max_size=4), st.sampled_from(SPECIAL)),
        min_size=1,
        max_size=5,
    )
    .map("".join)
    .filter(lambda text: text.strip() != "")
)


@pytest.fixture
def plain_output():
    """Output as a pipe gets it: no colours, no console width (the tests read the text)."""
    drop = ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
    with mock.patch.dict(os.environ, {name: "" for name in drop}):
        for name in drop:
            del os.environ[name]
        yield


def cli(storage: str, *argv: str) -> tuple[int, str]:
    """Run ``hyperlab --storage STORAGE ARGV...`` here; its exit code and what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(["--storage", storage, *argv])
    return code, out.getvalue()


def run_experiment(
    storage: str, name: str, param: str, values: tuple[str, str], metric: str, error: str
) -> str:
    """Two trials: one reports ``metric``, the other raises ``error``; the experiment's id."""

    def objective(params):
        if params[param] == values[1]:
            raise ValueError(error)
        hyperlab.report(**{metric: 0.5})
        return {metric: 0.25}

    try:
        result = hyperlab.run(
            objective,
            {param: hyperlab.choice(*values)},
            tuner="grid",
            metric=metric,
            max_trials=2,
            name=name,
            storage=storage,
            progress=False,
            fail_fast=False,
        )
    except TrialError as failed:  # the failing trial came first
        result = failed.result
    return result.experiment_id


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    name=USER_TEXT,
    param=USER_TEXT,
    values=st.tuples(USER_TEXT, USER_TEXT),
    metric=USER_TEXT,
    error=USER_TEXT,
)
def test_no_command_prints_a_raw_control_character_of_a_user_string(
    plain_output, name, param, values, metric, error
):
    assume(values[0] != values[1])
    with tempfile.TemporaryDirectory() as folder:
        storage = str(Path(folder) / "store.db")
        experiment = run_experiment(storage, name, param, values, metric, error)
        commands = [
            ["ls"],
            ["ls", f"--name={name}"],  # "=": a name may begin with "-"
            ["show", experiment],
            ["trials", experiment],
            ["trials", experiment, "--status", "failed"],
            ["show", f"nothing {name}"],  # an error naming what was asked for
            ["stop", experiment],  # an error: it is not running
        ]
        printed = []
        for argv in commands:
            _, out = cli(storage, *argv)
            assert raw_controls(out) == [], (argv, out)
            printed.append(out)
        ls, _, show, trials, *_ = printed
        assert printable(name) in ls  # shown, as text: markup and emoji codes too
        assert printable(name) in show and printable(metric) in show
        assert printable(param) in trials


def test_the_clear_screen_of_the_issue_is_shown_not_obeyed(tmp_path, hyperlab_home):
    """As the issue saw it: through the ``hyperlab`` command, in a subprocess."""
    storage = str(tmp_path / "store.db")
    clear = "\x1b[2J"
    experiment = run_experiment(
        storage,
        f"name{clear}",
        f"param{clear}",
        (f"good{clear}", f"bad{clear}"),
        f"metric{clear}",
        f"error{clear} [link=https://evil.example/x]click[/link]",
    )
    # as on a terminal: rich styles its own output (with escape sequences of its own)
    env = {**os.environ, "HYPERLAB_HOME": str(hyperlab_home), "FORCE_COLOR": "1", "COLUMNS": "300"}
    for argv in (["ls"], ["show", experiment], ["trials", experiment]):
        done = subprocess.run(
            [sys.executable, "-m", "hyperlab", "--storage", storage, *argv],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert clear not in done.stdout and "\x1b[2J" not in done.stderr
        assert "\\x1b[2J" in done.stdout, done.stdout  # the name, shown as text
    assert "[link=https://evil.example/x]click[/link]" in done.stdout  # markup shown as it is


def test_logs_prints_the_output_as_the_trial_wrote_it(tmp_path, hyperlab_home):
    def noisy(params):
        print("before\x1b[2Jafter", flush=True)
        return params["x"]

    result = hyperlab.run(noisy, {"x": hyperlab.uniform(0, 1)}, max_trials=1, progress=False)
    done = subprocess.run(
        [sys.executable, "-m", "hyperlab", "logs", result.experiment_id, "0"],
        capture_output=True,
        text=True,
        env={**os.environ, "HYPERLAB_HOME": str(hyperlab_home)},
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == "before\x1b[2Jafter\n"


def test_a_research_s_name_and_table_are_escaped(plain_output, hyperlab_home):
    from tests.research.stored_research import write_research

    store = Store.open(None)
    write_research(store, name="grid\x1b[2J[bold]")
    code, out = cli(store.url, "show", "grid0001")
    assert code == 0 and raw_controls(out) == []
    assert out.startswith("research grid0001  grid\\x1b[2J[bold]")

    table = Aggregate(
        by=["model\x1b[31m"],
        names=["loss\u202e"],
        iteration="last",
        groups=[({"model\x1b[31m": "SGD\r"}, {"loss\u202e": Stats(0.5, 0.1, 3)})],
    ).text()
    assert raw_controls(table) == []
    assert table.splitlines() == [
        "model\\x1b[31m  loss\\u202e",
        "SGD\\r          0.5 ± 0.1 (3)",
    ]


def test_printable_escapes_only_what_a_terminal_acts_on():
    assert (
        printable("a\x1b[2Jb\u202ec\u2028d\x85e\ud800") == "a\\x1b[2Jb\\u202ec\\u2028d\\x85e\\ud800"
    )
    assert printable("line\r\nnext\tcell") == "line\\r\\nnext\\tcell"
    assert printable("line\r\nnext", newlines=True) == "line\\r\nnext"
    kept = "é 中 😀 [bold] :smile: \\x1b \u200d"
    assert printable(kept) == kept
