"""A griffe extension for the API reference: read hyperlab's ``Example:`` sections as examples.

The code's docstrings head their doctests ``Example:``; griffe's Google parser takes that
singular title for an admonition, whose ``>>>`` lines Markdown then reads as quotes (and an
output such as ``[{'_name': 'skip'}]`` as a link). Spelled ``Examples:``, the section is parsed
as doctests and rendered as code. The source stays as it is; only the rendered page changes.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_SINGULAR = re.compile(r"^(\s*)Example:[ \t]*$", re.MULTILINE)


class ExampleSections(griffe.Extension):
    """Rename every ``Example:`` section heading to ``Examples:`` before the docstring is parsed."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _SINGULAR.sub(r"\1Examples:", obj.docstring.value)
