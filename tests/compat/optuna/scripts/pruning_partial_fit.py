"""Optuna's examples/pruning/simple.py, smaller: an SGD classifier trained with partial_fit,
reporting its accuracy each epoch; the median pruner stops the hopeless ones."""

import json

import optuna
import sklearn.datasets
import sklearn.linear_model
import sklearn.model_selection
from optuna.trial import TrialState


def objective(trial):
    iris = sklearn.datasets.load_iris()
    classes = list(set(iris.target))
    train_x, valid_x, train_y, valid_y = sklearn.model_selection.train_test_split(
        iris.data, iris.target, test_size=0.25, random_state=0
    )

    alpha = trial.suggest_float("alpha", 1e-5, 1e-1, log=True)
    clf = sklearn.linear_model.SGDClassifier(alpha=alpha, random_state=0)

    for step in range(30):
        clf.partial_fit(train_x, train_y, classes=classes)

        # Report intermediate objective value.
        intermediate_value = 1.0 - clf.score(valid_x, valid_y)
        trial.report(intermediate_value, step)

        # Handle pruning based on the intermediate value.
        if trial.should_prune():
            raise optuna.TrialPruned()

    return 1.0 - clf.score(valid_x, valid_y)


if __name__ == "__main__":
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        sampler=optuna.samplers.TPESampler(seed=1),
        pruner=optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=3),
    )
    study.optimize(objective, n_trials=25)

    pruned_trials = study.get_trials(deepcopy=False, states=[TrialState.PRUNED])
    complete_trials = study.get_trials(deepcopy=False, states=[TrialState.COMPLETE])
    print(
        "RESULT "
        + json.dumps(
            {
                "trials": len(study.trials),
                "pruned": len(pruned_trials),
                "complete": len(complete_trials),
                "best_value": study.best_trial.value,
                "best_params": sorted(study.best_trial.params),
                "pruned_steps": [max(t.intermediate_values) for t in pruned_trials],
            }
        )
    )
