"""A command trial that writes what it sees (environment and hyperlab API) to ``seen.json``."""

from __future__ import annotations

import importlib.util
import json
import os
import sys

import hyperlab


def main() -> None:
    seen = {
        "env": dict(os.environ),
        "cwd": os.getcwd(),
        "params": hyperlab.get_params(),
        "seed": hyperlab.trial_seed(),
        "dir": str(hyperlab.trial_dir()),
        "devices": list(hyperlab.trial_devices()),
        "hyperlab": hyperlab.__file__,
        "nni": importlib.util.find_spec("nni").origin,
        "python": sys.executable,
    }
    (hyperlab.trial_dir() / "seen.json").write_text(json.dumps(seen))
    hyperlab.report(float(hyperlab.get_params()["x"]))


if __name__ == "__main__":
    main()
