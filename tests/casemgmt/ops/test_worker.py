import uuid

import pytest
from django.core.cache import cache

from casemgmt.ops.tasks import ping
from tests.support.processes import wait_for


@pytest.mark.worker
def test_a_real_worker_runs_a_task_sent_through_redis(case_worker):
    token = uuid.uuid4().hex
    ping.delay(token)
    assert wait_for(lambda: cache.get(f"ping:{token}"), timeout=30, what="the worker to run ping") == "pong"
