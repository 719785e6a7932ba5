"""`make run`'s beat runs as a thread of the worker (shared.worker.beat_in_thread) rather than a
process of its own: it sends its periodic tasks from there."""

from __future__ import annotations

import multiprocessing
import threading

from celery import Celery

from shared.worker import beat_in_thread


def test_a_beat_thread_sends_its_periodic_task(tmp_path):
    app = Celery("beat-thread-test", broker="memory://", set_as_current=False)
    app.conf.beat_schedule = {"tick": {"task": "beat_thread_test.tick", "schedule": 0.2}}
    app.conf.task_default_queue = "beat-thread-test"
    threads_before = threading.active_count()
    service = beat_in_thread(app, str(tmp_path / "beat-schedule"))
    try:
        assert threading.active_count() == threads_before + 1 and not multiprocessing.active_children()
        with app.connection() as connection:
            message = connection.SimpleQueue("beat-thread-test").get(timeout=20)
            assert message.headers["task"] == "beat_thread_test.tick"
    finally:
        service.stop()
