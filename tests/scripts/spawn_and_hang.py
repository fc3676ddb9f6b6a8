"""A command trial that starts a long-lived child, records both pids, reports, then hangs.

Usage: spawn_and_hang.py [--ignore-term]   (with it, both ignore SIGTERM: only SIGKILL works)
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import hyperlab


def main() -> None:
    ignore = "--ignore-term" in sys.argv
    if ignore:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the child
    child = subprocess.Popen(["sleep", "60"])
    folder = hyperlab.trial_dir()  # written whole, then renamed: a reader never sees half
    (folder / "pids.tmp").write_text(f"{os.getpid()} {child.pid}\n")
    os.replace(folder / "pids.tmp", folder / "pids.txt")
    hyperlab.report(child=child.pid)
    time.sleep(60)


if __name__ == "__main__":
    main()
