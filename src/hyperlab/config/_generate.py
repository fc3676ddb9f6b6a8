"""What is written from the one definition of the options (``ExperimentOptions`` and the
config-file models, each field with its ``Field(description=...)`` and ``Doc``): the keyword
types of ``hyperlab.run`` and ``Experiment``, the options table of docs/config.md, and the JSON
schema of config files.

``python -m hyperlab.config._generate`` rewrites the three files in a checkout;
``--check`` only says which are out of date (tests/config/test_options_once.py does the same).
"""

from __future__ import annotations

import enum
import json
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from hyperlab.config._files import ExperimentConfig
from hyperlab.config._options import Doc, ExperimentOptions
from hyperlab.config._ranges import DURATION
from hyperlab.config._validate import executor_fields

__all__ = [
    "KEYWORDS_FILE",
    "OPTIONS_DOC",
    "SCHEMA_FILE",
    "config_schema",
    "keywords_module",
    "options_table",
    "with_table",
]

KEYWORDS_FILE = "src/hyperlab/experiment/_keywords.py"
"""Where the keyword types of ``run`` and ``Experiment`` are written, in a checkout."""
OPTIONS_DOC = "docs/config.md"
"""The page whose options table is written between ``TABLE_START`` and ``TABLE_END``."""
SCHEMA_FILE = "docs/config-schema.json"
"""The JSON schema of config files, served beside the docs."""
TABLE_START = "<!-- options table: written by python -m hyperlab.config._generate -->"
TABLE_END = "<!-- end of the options table -->"


def doc_of(field: FieldInfo) -> Doc | None:
    """The ``Doc`` of a model field; None for a field that is not an option people set."""
    return next((m for m in field.metadata if isinstance(m, Doc)), None)


# ---- the keyword types of run and Experiment ----------------------------------------------

_HEADER = '''"""The keyword options of ``hyperlab.run`` and ``hyperlab.Experiment``, as types: what
each takes and what it means (docs/config.md, "Fields", says the same in a table).

Written by ``python -m hyperlab.config._generate`` from ``hyperlab.config.ExperimentOptions``,
the one definition of the options; tests/config/test_options_once.py checks it is current.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypedDict

from hyperlab.assessors.base import Assessor
from hyperlab.config import GpuConfig
from hyperlab.trial import Mode, Trial
from hyperlab.tuners.base import Tuner

__all__ = ["ExecutorArgs", "Options"]
'''


def _member(name: str, api: str, description: str) -> str:
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", description)  # links: their words
    text = text.replace("`", "``")
    body = textwrap.fill(text[0].upper() + text[1:] + ".", width=92)
    return f"    {name}: {api}\n" + textwrap.indent(f'"""{body}"""', "    ") + "\n"


def keywords_module() -> str:
    """The text of ``KEYWORDS_FILE``: ``Options`` (``total=False``) for ``**options`` of
    ``run`` and ``Experiment``, and ``ExecutorArgs`` for its ``executor_args``."""
    options: list[str] = []
    executor: list[str] = []
    for name, field in ExperimentOptions.model_fields.items():
        doc = doc_of(field)
        if doc is None or doc.api is None:
            continue
        member = _member(name, doc.api, field.description or "")
        (executor if doc.executor else options).append(member)
    deprecated = [
        _member(
            name,
            doc.api or "Any",
            f"deprecated: give it in `executor_args` (`executor_args={{'{name}': ...}}`)",
        )
        for name, field in ExperimentOptions.model_fields.items()
        if (doc := doc_of(field)) is not None and doc.executor
    ]
    executor_args = _member(
        "executor_args",
        "ExecutorArgs | Mapping[str, Any] | None",
        "the executor's own options, checked as the others are: "
        + ", ".join(f"`{name}`" for name in executor_fields()),
    )
    return (
        _HEADER
        + '\n\nclass ExecutorArgs(TypedDict, total=False):\n    """The options of '
        + '``executor_args``: those of the executor alone."""\n\n'
        + "\n".join(executor)
        + '\n\nclass Options(TypedDict, total=False):\n    """The keyword options of '
        + '``run`` and ``Experiment``; any left out takes its default."""\n\n'
        + "\n".join([*options, executor_args])
        + "\n    # deprecated: the executor's options, given as keywords of their own\n\n"
        + "\n".join(deprecated)
    ).rstrip() + "\n"


