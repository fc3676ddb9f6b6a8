"""An MkDocs hook: every name a documented package exports must be on its reference page.

Some packages export names through a lazy ``__getattr__`` that griffe cannot follow, so their
pages name those objects where they are defined; a name added to such a package's ``__all__``
would then be missing from the reference without any warning. After each build this hook reads
every page of ``PAGES`` and warns (which fails ``mkdocs build --strict``) for each exported name
that is neither an anchor (``hyperlab.tuners.TPETuner``) nor a heading's text on its page.
"""

from __future__ import annotations

import html
import importlib
import logging
import re
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.hooks.reference_coverage")

PAGES = {
    "reference/hyperlab/index.html": "hyperlab",
    "reference/space/index.html": "hyperlab.space",
    "reference/tuners/index.html": "hyperlab.tuners",
    "reference/assessors/index.html": "hyperlab.assessors",
    "reference/executors/index.html": "hyperlab.executors",
    "reference/store/index.html": "hyperlab.store",
    "reference/research/index.html": "hyperlab.research",
    "reference/server/index.html": "hyperlab.server",
    "reference/testing/index.html": "hyperlab.testing",
}
"""Rendered page -> the package whose whole ``__all__`` it documents. The compat layers' page
documents their entry points only, so it is not listed."""

NOT_DOCUMENTED = {"hyperlab": {"__version__"}}
"""Exported names that are not objects to document."""

_HEADING = re.compile(r'<h[1-6] id="([^"]+)"[^>]*>(.*?)</h[1-6]>', re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


def documented(page: str) -> set[str]:
    """The anchors of a rendered page's headings, and their texts."""
    found = set()
    for anchor, inner in _HEADING.findall(page):
        found.add(anchor)
        found.add(html.unescape(_TAG.sub("", inner)).replace("¶", "").strip())
    return found


def on_post_build(config: Any, **kwargs: Any) -> None:
    """Warn for each exported name of ``PAGES``' packages missing from its page."""
    site = Path(config["site_dir"])
    for page, package in PAGES.items():
        found = documented((site / page).read_text(encoding="utf-8"))
        exported = set(importlib.import_module(package).__all__)
        exported -= NOT_DOCUMENTED.get(package, set())
        for name in sorted(exported):
            if f"{package}.{name}" not in found:
                log.warning(
                    f"reference: {package}.{name} is in {package}.__all__ but not on {page}; "
                    f"add it to docs/{page.removesuffix('/index.html')}.md"
                )
