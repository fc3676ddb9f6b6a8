"""A training loop of the user's own with Optuna's pruning API (optuna-examples' "pruning"
examples without a framework): report each epoch's validation error, prune when the median
pruner says so."""

import json
import math

import optuna


def validation_error(lr, momentum, epoch):
    """A learning curve: fast learners converge, too large rates plateau high."""
    speed = lr * 50 * (1 + momentum)
    floor = 0.05 + max(0.0, math.log10(lr) + 1.5) * 0.3
    return floor + (1 - floor) * math.exp(-speed * (epoch + 1))


def objective(trial):
    lr = trial.suggest_float("lr", 1e-4, 1.0, log=True)
    momentum = trial.suggest_float("momentum", 0.0, 0.9)
    error = 1.0
    for epoch in range(20):
        error = validation_error(lr, momentum, epoch)
        trial.report(error, epoch)
        if trial.should_prune():
            raise optuna.TrialPruned()
    return error


if __name__ == "__main__":
    study = optuna.create_study(
        direction="minimize",
        sampler=optuna.samplers.RandomSampler(seed=42),
        pruner=optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=5),
    )
    study.optimize(objective, n_trials=40)
    pruned = [t for t in study.trials if t.state == optuna.trial.TrialState.PRUNED]
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    print(f"Pruned: {len(pruned)}, complete: {len(complete)}, best: {study.best_value}")
    result = {
        "trials": len(study.trials),
        "pruned": len(pruned),
        "complete": len(complete),
        "best_value": study.best_value,
        "pruned_steps": sorted(t.last_step for t in pruned),
        "first_five_complete": all(
            t.state == optuna.trial.TrialState.COMPLETE for t in study.trials[:5]
        ),
    }
    print("RESULT " + json.dumps(result))
