"""Researches: grids of configs x repetitions, each an experiment of several units iterated
``n_iters`` times (BatchFlow's ``Research``), run, stored and resumed as hyperlab experiments.

``Domain`` describes the configs, ``Research`` the units and how to run them, ``C``/``O``
reference a config value or a unit's output in a unit's arguments, and ``ResearchResults``
reads what a research recorded as pandas DataFrames. See docs/research.md.

For tools that show a stored research (the CLI's ``hyperlab research``): ``research_options``
reads a record's research options, ``ended`` says whether a config x repetition is done, and
``summarize_profile`` sums the time each unit took. ``ResearchExecutor`` is the executor a
research runs its experiments with (the ``research`` executor).
"""

from hyperlab.research._alias import Alias, ConfigItem
from hyperlab.research._domain import Domain, Option
from hyperlab.research._executor import ResearchExecutor
from hyperlab.research._profile import summarize_profile
from hyperlab.research._research import Research
from hyperlab.research._results import ResearchResults, research_options
from hyperlab.research._rows import ended
from hyperlab.research._units import C, O

__all__ = [
    "Alias",
    "C",
    "ConfigItem",
    "Domain",
    "O",
    "Option",
    "Research",
    "ResearchExecutor",
    "ResearchResults",
    "ended",
    "research_options",
    "summarize_profile",
]
