# NNI's notebook examples/trials/sklearn/classification/python_api_connect.ipynb
# (microsoft/nni, MIT license) as a script of cells: code cells verbatim but for the import
# line, markdown cells as comments. scripts/run_cells.py runs it cell by cell, as Jupyter would.
# ruff: noqa
# fmt: off

# %%
# ## Connect and Manage an Exist Experiment

# %%
# ### 1. Connect Experiment

# %%
from hyperlab.compat.nni.experiment import Experiment
experiment = Experiment.connect(8080)

# %%
# ### 2. Experiment View & Control

# %%
experiment.get_experiment_profile()

# %%
experiment.update_max_trial_number(200)

# %%
experiment.get_experiment_profile()

# %%
# ### 3. Stop Experiment

# %%
experiment.stop()
