"""The proof on real code: an NNI multi-phase trial script (NNI's own test of multi-phase
trials, ``scripts/multi_phase.py``) run unchanged by ``hyperlab run config.yml`` with an NNI
experiment config, as command trials; then read back from the store, NNI's REST API (and NNI
3.0's own client), the CLI, and continued with ``hyperlab.resume``."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

import hyperlab
from hyperlab import TrialStatus
from hyperlab.cli import main
from hyperlab.experiment._phases import FIRST_PARAMETER_ID
from hyperlab.server import create_app
from hyperlab.store import Store
from hyperlab.trial import Trial, readable
from tests.compat.nni.phases.recording import RecordingTuner
from tests.server import SESSION_TOKEN, client_for
from tests.server.nni_client import client_python, run_client

SCRIPTS = Path(__file__).parent / "scripts"
NNI = "/api/v1/nni"
PHASES = 5  # the script's loop: phase 0 (the trial's params) and four more


def write_config(folder: Path, max_trials: int) -> Path:
    """An NNI v2 experiment config, as ``nnictl create --config`` takes it."""
    config = {
        "experimentName": "multi-phase",
        "searchSpace": {"x": {"_type": "uniform", "_value": [0, 1]}},
        "trialCommand": f"{shlex.quote(sys.executable)} -S multi_phase.py",
        "trialCodeDirectory": str(SCRIPTS),
        "trialConcurrency": 2,
        "maxTrialNumber": max_trials,
        "tuner": {
            "name": "tests.compat.nni.phases.recording:RecordingTuner",
            "classArgs": {"optimize_mode": "minimize", "seed": 5},
        },
        "trainingService": {"platform": "local"},
        "experimentWorkingDirectory": str(folder / "work"),
    }
    path = folder / "config.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@dataclass
class Ran:
    """A finished run of the config: its store, experiment, trials and the tuner's log."""

    storage: str
    id: str
    trials: list[Trial]
    log: list[tuple[str, int, object]]
    folder: Path

    def view(self, number: int) -> dict:
        """What trial ``number``'s script saw (it wrote it to its ``NNI_OUTPUT_DIR``)."""
        return json.loads((self.folder / "trials" / str(number) / "phases.json").read_text())


def run_config(folder: Path, max_trials: int) -> Ran:
    storage = f"sqlite:///{folder / 'runs.db'}"
    RecordingTuner.log.clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HYPERLAB_HOME", str(folder / "home"))
        code = main(["--storage", storage, "run", str(write_config(folder, max_trials))])
        assert code == 0
        with Store.open(storage) as store:
            (summary,) = store.list_experiments()
            record = store.get_experiment(summary.id)
            trials = store.get_trials(record.id)
            where = store.experiment_folder(record)
    return Ran(storage, record.id, trials, list(RecordingTuner.log), where)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ran]:
    yield run_config(tmp_path_factory.mktemp("multi-phase"), max_trials=2)


def test_every_phase_gets_new_params_from_the_tuner_and_its_result_is_stored(ran):
    proposed = {number: params for kind, number, params in ran.log if kind == "suggest"}
    assert len(ran.trials) == 2  # maxTrialNumber counts trial jobs, not phases
    for trial in ran.trials:
        assert trial.status is TrialStatus.SUCCEEDED, trial.error
        assert trial.params == proposed[trial.number]
        assert [p.index for p in trial.phases] == [1, 2, 3, 4]
        every = [trial.params, *(p.params for p in trial.phases)]
        assert len({params["x"] for params in every}) == PHASES  # each phase its own set
        view = ran.view(trial.number)
        assert [seen["params"] for seen in view["seen"]] == every  # what the script got
        for phase in trial.phases:
            assert phase.status is TrialStatus.SUCCEEDED
            assert phase.params == proposed[phase.parameter_id]  # from the tuner
            result = view["seen"][phase.index]["result"]
            assert phase.metrics == result and phase.value == result["default"]
        assert trial.metrics == view["seen"][0]["result"]  # the trial's own result: phase 0
        assert len(trial.reports) == 2 * PHASES  # every phase's intermediate results
        assert view["env"] == [trial.id, ran.id, str(trial.number)]  # NNI's variables
        assert [view["trial_id"], view["experiment_id"], view["sequence_id"]] == [
            trial.id,
            ran.id,
            trial.number,
        ]
    ids = sorted(p.parameter_id for t in ran.trials for p in t.phases)
    assert ids == list(range(FIRST_PARAMETER_ID, FIRST_PARAMETER_ID + 8))


def test_the_tuner_observed_every_phase(ran):
    observed = {number: seen for kind, number, seen in ran.log if kind == "observe"}
    for trial in ran.trials:
        assert observed[trial.number] == (trial.params, TrialStatus.SUCCEEDED, trial.value)
        for phase in trial.phases:
            assert observed[phase.parameter_id] == (
                phase.params,
                TrialStatus.SUCCEEDED,
                phase.value,
            )
    assert len(observed) == 2 * PHASES


