"""Optuna's examples/sklearn/sklearn_simple.py, smaller: the classifier is a parameter, and
each classifier has parameters of its own (a conditional, define-by-run space)."""

import json

import optuna
import sklearn.datasets
import sklearn.ensemble
import sklearn.model_selection
import sklearn.svm


def objective(trial):
    iris = sklearn.datasets.load_iris()
    x, y = iris.data, iris.target

    classifier_name = trial.suggest_categorical("classifier", ["SVC", "RandomForest"])
    if classifier_name == "SVC":
        svc_c = trial.suggest_float("svc_c", 1e-10, 1e10, log=True)
        classifier_obj = sklearn.svm.SVC(C=svc_c, gamma="auto")
    else:
        rf_max_depth = trial.suggest_int("rf_max_depth", 2, 32, log=True)
        rf_n_estimators = trial.suggest_int("rf_n_estimators", 4, 20, step=4)
        classifier_obj = sklearn.ensemble.RandomForestClassifier(
            max_depth=rf_max_depth, n_estimators=rf_n_estimators, random_state=0
        )

    score = sklearn.model_selection.cross_val_score(classifier_obj, x, y, n_jobs=1, cv=3)
    accuracy = score.mean()
    return accuracy


if __name__ == "__main__":
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=0))
    study.enqueue_trial({"classifier": "RandomForest", "rf_max_depth": 4})
    study.optimize(objective, n_trials=16, n_jobs=2)
    trial = study.best_trial
    first = study.trials[0]
    print(
        "RESULT "
        + json.dumps(
            {
                "trials": len(study.trials),
                "complete": len(
                    [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
                ),
                "best_value": trial.value,
                "best_classifier": trial.params["classifier"],
                "enqueued": [first.params["classifier"], first.params["rf_max_depth"]],
                "types": sorted(
                    {type(v).__name__ for t in study.trials for v in t.params.values()}
                ),
                "frame": list(study.trials_dataframe().shape),
            }
        )
    )
