"""Run a notebook saved as a script of ``# %%`` cells the way Jupyter runs it: cell by cell in
one namespace, showing the value of each cell's last expression (its ``Out[n]``), with a pause
after each code cell, as a person reading the outputs takes.

usage: python run_cells.py SCRIPT OUT.json [--pause SECONDS]

Each shown value is printed and written to OUT.json as ``{"cell", "code", "repr", "value"}``,
NNI's records (dataclasses) as dicts, so that a test can read what the notebook showed.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import time
from pathlib import Path
from typing import Any


def plain(value: Any) -> Any:
    """``value`` as JSON: dataclasses (NNI's records) as dicts."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: plain(getattr(value, field.name)) for field in dataclasses.fields(value)
        }
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("script")
    parser.add_argument("out")
    parser.add_argument("--pause", type=float, default=0.0)
    args = parser.parse_args()
    namespace: dict[str, Any] = {"__name__": "__main__"}
    shown = []
    for number, cell in enumerate(Path(args.script).read_text().split("\n# %%\n")):
        tree = ast.parse(cell)
        if not tree.body:  # a markdown cell
            continue
        last = tree.body[-1] if isinstance(tree.body[-1], ast.Expr) else None
        body = tree.body[:-1] if last is not None else tree.body
        exec(compile(ast.Module(body, type_ignores=[]), f"<cell {number}>", "exec"), namespace)
        if last is not None:
            code = compile(ast.Expression(last.value), f"<cell {number}>", "eval")
            value = eval(code, namespace)
            if value is not None:
                print(f"Out[{number}]: {value!r}", flush=True)
                text = ast.get_source_segment(cell, last) or ""
                shown.append(
                    {"cell": number, "code": text, "repr": repr(value), "value": plain(value)}
                )
                Path(args.out).write_text(json.dumps(shown, indent=1))
        time.sleep(args.pause)
    Path(args.out).write_text(json.dumps(shown, indent=1))


if __name__ == "__main__":
    main()
