"""A trial script as NNI's examples/trials/mnist-pytorch/mnist.py is written: defaults from
argparse, updated with nni.get_next_parameter(), the test accuracy reported each epoch and at
the end. A formula stands in for the network (an epoch takes TRIAL_SECONDS / epochs)."""

import argparse
import logging
import math
import os
import time

import nni

logger = logging.getLogger("mnist_AutoML")


def train_and_test(args, epoch):
    """The test accuracy after ``epoch`` epochs: a larger rate learns faster, up to a point."""
    time.sleep(float(os.environ.get("TRIAL_SECONDS", "0")) / args["epochs"])
    speed = args["lr"] * 20 * (1 + args["momentum"]) * math.log2(args["hidden_size"]) / 10
    ceiling = 0.99 - (0.4 if args["lr"] >= 0.1 else 0.0) - args["batch_size"] / 2000
    return ceiling * (1 - math.exp(-(epoch + 1) * speed))


def main(args):
    test_acc = 0.0
    for epoch in range(args["epochs"]):
        test_acc = train_and_test(args, epoch)
        nni.report_intermediate_result(test_acc)
        logger.debug("test accuracy %g", test_acc)
    nni.report_final_result(test_acc)
    logger.debug("Final result is %g", test_acc)


def get_params():
    parser = argparse.ArgumentParser(description="PyTorch MNIST Example")
    parser.add_argument("--batch_size", type=int, default=64, metavar="N")
    parser.add_argument("--hidden_size", type=int, default=512, metavar="N")
    parser.add_argument("--lr", type=float, default=0.01, metavar="LR")
    parser.add_argument("--momentum", type=float, default=0.5, metavar="M")
    parser.add_argument("--epochs", type=int, default=5, metavar="N")
    args, _ = parser.parse_known_args()
    return args


if __name__ == "__main__":
    try:
        tuner_params = nni.get_next_parameter()
        logger.debug(tuner_params)
        params = vars(get_params())
        params.update(tuner_params)
        print(params)
        main(params)
    except Exception as exception:
        logger.exception(exception)
        raise
