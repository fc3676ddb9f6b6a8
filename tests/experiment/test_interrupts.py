"""Ctrl-C waits for the end of a critical block while a driver runs, and only then."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from hyperlab._interrupts import critical, interrupts_deferred


def _ctrl_c() -> None:
    os.kill(os.getpid(), signal.SIGINT)


def test_an_interrupt_inside_a_critical_block_is_raised_at_its_end():
    done = []
    with pytest.raises(KeyboardInterrupt), interrupts_deferred():
        with critical():
            _ctrl_c()
            with critical():  # nested: still waits for the outermost end
                done.append("inner")
            done.append("outer")  # the block ran to its end
        done.append("after")  # never: raised where the block ended
    assert done == ["inner", "outer"]


def test_an_interrupt_outside_a_critical_block_is_raised_at_once():
    done = []
    with pytest.raises(KeyboardInterrupt), interrupts_deferred():
        _ctrl_c()
        for _ in range(1000):  # the handler runs at the next bytecode boundary
            done.append(1)
    assert len(done) < 1000


def test_python_s_handler_is_back_afterwards_and_a_users_handler_is_left_alone():
    with interrupts_deferred():
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

    seen = []
    previous = signal.signal(signal.SIGINT, lambda *_: seen.append("user"))
    try:
        with interrupts_deferred(), critical():
            _ctrl_c()
            for _ in range(1000):
                pass
        assert seen == ["user"]  # the user's handler ran, inside the block, as they wrote it
    finally:
        signal.signal(signal.SIGINT, previous)


def test_outside_the_main_thread_nothing_is_installed():
    handlers = []

    def body() -> None:
        with interrupts_deferred(), critical():
            handlers.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    assert handlers == [signal.default_int_handler]
