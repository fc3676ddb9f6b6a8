"""Trial outputs for tests/experiment/test_trial_outputs.py: values described by JSON recipes,
built inside the trial (in any executor's process), the trials that report or return them, and
what the driver must make of each, worked out here independently of
``hyperlab.reporting.metrics``.

A recipe is a JSON list: ``["float", x]``, ``["np", "float32", x]``, ``["list", [recipes]]``...
(see ``build``). Each trial reads the recipes from a file named in its params, so the same
values reach every executor, a command trial's process included.
"""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path
from typing import Any

import hyperlab

KEY = "out"
"""The metric a trial reports its value under (a recipe may give another key)."""
LOSS = 0.5
"""The objective every trial reports next to its value."""
BIG = 100 * 2**20
"""A 100 MB value."""
DEEP = 10_000
"""Lists nested this deep."""


class Model:
    """Something a trial returns or reports that no store can hold (as a model would be)."""

    def __init__(self) -> None:
        self.weights = [0.0] * 8


def _unpicklable() -> Any:
    raise ValueError("this value cannot be rebuilt in the driver")


class Trap:
    """Pickles in the trial's process, but cannot be unpickled in the driver's."""

    def __reduce__(self) -> tuple:
        return (_unpicklable, ())


def build(recipe: list) -> Any:
    """The value ``recipe`` describes."""
    kind, *args = recipe
    if kind == "none":
        return None
    if kind in ("bool", "int", "float", "str"):
        return args[0]
    if kind == "np":
        import numpy as np

        return getattr(np, args[0])(args[1])
    if kind == "array":
        import numpy as np

        return np.array(args[1], dtype=args[0])
    if kind == "bytes":
        return args[0].encode()
    if kind == "model":
        return Model()
    if kind == "set":
        return set(args[0])
    if kind == "complex":
        return complex(args[0], args[1])
    if kind == "lock":
        return threading.Lock()
    if kind == "trap":
        return Trap()
    if kind == "surrogate":
        return "a\ud800b"
    if kind == "list":
        return [build(r) for r in args[0]]
    if kind == "tuple":
        return tuple(build(r) for r in args[0])
    if kind in ("dict", "keyed"):  # keyed: keys as given (ints too)
        return {key: build(r) for key, r in args[0]}
    if kind == "deep":
        value: list = []
        for _ in range(args[0]):
            value = [value]
        return value
    if kind == "big":
        return "x" * args[0]
    if kind == "bigarray":
        import numpy as np

        return np.zeros(args[0] // 8)
    raise ValueError(f"unknown recipe {recipe!r}")


def expect(recipe: list) -> tuple[bool, Any]:
    """``(True, value as stored)`` for a value the driver must store, or ``(False, type
    name)`` for one it must refuse: the type of the first thing refused, depth first."""
    kind, *args = recipe
    if kind in ("none", "bool", "float", "str"):
        return True, build(recipe)
    if kind == "int":
        try:
            float(args[0])
        except OverflowError:
            return False, "int"
        return True, args[0]
    if kind == "np":
        return True, build(recipe).item()
    if kind == "array":
        return True, build(recipe).tolist()
    if kind == "deep":  # the documented rule: at most 100 lists or dicts, one in another
        return (True, build(recipe)) if args[0] + 1 <= 100 else (False, "list")
    if kind in ("list", "tuple"):
        items = []
        for r in args[0]:
            ok, got = expect(r)
            if not ok:
                return False, got
            items.append(got)
        return True, items
    if kind in ("dict", "keyed"):
        out = {}
        for key, r in args[0]:
            if not isinstance(key, str):
                return False, type(key).__name__
            ok, got = expect(r)
            if not ok:
                return False, got
            out[key] = got
        return True, out
    refused = {
        "bytes": "bytes",
        "model": "Model",
        "set": "set",
        "complex": "complex",
        "lock": "lock",
        "trap": "Trap",
        "surrogate": "str",
        "big": "str",
        "bigarray": "ndarray",
    }
    return False, refused[kind]


def case(params: dict) -> tuple[Any, Any]:
    """The metric name and the value of this trial's recipe: ``params["i"]`` of the file."""
    recipes = json.loads(Path(params["recipes"]).read_text())
    key, recipe = recipes[params["i"]]
    return key, build(recipe)


def ray_style(params: dict, reporter: Any) -> Any:
    """Reports its value and returns a model (Ray ignores it), or returns its value."""
    key, value = case(params)
    if params["how"] == "report":
        reporter({"loss": LOSS, key: value})
        return Model()
    return {"loss": LOSS, key: value}


def train_and_return_model(config: dict, reporter: Any) -> Model:
    """Ray's older API, as the issue saw it: three reports, then the model returned."""
    for i in range(3):
        reporter(loss=1.0 / (i + 1))
    return Model()


def plain(params: dict) -> Any:
    """A plain function: reports, then returns a number or a model; or only returns a model."""
    if params["how"] == "model only":
        return Model()
    hyperlab.report(loss=LOSS)
    return 0.25 if params["how"] == "number" else Model()


def same(a: Any, b: Any) -> bool:
    """Equal, NaN equal to NaN, a bool never equal to a number."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b) and (isinstance(a, bool) or isinstance(b, bool)):
        return False
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def main() -> None:
    """A command trial: report the value, or give it as the final result (NNI's call)."""
    params = hyperlab.get_params()
    key, value = case(params)
    if params["how"] == "report":
        hyperlab.report({"loss": LOSS, key: value})
    else:
        import nni

        nni.report_final_result({"loss": LOSS, key: value})
