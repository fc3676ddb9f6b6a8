"""A command trial that reports 50 times in a tight loop (``python tight.py``)."""

import hyperlab

params = hyperlab.get_params()
for step in range(50):
    hyperlab.report(loss=params["x"] + step)
