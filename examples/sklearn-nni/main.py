"""An NNI trial script, unchanged: tune an SVC on scikit-learn's bundled digits data set.

This is how NNI's own examples are written; hyperlab runs it as it is, through its `nni`
shim: `hyperlab run examples/sklearn-nni/config.yml`.
"""

import argparse
import logging

import nni
from nni.utils import merge_parameter
from sklearn.datasets import load_digits
from sklearn.model_selection import cross_val_score
from sklearn.svm import SVC

LOG = logging.getLogger("sklearn_nni")


def get_default_parameters():
    return {"C": 1.0, "kernel": "rbf", "gamma": 0.001, "degree": 3}


def main(params):
    digits = load_digits()
    model = SVC(
        C=params["C"], kernel=params["kernel"], gamma=params["gamma"], degree=int(params["degree"])
    )
    scores = cross_val_score(model, digits.data, digits.target, cv=3)
    for fold, score in enumerate(scores):
        nni.report_intermediate_result(float(score))
        LOG.debug("fold %d accuracy %.4f", fold, score)
    accuracy = float(scores.mean())
    nni.report_final_result({"default": accuracy, "std": float(scores.std())})
    print(f"trial {nni.get_trial_id()} (#{nni.get_sequence_id()}) accuracy {accuracy:.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cv", type=int, default=3)
    args, _ = parser.parse_known_args()
    try:
        tuned = nni.get_next_parameter()
        params = merge_parameter(get_default_parameters(), tuned)
        main(params)
    except Exception:
        LOG.exception("trial failed")
        raise
