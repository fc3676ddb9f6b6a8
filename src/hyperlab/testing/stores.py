"""``StoreContract``: the store's behaviour through its API, as tests to run over any backend.

The same tests run over every database a ``Store`` can open (in memory, a SQLite file,
PostgreSQL), as Optuna's ``StorageTestCase`` runs over its storages. Subclass the contract in a
test module and provide one fixture, ``storage``: the storage string of a new, empty database
for each test (anything ``Store.open`` takes):

```python
# tests/test_my_store.py
import pytest
from hyperlab.testing import StoreContract

class TestSQLiteStore(StoreContract):
    @pytest.fixture
    def storage(self, tmp_path):
        return str(tmp_path / "store.db")
```

Parametrize ``storage`` to run the contract over several backends in one class
(``@pytest.fixture(params=["memory", "sqlite", "postgresql"])``, then build the string from
``request.param``). Each test must get a database with no hyperlab tables in it: on PostgreSQL,
create a schema per test, point the URL at it with the connection option
``options=-csearch_path=<schema>``, and drop the schema when the test ends.

The tests take three fixtures; the contract builds the last two from ``storage``, and a
subclass may override them too:

- ``storage``: the storage string (required; the default raises, saying so);
- ``store``: a ``Store`` open on it, stamping times from a ticking fake clock (1000.0,
  1001.0, ... one second per stamp: the tests check these stamps, so an override must open
  its store with such a clock too), closed after the test;
- ``other``: a second ``Store`` on the same database with its own engine, as a reader (CLI,
  server) would open it; or ``store`` itself for an in-memory database, which no other
  ``Store`` can see. Tests about separate readers are skipped then.

What every backend must do, checked here: records round-trip exactly (unicode, big seeds,
bytes, nested JSON, NaN and infinities); buffered writes are invisible to other stores until
``flush``, which writes them all in one transaction or none (and keeps them for a retry);
repeated puts of a trial coalesce while each status change is one event; reads are ordered
and cheap (a fixed number of queries); experiments list with counts and the best value per
mode, and delete with everything they own; a unique name is held by one experiment, whichever
of several racing creators wins, and a claim is defined once; control requests keep their
order, types and outcomes; readers neither wait for a write in progress nor see it; reads from
other threads run while the driver writes.

Some tests look below the API (the SELECTs the store runs, rows of its tables), so the
contract is for the backends of ``hyperlab.store.Store``, not for other classes.

The contract needs pytest. Its module is not a test module, so pytest does not rewrite its
``assert`` statements unless told to: for detailed failure messages call
``pytest.register_assert_rewrite("hyperlab.testing")`` in a ``conftest.py`` before the
contract is imported.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from hyperlab.errors import StoreError
from hyperlab.store import (
    Store,
)
from hyperlab.testing._store_access import AccessCases
from hyperlab.testing._store_cases import RecordCases, Ticks
from hyperlab.testing._store_names import NameCases

__all__ = ["StoreContract"]


class StoreContract(RecordCases, NameCases, AccessCases):
    """The store's conformance suite; subclass it and provide the ``storage`` fixture.

    See the module docstring for the fixtures and how to run it. Example:

    ```python
    class TestMyStore(StoreContract):
        @pytest.fixture
        def storage(self, tmp_path):
            return str(tmp_path / "store.db")
    ```
    """

    # ---- fixtures --------------------------------------------------------------------------

    @pytest.fixture
    def storage(self) -> str:
        """The storage string of a new, empty database; a subclass must provide it.

        Raises:
            NotImplementedError: always; override this fixture.
        """
        raise NotImplementedError(
            "StoreContract needs a `storage` fixture: subclass StoreContract in a test module "
            "and define `@pytest.fixture def storage(self, ...)` returning what Store.open "
            "takes for a new, empty database, e.g. `str(tmp_path / 'store.db')`, ':memory:', "
            "or a postgresql:// URL whose search_path is a schema of its own"
        )

    @pytest.fixture
    def store(self, storage: str) -> Iterator[Store]:
        """An open store on ``storage``, stamping 1000.0, 1001.0, ...; closed after the test."""
        opened = Store.open(storage, clock=Ticks())
        yield opened
        with contextlib.suppress(StoreError):  # a test may leave rows that cannot be written
            opened.close()

    @pytest.fixture
    def other(self, store: Store, storage: str) -> Iterator[Store]:
        """A second store on the database of ``store`` (its own engine); ``store`` in memory."""
        if store.in_memory:
            yield store
            return
        second = Store.open(storage)
        yield second
        second.close()
