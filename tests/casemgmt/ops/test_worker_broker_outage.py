"""The case worker, started as deploy/Procfile starts it, rides out a Redis (broker) outage that
begins while it holds unacknowledged messages: it is still there when Redis is back, the work it was
holding is done exactly once, and it takes new work."""

from __future__ import annotations

import os
import sys
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
import redis

from casemgmt.config.celery import app
from casemgmt.connectors.delivery import deliveries_sweep
from casemgmt.connectors.models import Delivery
from shared.api.time import now_ms
from shared.conf import isolation_prefix
from tests.casemgmt.connectors.receiver import Receiver
from tests.casemgmt.workflows.conftest import Flow, task_step
from tests.support.processes import ServiceProcess, child_env, procfile_line, wait_for
from tests.support.redis_server import PrivateRedis

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def private_broker():
    """This test process publishes to the private Redis as well: Celery keeps its connection and
    producer pools per broker address, so pointing the app at another address and forgetting the
    pools it cached is enough."""
    server = PrivateRedis()
    server.start()
    original = app.conf.broker_url
    app.conf.broker_url = f"{server.url}/0"
    app._pool, app.amqp._producer_pool = None, None
    try:
        yield server
    finally:
        app.pool.force_close_all()
        app.conf.broker_url = original
        app._pool, app.amqp._producer_pool = None, None
        server.stop()


@pytest.fixture
def receiver():
    with Receiver() as server:
        yield server


def start_procfile_worker(env: dict[str, str]) -> ServiceProcess:
    """deploy/Procfile's case-worker command, the project's environment first on PATH."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    command = procfile_line("case-worker")
    return ServiceProcess(
        "case-worker-outage", ["bash", "-c", f"exec {command}"], child_env({**env, "PATH": path})
    )


def connector_step(url: str) -> dict:
    return {"id": "call", "name": "Call", "type": "connector", "connector": "http", "action": "request",
            "config": {"method": "POST", "url": url, "body": {"n": "{{case_number}}"}}}  # fmt: skip


def test_the_case_worker_rides_out_a_broker_outage_with_unacknowledged_messages(
    private_broker, receiver, subprocess_env, api, admin_user, settings
):
    settings.CONNECTOR_ALLOWED_HOSTS = ["127.0.0.1"]
    # A failed call is tried again a minute later: its message waits in the worker, unacknowledged.
    env = {**subprocess_env, "CASE_REDIS_URL": private_broker.url, "CASE_CONNECTOR_ALLOWED_HOSTS": "127.0.0.1",
           "CASE_CONNECTOR_RETRY_BASE_SECONDS": "60", "CASE_WORKER_RESTART_MIN_UPTIME_SECONDS": "1"}  # fmt: skip
    worker = start_procfile_worker(env)
    try:
        flow = Flow(api, admin_user)
        flow.workflow([connector_step(f"{receiver.url}/flaky/2"), task_step("review")])
        cases = [flow.case(), flow.case()]
        deliveries = Delivery.objects.filter(case_id__in=[c["id"] for c in cases])
        wait_for(lambda: deliveries.filter(status="pending", attempts=1).count() == 2, timeout=90,
                 what="both first calls to fail")  # fmt: skip
        wait_for(lambda: worker.log_text().count("received") >= 4, timeout=30,
                 what="the worker to hold both retries")  # fmt: skip

        private_broker.kill()  # every queued message is gone with it
        wait_for(lambda: worker.log_text().count("Cannot connect to") >= 3 or not worker.alive(),
                 timeout=60, what="the outage to be well under way")  # fmt: skip
        private_broker.start()

        # The periodic sweep (called here as the beat would, the retries' wait and its thirty
        # seconds of grace moved into the past) sends again what the outage lost.
        deliveries.update(next_attempt_at=now_ms() - timedelta(minutes=5))

        def all_delivered() -> bool:
            deliveries_sweep()
            return deliveries.filter(status="delivered").count() == 2

        wait_for(all_delivered, timeout=120, interval=0.5, what="both deliveries after the outage")
        assert [d.attempts for d in deliveries] == [2, 2]  # each retry sent once
        assert len(receiver.received()) == 4

        # And it takes new work.
        late = flow.case()
        wait_for(lambda: Delivery.objects.filter(case_id=late["id"]).exists(), what="the late delivery")
        late_delivery = Delivery.objects.get(case_id=late["id"])
        wait_for(lambda: Delivery.objects.get(pk=late_delivery.pk).attempts >= 1, timeout=60,
                 what="the worker to take a delivery queued after the outage")  # fmt: skip
        log = worker.log_text()
        assert worker.alive(), log[-4000:]
        assert "Unrecoverable error" not in log and "starting the case worker again" not in log
    finally:
        worker.stop()


def test_a_case_worker_that_stops_on_an_error_starts_itself_again(private_broker, subprocess_env):
    from django.conf import settings

    from casemgmt.ops.tasks import ping

    env = {
        **subprocess_env,
        "CASE_REDIS_URL": private_broker.url,
        "CASE_WORKER_RESTART_MIN_UPTIME_SECONDS": "0.5",
    }
    worker = start_procfile_worker(env)
    try:
        wait_for(lambda: "ready." in worker.log_text() or not worker.alive(), timeout=60, what="the worker")
        pid = worker.proc.pid
        # The queue's key holding a string makes the worker's BRPOP fail with an error Celery does
        # not recover from: the worker stops.
        broker = redis.Redis(port=private_broker.port, db=0)
        queue_key = f"{isolation_prefix()}{settings.CELERY_DEFAULT_QUEUE}"
        broker.set(queue_key, "not a list")
        wait_for(lambda: "starting the case worker again" in worker.log_text() or not worker.alive(),
                 timeout=60, what="the worker to stop and start again")  # fmt: skip
        broker.delete(queue_key)
        token = uuid.uuid4().hex
        cache = redis.Redis(port=private_broker.port, db=1)

        def pinged() -> bool:
            ping.delay(token)  # again until the fresh worker consumes (the first may go before it)
            return any(token.encode() in key for key in cache.keys("*ping*"))

        wait_for(pinged, timeout=60, interval=1, what="the restarted worker to run a task")
        log = worker.log_text()
        assert worker.alive() and worker.proc.pid == pid, log[-4000:]
        assert "Unrecoverable error" in log
    finally:
        worker.stop()