def test_nni_rest_lists_every_phase(ran):
    app = create_app(ran.storage, experiment_id=ran.id, session_token=SESSION_TOKEN)
    with client_for(app) as client:
        jobs = client.get(f"{NNI}/trial-jobs").json()
        exported = client.get(f"{NNI}/export-data").json()
        finals = client.get(f"{NNI}/metric-data", params={"type": "FINAL"}).json()
        periodical = client.get(f"{NNI}/metric-data", params={"type": "PERIODICAL"}).json()
    assert [job["sequenceId"] for job in jobs] == [0, 1]
    for trial in ran.trials:  # stamped with the id of the parameters they were reported under
        assert [m["parameterId"] for m in periodical if m["trialJobId"] == trial.id] == [
            str(parameter_id)
            for parameter_id in [trial.number, *(p.parameter_id for p in trial.phases)]
            for _ in range(2)
        ]
    for job, trial in zip(jobs, ran.trials, strict=True):
        hyper = [json.loads(text) for text in job["hyperParameters"]]
        assert hyper == [
            {
                "parameter_id": trial.number,
                "parameter_source": "algorithm",
                "parameters": trial.params,
                "parameter_index": 0,
            },
            *(
                {
                    "parameter_id": p.parameter_id,
                    "parameter_source": "algorithm",
                    "parameters": p.params,
                    "parameter_index": p.index,
                }
                for p in trial.phases
            ),
        ]
        final = [
            (m["parameterId"], json.loads(json.loads(m["data"]))) for m in job["finalMetricData"]
        ]
        assert final == [
            (str(trial.number), trial.metrics),
            *((str(p.parameter_id), p.metrics) for p in trial.phases),
        ]
    assert len(finals) == 2 * PHASES
    by_params = {json.dumps(e["parameter"]): json.loads(e["value"]) for e in exported}
    for trial in ran.trials:
        for params, metrics in [(trial.params, trial.metrics)] + [
            (p.params, p.metrics) for p in trial.phases
        ]:
            assert by_params[json.dumps(params)] == metrics


@pytest.mark.slow
def test_nni_3_client_reads_every_phase(ran, tmp_path):
    app = create_app(ran.storage, experiment_id=ran.id, session_token=SESSION_TOKEN)
    with client_for(app) as client:
        jobs = client.get(f"{NNI}/trial-jobs").json()
    out = run_client(  # NNI's own records, built as its Experiment.list_trial_jobs() does
        client_python(),
        0,
        f"""
        from nni.experiment import TrialJob
        out["jobs"] = [TrialJob(**job) for job in {jobs!r}]
        """,
        tmp_path,
    )
    for job, trial in zip(out["jobs"], ran.trials, strict=True):
        assert [h["parameter_index"] for h in job["hyperParameters"]] == list(range(PHASES))
        assert [h["parameters"] for h in job["hyperParameters"]] == [
            trial.params,
            *(p.params for p in trial.phases),
        ]
        assert [m["parameterId"] for m in job["finalMetricData"]] == [
            str(trial.number),
            *(str(p.parameter_id) for p in trial.phases),
        ]


def test_the_cli_shows_the_phases(ran, capsys):
    assert main(["--storage", ran.storage, "trials", ran.id]) == 0
    listed = capsys.readouterr().out
    assert "later phases of multi-phase trials" in listed
    for trial in ran.trials:
        for phase in trial.phases:
            assert str(phase.parameter_id) in listed
            assert f"x={readable(phase.params['x'])!r}" in listed  # as the CLI prints floats
    assert main(["--storage", ran.storage, "show", ran.id]) == 0
    shown = capsys.readouterr().out
    assert "phases     8 later phases of 2 multi-phase trials" in shown
    assert "top 10 later phases" in shown


def test_resume_replays_the_phases_before_it_proposes(tmp_path):
    first = run_config(tmp_path, max_trials=1)
    stored = {p.parameter_id: p for t in first.trials for p in t.phases}
    RecordingTuner.log.clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HYPERLAB_HOME", str(tmp_path / "home"))
        result = hyperlab.resume(first.id, storage=first.storage, max_trials=2, progress=False)
        trials = result.trials
    kinds = [kind for kind, *_ in RecordingTuner.log]
    replayed = {n: seen for kind, n, seen in RecordingTuner.log[: kinds.index("suggest")]}
    assert set(replayed) == {0, *stored}  # trial 0 and every phase it had, then proposals
    for number, phase in stored.items():
        assert replayed[number] == (phase.params, phase.status, phase.value)
    new = trials[1]
    assert new.status is TrialStatus.SUCCEEDED and len(new.phases) == PHASES - 1
    assert min(p.parameter_id for p in new.phases) == max(stored) + 1  # numbering goes on
