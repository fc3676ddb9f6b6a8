"""A command trial counting steps: ``count.py STEPS SLEEP save|nosave``.

Each step is printed, reported, and (with ``save``) checkpointed; a resumed run starts after
the step its checkpoint recorded.
"""

import sys
import time

import hyperlab

steps, sleep, save = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3] == "save"
state = hyperlab.load_checkpoint() if save else None
first = 0 if state is None else state["step"] + 1
print(f"start at {first}", flush=True)
for step in range(first, steps):
    time.sleep(sleep)
    print(f"step {step}", flush=True)
    hyperlab.report(loss=1.0 / (step + 1))
    if save:
        hyperlab.checkpoint({"step": step})
