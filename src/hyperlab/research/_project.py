"""The user's project of a research: the folder of the script that built it (else the working
directory), whose git state the research records, rather than hyperlab's own."""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["project_dir"]

_PACKAGE = Path(__file__).resolve().parents[1]  # hyperlab/


def project_dir() -> str | None:
    """The folder of the first file on the call stack outside hyperlab (the script or module
    that is building the research), or the working directory when that code has no file on
    disk (an interactive session, ``python -c``, a notebook cell); None when even that is
    gone (it was deleted)."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        frame = frame.f_back  # type: ignore[assignment]
        if filename.startswith("<frozen "):  # importlib's own frames
            continue
        path = Path(filename)
        if not path.is_file():  # "<stdin>", "<string>", a notebook cell
            return _cwd()
        path = path.resolve()
        if _PACKAGE not in path.parents:
            return str(path.parent)
    return _cwd()


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # the working directory was deleted
        return None