# ---- the options table --------------------------------------------------------------------


def _default(field: FieldInfo, doc: Doc) -> str:
    if doc.default is not None:
        return doc.default
    if field.default_factory is not None:
        return f"`{json.dumps(field.default_factory())}`"  # type: ignore[call-arg]
    value = field.default
    if value is PydanticUndefined:
        return "required"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, enum.Enum):
        return f"`{value.value}`"
    if isinstance(value, str):
        return f"`{value}`"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _rows(model: type[BaseModel], prefix: str, python: str | None) -> Iterator[str]:
    for name, field in model.model_fields.items():
        doc = doc_of(field)
        if doc is None:
            continue
        where = python or doc.python or ("`executor_args`" if doc.executor else "keyword")
        yield (
            f"| `{prefix}{name}` | {doc.type} | {_default(field, doc)} | {where} | "
            f"{field.description} |"
        )
        nested = [
            a
            for a in (field.annotation, *getattr(field.annotation, "__args__", ()))
            if (isinstance(a, type) and issubclass(a, BaseModel))
        ]
        for sub in nested:
            yield from _rows(sub, f"{prefix}{name}.", where)


def options_table() -> str:
    """The markdown table of every field of a config file, and how Python gives it."""
    head = "| field | type | default | in Python | meaning |\n| --- | --- | --- | --- | --- |\n"
    return head + "\n".join(_rows(ExperimentConfig, "", None)) + "\n"


def with_table(page: str) -> str:
    """``page`` (docs/config.md) with the table between its markers written anew."""
    start, end = page.index(TABLE_START) + len(TABLE_START), page.index(TABLE_END)
    return page[:start] + "\n\n" + options_table() + "\n" + page[end:]


# ---- the config-file schema ---------------------------------------------------------------


def config_schema() -> dict[str, Any]:
    """The JSON schema of config files (hyperlab's format; NNI's is translated into it):
    ``ExperimentConfig``'s, less what the driver records, with ``tuner`` and ``assessor`` as
    names or ``{name, args}`` and durations as seconds or strings like ``"30m"``."""
    schema = ExperimentConfig.model_json_schema()
    properties = schema["properties"]
    for recorded in ("suggested", "budget_signals"):
        properties.pop(recorded)
    for key in ("tuner", "assessor"):
        block = {
            "type": "object",
            "properties": {"name": {"type": "string"}, "args": {"type": "object"}},
            "required": ["name"],
            "additionalProperties": False,
        }
        field = properties[key]
        choices = field.pop("anyOf", None) or [{"type": field.pop("type")}]
        field["anyOf"] = [*choices, block]
    for key in ("max_duration", "trial_timeout", "store_outage"):
        field = properties[key]
        choices = field.pop("anyOf", None) or [{"type": field.pop("type")}]
        limits = {k: field.pop(k) for k in ("exclusiveMinimum", "maximum") if k in field}
        numbers = [{**c, **limits} if c["type"] == "number" else c for c in choices]
        field["anyOf"] = [*numbers, {"type": "string", "pattern": DURATION.pattern}]
    return schema


def _files() -> dict[str, Any]:
    """Path in a checkout -> a function of its current text giving its new text."""
    return {
        KEYWORDS_FILE: lambda _: keywords_module(),
        OPTIONS_DOC: with_table,
        SCHEMA_FILE: lambda _: json.dumps(config_schema(), indent=2) + "\n",
    }


def main(argv: list[str]) -> int:
    """Write the generated files under the checkout (or, with ``--check``, list stale ones)."""
    root = Path(__file__).resolve().parents[3]
    stale = []
    for path, write in _files().items():
        file = root / path
        old = file.read_text() if file.exists() else ""
        new = write(old)
        if new != old:
            stale.append(path)
            if "--check" not in argv:
                file.write_text(new)
    for path in stale:
        print(f"{'out of date' if '--check' in argv else 'written'}: {path}")
    return 1 if stale and "--check" in argv else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
