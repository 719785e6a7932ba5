"""The floor for bench/orch_bench.py: the same two shapes as bare Celery tasks on the same Redis
broker, each running the same `true` command, with no database. Started as its own worker:
`celery -A bench.orch_celery_floor worker`."""

from __future__ import annotations

import os
import subprocess
import time

import redis
from celery import Celery

BROKER = os.environ.get("ORCH_BROKER_URL", "redis://127.0.0.1:6379/3")
PREFIX = "orchbench-floor:"
app = Celery("orch_celery_floor", broker=BROKER)
app.conf.update(
    task_default_queue="floor",
    broker_transport_options={"global_keyprefix": PREFIX},
    task_acks_late=True,
    worker_prefetch_multiplier=1,
    task_ignore_result=True,
)
_redis = redis.Redis.from_url(BROKER.rsplit("/", 1)[0] + "/5")


def run_true() -> None:
    subprocess.run(["/bin/sh", "-c", "true"], check=True, start_new_session=True)


@app.task(name="floor.hop")
def hop(key: str, index: int, length: int) -> None:
    """One link of a chain: records its start and end, then sends the next link."""
    started = time.time()
    run_true()
    ended = time.time()
    _redis.rpush(f"{key}:times", f"{index} {started} {ended}")
    if index + 1 < length:
        hop.delay(key, index + 1, length)


@app.task(name="floor.noop")
def noop(key: str) -> None:
    run_true()
    _redis.rpush(f"{key}:done", time.time())
