"""Optuna's callbacks (the FAQ's "stop the study once a good value is found"): a callback sees
each finished trial and the study with it, and stops the study with study.stop()."""

import json

import optuna

seen = []


def objective(trial):
    x = trial.suggest_int("x", 0, 20)
    return abs(x - 7)


def stop_when_good(study, trial):
    seen.append([trial.number, len(study.trials), trial.state.name])
    if study.best_value <= 3:
        study.stop()


if __name__ == "__main__":
    study = optuna.create_study(sampler=optuna.samplers.GridSampler({"x": list(range(21))}))
    study.optimize(objective, n_trials=21, callbacks=[stop_when_good])
    result = {
        "trials": len(study.trials),
        "seen": seen,
        "best_value": study.best_value,
        "sees_itself": all(count == number + 1 for number, count, _ in seen),
    }
    print("RESULT " + json.dumps(result))
