"""Optuna's first example (README, optuna-examples' quadratic): minimise (x - 2)^2 with TPE."""

import json

import optuna


def objective(trial):
    x = trial.suggest_float("x", -10, 10)
    return (x - 2) ** 2


if __name__ == "__main__":
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=10))
    study.optimize(objective, n_trials=60)
    print(f"Best value: {study.best_value} (params: {study.best_params})")
    states = [t.state.name for t in study.trials]
    result = {
        "trials": len(study.trials),
        "complete": states.count("COMPLETE"),
        "best_value": study.best_value,
        "best_x": study.best_params["x"],
        "numbers": [t.number for t in study.trials],
    }
    print("RESULT " + json.dumps(result))
