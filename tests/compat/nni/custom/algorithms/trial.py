"""An NNI trial script: three intermediate results (dicts with ``default``), then the final
result as a number."""

import nni

params = nni.get_next_parameter()
x = params["x"]
for step in range(3):
    nni.report_intermediate_result({"default": x * (step + 1), "step": step})
nni.report_final_result(x * 3)
