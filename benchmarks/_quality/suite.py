"""The suite: every problem by name, selections of it, and the quick subset."""

from __future__ import annotations

import fnmatch
import functools
import re
import zlib

from .external import bbob_problems, sklearn_problems
from .mixed2 import mixed2_problems
from .problems import local_problems
from .spaces import Problem

FAMILIES = ("bbob", "classic", "mixed", "mixed2", "sklearn")

HALVES = ("tuning", "report", "all")
"""``--half``'s choices; see ``half``."""

QUICK = (
    "bbob-f01-d05",  # sphere
    "bbob-f08-d05",  # Rosenbrock
    "bbob-f10-d05",  # ill-conditioned ellipsoid
    "bbob-f15-d05",  # rotated Rastrigin
    "bbob-f21-d02",  # Gallagher's 101 peaks
    "bbob-f20-d10",  # Schwefel x*sin(x), 10-D
    "branin",
    "hartmann6",
    "mixed",
    "cond-model",
    "nested-opt",
    "svm-cancer",
    "model-cancer",
)
"""``--quick``'s problems: a few of every family, smooth and rugged, 2-D to 10-D."""


@functools.cache
def problems() -> dict[str, Problem]:
    """Every problem of the suite by name, in family order."""
    everything = [*bbob_problems(), *local_problems(), *mixed2_problems(), *sklearn_problems()]
    ordered = sorted(everything, key=lambda p: FAMILIES.index(p.family))
    return {p.name: p for p in ordered}


def problem_by_name(name: str) -> Problem:
    return problems()[name]


def select(spec: str) -> list[str]:
    """Problem names from comma-separated names, families (``bbob``, ``classic``, ``mixed``,
    ``mixed2``, ``sklearn``, ``all``), ``bbob-d05`` (a dimension), ``bbob-f08`` (a function)
    or globs; a family's name means the family, ``=name`` the one problem (``=mixed``)."""
    known = problems()
    out: list[str] = []
    for item in filter(None, (i.strip() for i in spec.split(","))):
        if item.startswith("="):
            names = [item[1:]] if item[1:] in known else []
        elif item == "all":
            names = list(known)
        elif item in FAMILIES:
            names = [n for n, p in known.items() if p.family == item]
        elif re.fullmatch(r"bbob-d\d\d", item):
            names = [n for n in known if n.startswith("bbob-") and n.endswith(item[4:])]
        elif re.fullmatch(r"bbob-f\d\d", item):
            names = [n for n in known if n.startswith(item + "-")]
        else:
            names = [n for n in known if fnmatch.fnmatchcase(n, item)]
        if not names:
            raise SystemExit(
                f"unknown problem {item!r}; known: {', '.join(FAMILIES)}, all, bbob-dNN, "
                f"bbob-fNN, globs, or {', '.join(n for n in known if not n.startswith('bbob'))}"
            )
        out += [n for n in names if n not in out]
    return out


def half(name: str) -> str:
    """The half of the suite a problem belongs to: "tuning" when ``zlib.crc32(name) % 2 == 0``,
    else "report".

    Defaults are chosen on the tuning half and reported on the report half (and the whole); the
    rule depends on the name only, so it is fixed, needs no list, and places a new problem at
    once. It is not balanced per family (see ``quality.py``'s docstring for the counts); it is
    kept as it is because other tools compute the same rule.
    """
    return "tuning" if zlib.crc32(name.encode()) % 2 == 0 else "report"


def in_half(names: list[str], which: str) -> list[str]:
    """The ``names`` in half ``which`` ("tuning", "report" or "all"), in their order."""
    if which not in HALVES:
        raise ValueError(f"half must be one of {HALVES}, not {which!r}")
    return [n for n in names if which == "all" or half(n) == which]
