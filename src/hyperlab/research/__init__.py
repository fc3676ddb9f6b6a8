"""Researches: grids of configs x repetitions, each an experiment of several units iterated
``n_iters`` times (BatchFlow's ``Research``), run, stored and resumed as hyperlab experiments.

``Domain`` describes the configs, ``Research`` the units and how to run them, ``C``/``O``
reference a config value or a unit's output in a unit's arguments, and ``ResearchResults``
reads what a research recorded as pandas DataFrames. See docs/research.md.
"""

from hyperlab.research._alias import Alias, ConfigItem
from hyperlab.research._domain import Domain, Option
from hyperlab.research._research import Research
from hyperlab.research._results import ResearchResults
from hyperlab.research._units import C, O

__all__ = ["Alias", "C", "ConfigItem", "Domain", "O", "Option", "Research", "ResearchResults"]
