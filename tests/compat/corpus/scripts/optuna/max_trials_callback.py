"""optuna-examples' faq/max_trials_callback.py: stop a study, shared through a database, once
it has a given number of completed trials, whatever n_trials each worker was given."""

import json

import optuna
from optuna.study import MaxTrialsCallback
from optuna.trial import TrialState


def objective(trial):
    x = trial.suggest_float("x", -10, 10)
    return (x - 2) ** 2


if __name__ == "__main__":
    study = optuna.create_study(
        study_name="max-trials", storage="sqlite:///example.db", load_if_exists=True
    )
    study.optimize(
        objective,
        n_trials=50,
        callbacks=[MaxTrialsCallback(10, states=(TrialState.COMPLETE,))],
    )
    trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    print(f"Ran {len(trials)} trials")
    print("RESULT " + json.dumps({"complete": len(trials), "trials": len(study.trials)}))
