"""Optuna's "Specify Hyperparameters Manually" tutorial: enqueue the parameters you believe
in (whole, or only some of them), then let the sampler go on."""

import json

import optuna


def objective(trial):
    x = trial.suggest_float("x", -10, 10)
    y = trial.suggest_int("y", -5, 5)
    return (x - 2) ** 2 + y**2


if __name__ == "__main__":
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=3))
    study.enqueue_trial({"x": 2.0, "y": 0})
    study.enqueue_trial({"x": 5.0})  # y left to the sampler
    study.optimize(objective, n_trials=10)
    first, second = study.trials[0], study.trials[1]
    result = {
        "trials": len(study.trials),
        "first": first.params,
        "first_value": first.value,
        "second_x": second.params["x"],
        "second_y_in_range": -5 <= second.params["y"] <= 5,
        "best_value": study.best_value,
        "best_number": study.best_trial.number,
    }
    print("RESULT " + json.dumps(result))
