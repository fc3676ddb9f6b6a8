"""Reading NNI search-space JSON (or YAML) from files and text, with errors that name the file
and the line. The spec dicts themselves are parsed by the parameter types
(:func:`hyperlab.space._params.parse_param`) and written by their ``to_nni()``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hyperlab.errors import SearchSpaceError
from hyperlab.space._params import describe

__all__ = ["read_nni"]


def read_nni(spec: str | os.PathLike[str]) -> tuple[str, Mapping[str, Any]]:
    """``(where, mapping)`` of NNI search-space JSON text (a string starting with ``{``) or of
    a ``.json`` / ``.yaml`` / ``.yml`` file; ``where`` names the source for messages.

    Files and text are read strictly (``hyperlab._files``): a file of at most 4 MiB, each key
    once per object, bounded nesting and YAML aliases.

    Raises:
        SearchSpaceError: For a missing, unreadable or too large file, invalid JSON/YAML or a
            key given twice (naming the file and line), too deep a nesting, too many aliased
            values, or a document that is not a mapping.
    """
    from hyperlab._files import parse_json  # lazily: it imports yaml

    if isinstance(spec, str) and spec.lstrip().startswith("{"):
        where = "search-space JSON text"
        data = parse_json(spec, where, error=SearchSpaceError)
    elif isinstance(spec, (str, os.PathLike)):
        where, data = str(spec), _load_file(Path(spec))
    else:
        raise SearchSpaceError(
            "from_nni needs a dict, a path to a JSON/YAML file or JSON text, got "
            f"{type(spec).__name__}"
        )
    if not isinstance(data, Mapping):
        raise SearchSpaceError(
            f"{where}: a search space must be an object mapping parameter names to specs, "
            f"got {describe(data)}"
        )
    return where, data


def _load_file(path: Path) -> Any:
    from hyperlab._files import read_json, read_yaml

    if path.suffix.lower() in (".yaml", ".yml"):
        return read_yaml(path, what="search-space file", error=SearchSpaceError)
    return read_json(path, what="search-space file", error=SearchSpaceError)
