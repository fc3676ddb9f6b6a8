"""An NNI trial script written the way NNI's examples are (examples/trials/mnist-pytorch).

It never imports hyperlab: it only uses ``nni``, as an NNI user's script does. The model is a
formula so the test stays fast; everything around it is the example's structure.
"""

import argparse
import json
import logging
import math
import os

import nni
from nni.utils import merge_parameter

logger = logging.getLogger("mnist_AutoML")


def train(args, epoch):
    return 1.0 - math.exp(-epoch * args["lr"] * 100) * (1 - args["momentum"]) / 2


def test(args, epoch):
    return train(args, epoch) * (0.9 + args["hidden_size"] / 10240) - args["batch_size"] / 10000


def main(args):
    test_acc = 0.0
    for epoch in range(1, args["epochs"] + 1):
        train(args, epoch)
        test_acc = test(args, epoch)
        # report intermediate result
        nni.report_intermediate_result(test_acc)
        logger.debug("test accuracy %g", test_acc)
        logger.debug("Pipe send intermediate result done.")

    # report final result
    nni.report_final_result(test_acc)
    logger.debug("Final result is %g", test_acc)
    logger.debug("Send final result done.")
    with open(os.path.join(os.environ["NNI_OUTPUT_DIR"], "nni_view.json"), "w") as f:
        json.dump(
            {
                "params": args,
                "again": nni.get_next_parameter(),
                "trial_id": nni.get_trial_id(),
                "experiment_id": nni.get_experiment_id(),
                "sequence_id": nni.get_sequence_id(),
                "nni_file": nni.__file__,
            },
            f,
        )


def get_params():
    # Training settings
    parser = argparse.ArgumentParser(description="PyTorch MNIST Example")
    parser.add_argument("--data_dir", type=str, default="./data", help="data directory")
    parser.add_argument("--batch_size", type=int, default=64, metavar="N", help="batch size")
    parser.add_argument("--batch_num", type=int, default=None)
    parser.add_argument("--hidden_size", type=int, default=512, metavar="N", help="hidden size")
    parser.add_argument("--lr", type=float, default=0.01, metavar="LR", help="learning rate")
    parser.add_argument("--momentum", type=float, default=0.5, metavar="M", help="SGD momentum")
    parser.add_argument("--epochs", type=int, default=3, metavar="N", help="epochs to train")
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="random seed")
    parser.add_argument("--no_cuda", action="store_true", default=False, help="disables CUDA")
    parser.add_argument("--log_interval", type=int, default=1000, metavar="N", help="log every")

    args, _ = parser.parse_known_args()
    return args


if __name__ == "__main__":
    try:
        # get parameters form tuner
        tuner_params = nni.get_next_parameter()
        logger.debug(tuner_params)
        params = vars(merge_parameter(get_params(), tuner_params))
        print(params)
        main(params)
    except Exception as exception:
        logger.exception(exception)
        raise
