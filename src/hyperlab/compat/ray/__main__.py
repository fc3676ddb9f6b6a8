"""``python -m hyperlab.compat.ray script.py [args...]``: run a Ray Tune script unchanged on
hyperlab, its ``import ray`` and ``from ray import tune`` lines included (``ray`` is
``hyperlab.compat.ray`` in this process: see ``hyperlab.compat.ray._alias``)."""

from __future__ import annotations

import runpy
import sys

from hyperlab.compat.ray._alias import alias


def main(argv: list[str]) -> int:
    """Run the script ``argv[0]`` with the arguments ``argv[1:]`` as ``__main__``."""
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m hyperlab.compat.ray script.py [args...]", file=sys.stderr)
        return 0 if argv else 2
    alias()
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
