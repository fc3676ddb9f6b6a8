"""A command trial that records which devices it got and when it held them.

Usage: record_devices.py SECONDS
"""

from __future__ import annotations

import json
import os
import sys
import time

import hyperlab


def main() -> None:
    start = time.time()
    time.sleep(float(sys.argv[1]))
    seen = {
        "cuda": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "devices": list(hyperlab.trial_devices()),
        "start": start,
        "end": time.time(),
    }
    (hyperlab.trial_dir() / "devices.json").write_text(json.dumps(seen))
    hyperlab.report(seen["start"])


if __name__ == "__main__":
    main()
