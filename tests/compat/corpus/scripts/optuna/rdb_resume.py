"""Optuna's "Saving/Resuming Study with RDB Backend" tutorial: a named study in SQLite, run
again by a second process that loads it and adds trials."""

import json

import optuna

study_name = "example-study"
storage_name = f"sqlite:///{study_name}.db"


def objective(trial):
    x = trial.suggest_float("x", -10, 10)
    return (x - 2) ** 2


if __name__ == "__main__":
    study = optuna.create_study(study_name=study_name, storage=storage_name, load_if_exists=True)
    before = len(study.trials)
    study.optimize(objective, n_trials=8)
    loaded = optuna.load_study(study_name=study_name, storage=storage_name)
    names = [s.study_name for s in optuna.get_all_study_summaries(storage=storage_name)]
    result = {
        "before": before,
        "after": len(loaded.trials),
        "numbers": [t.number for t in loaded.trials],
        "best_in_loaded": loaded.best_value == min(t.value for t in loaded.trials),
        "names": names,
    }
    print("RESULT " + json.dumps(result))
