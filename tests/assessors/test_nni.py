"""NNI's assessors in an NNI v2 config: ``Medianstop`` and ``Curvefitting`` load into hyperlab's
``median`` and ``curvefit`` with their classArgs, and run end to end with an NNI trial script
unchanged (command trials, real processes)."""

from __future__ import annotations

import math
import shlex
import sys
from pathlib import Path

import pytest
import yaml

import hyperlab
from hyperlab.config import load_config

HERE = Path(__file__).resolve().parent
QUALITIES = [0.9, 0.3, 0.95, 0.2]  # what the trials' accuracies tend to: 0.3 and 0.2 are bad

ASSESSORS = {
    "Medianstop": ({"optimize_mode": "maximize", "start_step": 2}, "median", {"start_step": 2}),
    "Curvefitting": (
        {"epoch_num": 10, "start_step": 4, "threshold": 0.95, "gap": 1},
        "curvefit",
        {"epoch_num": 10, "start_step": 4, "threshold": 0.95, "gap": 1},
    ),
}


def nni_config(tmp_path: Path, name: str) -> Path:
    class_args = ASSESSORS[name][0]
    config = {
        "experimentName": f"nni-{name}",
        "searchSpace": {"quality": {"_type": "choice", "_value": QUALITIES}},
        "trialCommand": f"{shlex.quote(sys.executable)} nni_trial.py",
        "trialCodeDirectory": str(HERE),
        "trialConcurrency": 1,
        "maxTrialNumber": len(QUALITIES),
        "tuner": {"name": "GridSearch", "classArgs": {"optimize_mode": "maximize"}},
        "assessor": {"name": name, "classArgs": class_args},
        "trainingService": {"platform": "local"},
    }
    path = tmp_path / "config.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@pytest.mark.parametrize("name", sorted(ASSESSORS))
def test_nni_assessor_config_loads_into_ours(tmp_path, name):
    _, ours, args = ASSESSORS[name]
    config = load_config(nni_config(tmp_path, name))
    assert config.assessor == ours
    assert config.assessor_args == args
    assert config.mode == "max"  # from optimize_mode; Curvefitting's from the tuner's


@pytest.mark.parametrize("name", sorted(ASSESSORS))
def test_nni_assessor_runs_an_nni_trial_script_unchanged(tmp_path, name):
    result = hyperlab.Experiment.from_config(nni_config(tmp_path, name), progress=False).run()
    by_quality = {t.params["quality"]: t for t in result.trials}
    assert sorted(by_quality) == sorted(QUALITIES)
    for quality in (0.9, 0.95):
        trial = by_quality[quality]
        assert trial.status is hyperlab.TrialStatus.SUCCEEDED
        assert len(trial.reports) == 10
    first_judged = {"Medianstop": 2, "Curvefitting": 4}[name]
    for quality in (0.3, 0.2):
        trial = by_quality[quality]
        assert trial.status is hyperlab.TrialStatus.EARLY_STOPPED
        # stopped at its first judged report; one more may have been on its way
        assert first_judged <= len(trial.reports) <= first_judged + 1
    assert result.best_value == pytest.approx(0.95 * (1 - math.exp(-10 / 3)))
