"""Launch the mnist trials with NNI's Python API, the config written field by field as NNI's
HPO tutorials do: TPE, Medianstop, 10 trials two at a time. Usage: python launch_api.py PORT"""

import json
import sys

from nni.experiment import Experiment

search_space = {
    "batch_size": {"_type": "choice", "_value": [16, 32, 64, 128]},
    "hidden_size": {"_type": "choice", "_value": [128, 256, 512, 1024]},
    "lr": {"_type": "choice", "_value": [0.0001, 0.001, 0.01, 0.1]},
    "momentum": {"_type": "uniform", "_value": [0, 1]},
}

experiment = Experiment("local")
experiment.config.trial_command = "python3 mnist.py"
experiment.config.trial_code_directory = "."
experiment.config.search_space = search_space
experiment.config.tuner.name = "TPE"
experiment.config.tuner.class_args["optimize_mode"] = "maximize"
experiment.config.assessor.name = "Medianstop"
experiment.config.assessor.class_args = {"optimize_mode": "maximize", "start_step": 2}
experiment.config.max_trial_number = 10
experiment.config.trial_concurrency = 2
experiment.run(int(sys.argv[1]))

jobs = experiment.list_trial_jobs()
exported = experiment.export_data()
metrics = experiment.get_job_metrics()
print(
    "RESULT "
    + json.dumps(
        {
            "trials": len(jobs),
            "statuses": sorted(job.status for job in jobs),
            "finals": sorted(result.value for result in exported),
            "reports": sorted(
                [job.status, sum(m.type == "PERIODICAL" for m in metrics.get(job.trialJobId, []))]
                for job in jobs
            ),
            "params": sorted(sorted(result.parameter) for result in exported)[:1],
            "profile_trials": experiment.get_experiment_profile()["params"]["maxTrialNumber"],
        }
    )
)
experiment.stop()
