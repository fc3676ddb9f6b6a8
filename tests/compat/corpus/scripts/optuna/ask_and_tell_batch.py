"""Optuna's ask-and-tell tutorial, its batch form: ask several trials, with the distributions
given up front (define-and-run), evaluate them together, tell each."""

import json

import optuna
from optuna.distributions import FloatDistribution, IntDistribution

distributions = {"x": FloatDistribution(-10, 10), "n": IntDistribution(1, 5)}


def evaluate(params):
    return (params["x"] - 2) ** 2 + params["n"]


if __name__ == "__main__":
    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=1))
    for _ in range(6):
        batch = [study.ask(distributions) for _ in range(4)]
        values = [evaluate(trial.params) for trial in batch]
        for trial, value in zip(batch, values, strict=True):
            study.tell(trial, value)
    result = {
        "trials": len(study.trials),
        "complete": sum(t.state.name == "COMPLETE" for t in study.trials),
        "best_value": study.best_value,
        "n_is_int": all(isinstance(t.params["n"], int) for t in study.trials),
        "keys": sorted(study.best_params),
    }
    print("RESULT " + json.dumps(result))
