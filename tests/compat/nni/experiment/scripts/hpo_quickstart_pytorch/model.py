"""A tiny stand-in for NNI's examples/tutorials/hpo_quickstart_pytorch/model.py, the trial of
its ``main.py``: the same NNI calls, parameters and epochs, with a formula in place of the
network trained on FashionMNIST (so a trial takes ``TRIAL_SECONDS``, not minutes)."""

import math
import os
import time

import nni

params = {
    "features": 512,
    "lr": 0.001,
    "momentum": 0,
}

optimized_params = nni.get_next_parameter()
params.update(optimized_params)
print(params)

epochs = 5
for t in range(epochs):
    time.sleep(float(os.environ.get("TRIAL_SECONDS", "0")) / epochs)
    speed = params["lr"] * 100 * (1 + params["momentum"]) * math.log2(params["features"]) / 10
    accuracy = 0.9 * (1 - math.exp(-(t + 1) * speed))
    nni.report_intermediate_result(accuracy)
nni.report_final_result(accuracy)
