"""No package imports another package's private module or private name (issue 27, point 2).

A name is private when a component of its dotted path starts with one underscore. Import
statements count, and so do the import paths the registries hold as strings
(``"hyperlab.research:ResearchExecutor"``). Its owner is the top-level subpackage the private
component sits in: ``hyperlab.experiment`` owns ``hyperlab.experiment._setup`` and everything
under it, so any module of ``hyperlab.experiment`` may import it and no other may. The root's
private modules (``hyperlab._files``, ``_interrupts``, ``_steering``, ``_terminal``,
``_version``) are owned by the root package itself: they are the package's shared helpers,
below every subpackage in the layers, and every module of hyperlab may import them (users may
not).

The conformance suites in ``hyperlab.testing`` reach into a store through one named
fault-injection hook, ``hyperlab.testing._store_hook``: it holds raw transactions and writes
rows the public API cannot, to test a backend's edge cases.

What the scan finds beyond that is debt, listed in ``ALLOWED`` with why it is there (empty
now). The list is a ratchet: a new reach-in fails the test, and so does an entry that no longer
matches an import.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src"

#: The one fault-injection hook of the conformance suites, and what it may reach.
HOOK = "hyperlab.testing._store_hook"
HOOK_REACHES = {"hyperlab.store._engine", "hyperlab.store._schema"}

#: (importing module, private module or name it imports) -> why it is still there.
ALLOWED: dict[tuple[str, str], str] = {}


def _module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(SOURCE).with_suffix("").parts)
    package = parts[-1] == "__init__"
    if package:
        parts.pop()
    return ".".join(parts), package


def _imported(node: ast.Import | ast.ImportFrom, module: str, package: bool) -> list[str]:
    """The dotted names ``node`` imports, relative imports resolved against ``module``."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        anchor = module.split(".") if package else module.split(".")[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, *([node.module] if node.module else [])])
    return [f"{base}.{alias.name}" for alias in node.names]


def _private_prefix(name: str) -> tuple[str, str] | None:
    """The dotted name up to its first private component, and that component's owner."""
    parts = name.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            owner = "hyperlab" if index <= 1 else ".".join(parts[:2])
            return ".".join(parts[: index + 1]), owner
    return None


_IMPORT_PATH = re.compile(r"(hyperlab(?:\.\w+)+)(?::[\w.]+)?")
"""A string that names what to import, as the registries hold them (``"package.module:Class"``)."""


def _named(node: ast.AST, module: str, package: bool) -> list[str]:
    """The dotted names an import statement imports, or an import path string names."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        return _imported(node, module, package)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        match = _IMPORT_PATH.fullmatch(node.value)
        return [match.group(1)] if match else []
    return []


def reach_ins() -> set[tuple[str, str]]:
    """Every (importing module, private name) where the importer is outside the name's owner."""
    found: set[tuple[str, str]] = set()
    for path in sorted((SOURCE / "hyperlab").rglob("*.py")):
        module, package = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for name in _named(node, module, package):
                if not name.startswith("hyperlab."):
                    continue
                private = _private_prefix(name)
                if private is None:
                    continue
                prefix, owner = private
                if module == owner or module.startswith(owner + "."):
                    continue
                if module == HOOK and prefix in HOOK_REACHES:
                    continue
                found.add((module, prefix))
    return found


def test_no_new_reach_in_into_another_package():
    new = sorted(reach_ins() - ALLOWED.keys())
    assert not new, (
        "these modules import another package's private module or name; give it a public "
        f"name in the package that owns it: {new}"
    )


def test_every_allowed_reach_in_still_exists():
    fixed = sorted(ALLOWED.keys() - reach_ins())
    assert not fixed, f"these reach-ins are gone: remove them from ALLOWED: {fixed}"


def test_the_scan_sees_a_reach_in():
    tree = ast.parse("from ..store._buffer import dumps\nfrom hyperlab.space import _params\n")
    names = [n for node in tree.body for n in _imported(node, "hyperlab.server._x", False)]
    assert names == ["hyperlab.store._buffer.dumps", "hyperlab.space._params"]
    assert _private_prefix(names[0]) == ("hyperlab.store._buffer", "hyperlab.store")
    assert _private_prefix("hyperlab._version.version") == ("hyperlab._version", "hyperlab")
    path = ast.parse('"hyperlab.research._executor:ResearchExecutor"').body[0]
    assert isinstance(path, ast.Expr)
    assert _named(path.value, "hyperlab.executors.base", False) == ["hyperlab.research._executor"]
