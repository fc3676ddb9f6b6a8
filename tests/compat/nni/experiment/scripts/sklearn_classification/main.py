"""A tiny stand-in for NNI's examples/trials/sklearn/classification/main.py, the trial of its
``python_api_*`` notebooks: the same NNI calls and parameters, with a formula in place of the
SVC trained on the digits (so a trial takes ``TRIAL_SECONDS``, not the seconds scikit-learn
takes to import and train)."""

import logging
import math
import os
import time

import nni

LOG = logging.getLogger("sklearn_classification")


def get_default_parameters():
    """get default parameters"""
    return {"C": 1.0, "kernel": "linear", "degree": 3, "gamma": 0.01, "coef0": 0.01}


def score(params):
    """An accuracy-like number in (0, 1) that depends on every parameter."""
    kernels = {"linear": 0.02, "rbf": 0.0, "poly": 0.05, "sigmoid": 0.1}
    loss = (params["C"] - 0.6) ** 2 + (params["gamma"] - 0.05) ** 2 + params["coef0"] / 10
    return 0.99 - kernels[params["kernel"]] - params["degree"] / 100 - math.tanh(loss)


if __name__ == "__main__":
    RECEIVED_PARAMS = nni.get_next_parameter()
    LOG.debug(RECEIVED_PARAMS)
    PARAMS = get_default_parameters()
    PARAMS.update(RECEIVED_PARAMS)
    time.sleep(float(os.environ.get("TRIAL_SECONDS", "0")))
    nni.report_final_result(score(PARAMS))
