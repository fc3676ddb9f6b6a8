"""A command trial that reports, or gives as its final result, the value its params name
(``tests/experiment/trial_outputs.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.experiment.trial_outputs import main

main()
