"""An NNI multi-phase trial, as NNI's own test of multi-phase trials writes it
(test/training_service/config/multi_phase/multi_phase.py): ask for parameters until there are
none or five phases ran, reporting a final result for each. It only imports ``nni``; it also
writes what it saw to its output folder, for the test to compare with the store."""

import json
import os

import nni

if __name__ == "__main__":
    seen = []
    for i in range(int(os.environ.get("PHASES", "5"))):
        hyper_params = nni.get_next_parameter()
        print(f"hyper_params:[{hyper_params}]")
        if hyper_params is None:
            break
        for epoch in range(2):
            nni.report_intermediate_result({"default": hyper_params["x"] * epoch, "epoch": epoch})
        result = {"default": (hyper_params["x"] - 0.3) ** 2 + 0.01 * i, "phase": i}
        nni.report_final_result(result)
        seen.append({"params": hyper_params, "result": result})
    view = {
        "seen": seen,
        "trial_id": nni.get_trial_id(),
        "experiment_id": nni.get_experiment_id(),
        "sequence_id": nni.get_sequence_id(),
        "env": [os.environ[k] for k in ("NNI_TRIAL_JOB_ID", "NNI_EXP_ID", "NNI_TRIAL_SEQ_ID")],
    }
    with open(os.path.join(os.environ["NNI_OUTPUT_DIR"], "phases.json"), "w") as f:
        json.dump(view, f)
