"""Optuna's ask-and-tell interface (docs' "Ask-and-Tell Interface" tutorial): the loop is the
user's; the study only proposes and records."""

import json

import optuna


def evaluate(x, y):
    return (x - 2) ** 2 + (y + 1) ** 2


if __name__ == "__main__":
    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.RandomSampler(seed=0))
    pruned = 0
    for _ in range(30):
        trial = study.ask()
        x = trial.suggest_float("x", -10, 10)
        y = trial.suggest_int("y", -5, 5)
        if x > 8:  # the user's own reason to give up on a trial
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            pruned += 1
            continue
        study.tell(trial, evaluate(x, y))
    states = [t.state.name for t in study.trials]
    print(
        "RESULT "
        + json.dumps(
            {
                "trials": len(study.trials),
                "pruned": states.count("PRUNED"),
                "told_pruned": pruned,
                "complete": states.count("COMPLETE"),
                "best_value": study.best_value,
                "best_params": sorted(study.best_params),
                "y_is_int": isinstance(study.best_params["y"], int),
            }
        )
    )
