"""``python -m tests.compat.corpus.report [pytest options]``: run the corpus and print its
table (script, ran unchanged?, agrees with the real library?) with the counts per library."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

if __name__ == "__main__":
    folder = str(Path(__file__).parent)
    sys.exit(pytest.main([folder, "-q", "-p", "no:randomly", *sys.argv[1:]]))
