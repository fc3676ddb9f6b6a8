"""What the group runner (``_runner.py``) keeps for each experiment it runs (``State``), and
what a unit's arguments can name (``Lookup``): outputs, saved variables, the experiment's
special names, the config; root units see only the config values their branches share."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hyperlab.reporting.context import TrialContext
from hyperlab.research._units import SPECIAL_NAMES, C, O

__all__ = ["Lookup", "State", "common_config"]


class State:
    """One experiment's (or the shared root's) outputs, generators and instances."""

    def __init__(self, ctx: TrialContext | None, config: dict[str, Any], repetition: int) -> None:
        self.ctx = ctx
        self.config = config
        self.repetition = repetition
        self.outputs: dict[str, Any] = {}
        self.generators: dict[str, Iterator] = {}
        self.instances: dict[str, Any] = {}
        self.saved: dict[str, Any] = {}  # this iteration's saved variables
        self.last_values: dict[str, Any] = {}
        self.ran: set[str] = set()  # units run this iteration
        self.exc: BaseException | None = None  # what the failing unit raised
        self.profile: dict[str, list[float]] = {}  # unit -> [seconds, calls] this iteration
        self.error: str | None = None


class Lookup:
    """What a unit's arguments can name when it runs for ``state`` at ``iteration``: outputs,
    saved variables, the experiment's state, the config; root units (``state`` is ``root``)
    see only the config values their ``branches`` share."""

    def __init__(self, root: State, state: State, iteration: int, branches: list[State]):
        self.root = root
        self.state = state
        self.iteration = iteration
        self.branches = branches

    def get(self, name: str) -> tuple[bool, Any]:
        """Whether ``name`` names something, and its value."""
        state, root = self.state, self.root
        for outputs in (state.outputs, root.outputs):
            if name in outputs:
                return True, outputs[name]
        if name in SPECIAL_NAMES:
            return True, self._special(name)
        if name in state.config:
            return True, state.config[name]
        return False, None

    def _special(self, name: str) -> Any:
        state = self.state
        ctx = state.ctx if state.ctx is not None else self.branches[0].ctx
        if name == "config":
            return dict(state.config)
        if name == "iteration":
            return self.iteration
        if name == "repetition":
            return state.repetition if state.ctx is not None else self.branches[0].repetition
        if name == "seed":
            return ctx.seed if ctx is not None else None
        return ctx.devices if ctx is not None else ()

    def resolve(self, value: Any) -> Any:
        """An argument as the unit gets it: ``O(...)`` and ``C(...)`` replaced by their values.

        Raises:
            KeyError: What it names does not exist (yet).
        """
        if isinstance(value, O):
            found, output = self.get(value.name)
            if not found:
                raise KeyError(f"O({value.name!r}): no unit has produced it yet")
            return output
        if isinstance(value, C):
            if value.key not in self.state.config:
                if self.state is self.root:
                    raise KeyError(
                        f"C({value.key!r}): a root unit reads only config values its branches "
                        f"share, and {value.key!r} differs between them"
                    )
                raise KeyError(f"C({value.key!r}): not in the config {sorted(self.state.config)}")
            return self.state.config[value.key]
        return value


def common_config(branches: list[State]) -> dict[str, Any]:
    """The config values every branch has alike: what root units may read."""
    if not branches:
        return {}
    first = branches[0].config
    return {
        k: v
        for k, v in first.items()
        if all(k in b.config and _same(b.config[k], v) for b in branches[1:])
    }


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a is b or a == b)
    except Exception:  # e.g. numpy arrays
        return a is b
