"""An NNI trial script, as NNI users write them: it never imports hyperlab.

It trains for 10 epochs, reporting the accuracy after each (``quality`` is what it tends to),
then reports the final accuracy.
"""

import math
import time

import nni

if __name__ == "__main__":
    params = nni.get_next_parameter()
    accuracy = 0.0
    for epoch in range(10):
        accuracy = params["quality"] * (1 - math.exp(-(epoch + 1) / 3))
        nni.report_intermediate_result(accuracy)
        time.sleep(0.05)
    nni.report_final_result(accuracy)
