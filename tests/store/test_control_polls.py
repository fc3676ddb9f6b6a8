"""A driver polls its control requests ten times a second; with many drivers on one PostgreSQL
server (issue 31, target 5) each poll is one statement outside a transaction, not BEGIN, the
query and ROLLBACK (three round trips)."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import event

from hyperlab.config import ExperimentOptions
from hyperlab.store import ExperimentRecord, SetConcurrency, Store
from hyperlab.trial import ExperimentStatus

pytestmark = pytest.mark.postgres


def test_a_control_poll_on_postgresql_opens_no_transaction(new_storage):
    store = Store.open(new_storage("postgresql"))
    record = ExperimentRecord(
        "polled", None, ExperimentStatus.RUNNING, ExperimentOptions(), {}, 0, None, 0.0
    )
    store.create_experiment(record)
    store.send_control("polled", SetConcurrency(value=3))
    states: list[psycopg.pq.TransactionStatus] = []

    @event.listens_for(store._engine, "after_cursor_execute")
    def _seen(conn, cursor, statement, *_args) -> None:
        if "FROM controls" in statement:
            states.append(cursor.connection.info.transaction_status)

    try:
        pending = store.pending_controls("polled")
        assert [c.request for c in pending] == [SetConcurrency(value=3)]
        assert states == [psycopg.pq.TransactionStatus.IDLE]  # no transaction left open
        with store._engine.connect() as conn:  # the pooled connection is back to transactions
            conn.exec_driver_sql("SELECT 1")
            assert conn.connection.dbapi_connection.info.transaction_status == (
                psycopg.pq.TransactionStatus.INTRANS
            )
    finally:
        store.close()
