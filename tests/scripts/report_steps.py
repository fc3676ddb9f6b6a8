"""A command trial: reports ``loss`` every ``--sleep`` seconds, then maybe a final result.

Usage: report_steps.py [--steps N] [--sleep S] [--final VALUE] [--exit CODE] [--stderr TEXT]
"""

from __future__ import annotations

import argparse
import sys
import time

import hyperlab


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--final", type=float, default=None)
    parser.add_argument("--exit", type=int, default=0)
    parser.add_argument("--stderr", default="")
    args = parser.parse_args()
    x = hyperlab.get_params().get("x", 1.0)
    for step in range(args.steps):
        hyperlab.report(loss=x / (step + 1), when=time.time())
        time.sleep(args.sleep)
    if args.final is not None:
        import nni

        nni.report_final_result({"loss": args.final})
    for line in filter(None, args.stderr.split("|")):
        print(line, file=sys.stderr)
    sys.exit(args.exit)


if __name__ == "__main__":
    main()
