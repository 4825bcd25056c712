"""The collector pause (schedopt.gcpause): restored as found, once, after nested and concurrent pauses."""

from __future__ import annotations

import gc
import threading

from schedopt.gcpause import paused_gc
from schedopt.testing import random_tiny_instance

import schedopt


def test_pause_restores_the_collector_as_found() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still runs
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # a host that disabled it keeps it so
    finally:
        gc.enable()


def test_pause_is_restored_after_an_error_and_concurrent_solves() -> None:
    try:
        with paused_gc():
            raise ValueError("inside")
    except ValueError:
        pass
    assert gc.isenabled()
    inst = random_tiny_instance(3)
    threads = [threading.Thread(target=lambda: [schedopt.solve(inst, "optimus-greedy") for _ in range(20)])
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert gc.isenabled()
