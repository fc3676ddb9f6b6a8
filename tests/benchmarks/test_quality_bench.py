"""benchmarks/quality.py: the suite's fixed tuning / report split."""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

suite = pytest.importorskip("_quality.suite")


def test_the_half_of_a_problem_is_the_parity_of_the_crc32_of_its_name():
    names = list(suite.problems())
    for name in names:
        expected = "tuning" if zlib.crc32(name.encode()) % 2 == 0 else "report"
        assert suite.half(name) == expected
    tuning, report = suite.in_half(names, "tuning"), suite.in_half(names, "report")
    assert sorted(tuning + report) == sorted(names)
    assert tuning and report and not set(tuning) & set(report)
    assert suite.in_half(names, "all") == names


def test_known_names_fall_in_fixed_halves():
    # written down once: the split must never change silently (other tools compute it too)
    fixed = {
        "branin": "tuning",
        "hartmann6": "tuning",
        "svm-cancer": "tuning",
        "mixed": "report",
        "cond-model": "report",
        "bbob-f01-d02": "report",
    }
    assert {n: suite.half(n) for n in fixed} == fixed
    with pytest.raises(ValueError):
        suite.in_half(["branin"], "both")
