"""Reading NNI search-space JSON (or YAML) from files and text, with errors that name the file
and the line. The spec dicts themselves are parsed by the parameter types
(:func:`hyperlab.space._params.parse_param`) and written by their ``to_nni()``.
"""

from __future__ import annotations

import json
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

    Raises:
        SearchSpaceError: For a missing or unreadable file, invalid JSON/YAML (naming the file
            and line), or a document that is not a mapping.
    """
    if isinstance(spec, str) and spec.lstrip().startswith("{"):
        where, data = "search-space JSON text", _parse_json(spec, "search-space JSON text")
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


def _parse_json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SearchSpaceError(
            f"{where}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None


def _load_file(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SearchSpaceError(f"{path}: search-space file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SearchSpaceError(f"{path}: cannot read the search-space file: {exc}") from None
    if path.suffix.lower() not in (".yaml", ".yml"):
        return _parse_json(text, str(path))
    import yaml  # lazily: only YAML files need it

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or exc
        raise SearchSpaceError(f"{path}: invalid YAML{line}: {problem}") from None
