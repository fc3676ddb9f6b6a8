"""optuna-examples' visualization/plot_study.py, shortened: optimise, then draw the usual
figures (optimization history, intermediate values, slice, parameter importances) and ask
for the parameters' importances."""

import json

import optuna


def objective(trial):
    x = trial.suggest_float("x", -10, 10)
    y = trial.suggest_int("y", -5, 5)
    for step in range(5):
        trial.report((x - 2) ** 2 / (step + 1) + y**2, step)
    return (x - 2) ** 2 + y**2


if __name__ == "__main__":
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(objective, n_trials=30)

    figures = {
        "history": optuna.visualization.plot_optimization_history(study),
        "intermediate": optuna.visualization.plot_intermediate_values(study),
        "slice": optuna.visualization.plot_slice(study),
        "importances": optuna.visualization.plot_param_importances(study),
    }
    importances = optuna.importance.get_param_importances(study)
    result = {
        "figures": {name: type(figure).__name__ for name, figure in figures.items()},
        "history_points": max(len(trace.x) for trace in figures["history"].data),
        "intermediate_lines": len(figures["intermediate"].data),
        "importance_keys": sorted(importances),
        "importance_sum": sum(importances.values()),
        "x_first": next(iter(importances)),
    }
    print("RESULT " + json.dumps(result))
