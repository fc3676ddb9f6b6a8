"""optuna-examples' sklearn/sklearn_simple.py: choose between an SVC and a random forest on
iris, and their hyperparameters, by 3-fold cross-validated accuracy."""

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
        classifier_obj = sklearn.ensemble.RandomForestClassifier(
            max_depth=rf_max_depth, n_estimators=10
        )

    score = sklearn.model_selection.cross_val_score(classifier_obj, x, y, n_jobs=1, cv=3)
    accuracy = score.mean()
    return accuracy


if __name__ == "__main__":
    study = optuna.create_study(direction="maximize")
    study.optimize(objective, n_trials=20)
    print(study.best_trial)
    params = study.best_params
    result = {
        "trials": len(study.trials),
        "complete": sum(t.state.name == "COMPLETE" for t in study.trials),
        "best_value": study.best_value,
        "best_keys": sorted(params),
        "classifiers": sorted({t.params["classifier"] for t in study.trials}),
        "depth_is_int": all(
            isinstance(t.params["rf_max_depth"], int)
            for t in study.trials
            if "rf_max_depth" in t.params
        ),
    }
    print("RESULT " + json.dumps(result))
