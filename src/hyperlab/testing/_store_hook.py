"""The conformance suites' one way into a store's insides, for fault injection and inspection
the public API does not offer: raw read and write transactions, rows written as a newer
hyperlab would write them, the statements a store runs.

Every reach of ``hyperlab.testing`` into ``hyperlab.store``'s private modules and attributes goes
through here; ``tests/test_seams.py`` allows this module and no other.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection

from hyperlab.store import Store
from hyperlab.store._engine import WRITE
from hyperlab.store._schema import controls, trials

__all__ = ["controls", "count_selects", "engine_write", "read", "trials", "write"]


def read(store: Store) -> AbstractContextManager[Connection]:
    """A read transaction of ``store``, as its own reads take one."""
    return store._read()


def write(store: Store, action: str) -> AbstractContextManager[Connection]:
    """A write transaction of ``store``, as its flushes take one (``action`` names it in errors)."""
    return store._write(action)


@contextmanager
def engine_write(store: Store) -> Iterator[Connection]:
    """A write transaction straight on ``store``'s engine, past its lock, open for the block."""
    with store._engine.connect().execution_options(**WRITE) as conn, conn.begin():
        yield conn


def count_selects(store: Store) -> list[str]:
    """The SELECT statements the store runs from now on (the list grows as it runs them)."""
    seen: list[str] = []

    def before(
        conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
    ) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append(statement)

    event.listen(store._engine, "before_cursor_execute", before)
    return seen
