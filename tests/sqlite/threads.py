"""Threads released at once, each with its own database connection (SQLite: its own file handle)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.db import connections


def race(calls: list[Callable[[], Any]]) -> list[Any]:
    """Runs the calls at once, one thread and one database connection each; returns their results."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            barrier.wait()
            results[index] = calls[index]()
        except BaseException as exc:  # noqa: BLE001 - surfaced by the assertion below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [], errors
    return results
