# NNI's notebook examples/trials/sklearn/classification/python_api_start.ipynb
# (microsoft/nni, MIT license) as a script of cells: code cells verbatim but for the import
# line, markdown cells as comments. scripts/run_cells.py runs it cell by cell, as Jupyter would.
# ruff: noqa
# fmt: off

# %%
# ## Start and Manage a New Experiment

# %%
# ### 1. Configure Search Space

# %%
search_space = {
    "C": {"_type":"quniform","_value":[0.1, 1, 0.1]},
    "kernel": {"_type":"choice","_value":["linear", "rbf", "poly", "sigmoid"]},
    "degree": {"_type":"choice","_value":[1, 2, 3, 4]},
    "gamma": {"_type":"quniform","_value":[0.01, 0.1, 0.01]},
    "coef0": {"_type":"quniform","_value":[0.01, 0.1, 0.01]}
}

# %%
# ### 2. Configure Experiment

# %%
from hyperlab.compat.nni.experiment import Experiment
experiment = Experiment('local')
experiment.config.experiment_name = 'Example'
experiment.config.trial_concurrency = 2
experiment.config.max_trial_number = 10
experiment.config.search_space = search_space
experiment.config.trial_command = 'python3 main.py'
experiment.config.trial_code_directory = './'
experiment.config.tuner.name = 'TPE'
experiment.config.tuner.class_args['optimize_mode'] = 'maximize'
experiment.config.training_service.use_active_gpu = True

# %%
# ### 3. Start Experiment

# %%
experiment.start(8080)

# %%
# ### 4. Experiment View & Control

# %%
experiment.get_status()

# %%
experiment.export_data()

# %%
experiment.get_job_metrics()

# %%
# ### 5. Stop Experiment

# %%
experiment.stop()
