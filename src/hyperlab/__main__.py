"""``python -m hyperlab``: the ``hyperlab`` command."""

import sys

from hyperlab.cli import main

sys.exit(main())
