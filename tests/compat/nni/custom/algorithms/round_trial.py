"""An NNI trial script for ``RoundAdvisor``: the last trial of its first round (x = 0.12)
takes longer, so the other trials end and hyperlab asks for more while it runs."""

import time

import nni

params = nni.get_next_parameter()
if params["x"] == 0.12:
    time.sleep(1.5)
nni.report_final_result(params["x"])
