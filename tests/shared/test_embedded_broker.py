"""The embedded default (`make run`: filesystem broker) keeps all broker state under the service's var/
folder: queued messages and the `*.exchange` tables kombu writes when queues are bound and when
workers are pinged. Checked in a fresh interpreter whose working directory is an empty folder, since
kombu puts anything it is not told where to put in the working directory."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.processes import ServiceProcess, wait_for

ROOT = Path(__file__).resolve().parents[2]

# Sends one task (declares and binds the default queue, writes a message) and broadcasts a ping
# (binds a reply queue to the pidbox fanout exchange), which is what a running service does.
SCRIPT = """
import sys
import time
import django
from {service}.config.celery import app

django.setup()
app.loader.import_default_modules()
app.send_task("{task}")
app.control.ping(timeout=0.2)
print(app.conf.broker_url, app.conf.broker_transport_options)
"""
SERVICES = {
    "casemgmt": ("CASE_VAR_DIR", "casemgmt.config.settings.local", "casemgmt.ops.ping", "case.default"),
    "orchestrator": (
        "ORCH_VAR_DIR",
        "orchestrator.config.settings.local",
        "orchestrator.system.ping",
        "orch.control",
    ),
}


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_filesystem_broker_writes_only_under_var(tmp_path: Path, service: str) -> None:
    var_env, settings_module, task, queue = SERVICES[service]
    var_dir = tmp_path / "var" / service
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("CASE_", "ORCH_", "DJANGO_", "PYTEST_", "TEST_"))
    }
    env.update(PYTHONPATH=str(ROOT), DJANGO_SETTINGS_MODULE=settings_module, **{var_env: str(var_dir)})

    result = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(service=service, task=task)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    assert "filesystem://" in result.stdout
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    outside = [path for path in written if not path.is_relative_to(var_dir)]
    assert outside == []
    broker = var_dir / "broker"
    exchanges = sorted(path.name for path in (broker / "control").glob("*.exchange"))
    assert f"{queue}.exchange" in exchanges
    assert "reply.celery.pidbox.exchange" in exchanges
    assert list(broker.glob("*.msg")), "the sent task was not written to the broker folder"


# Publishes COUNT messages as fast as it can, as the web and beat processes do.
PUBLISHER = """
import sys
import time
from kombu import Connection
options = dict(data_folder_in=sys.argv[1], data_folder_out=sys.argv[1], processed_folder=sys.argv[2])
with Connection(transport=sys.argv[3], transport_options=options) as conn:
    queue = conn.SimpleQueue("race")
    for index in range(int(sys.argv[4])):
        queue.put({"index": index, "pad": "x" * 4000})
"""
TRANSPORT = "shared.embedded_broker:Transport"


def test_a_consumer_polling_while_messages_are_written_gets_each_whole_once(tmp_path: Path) -> None:
    """kombu's transport made the message file before writing it: a consumer that looked in
    between took an empty file and stopped on it (JSONDecodeError), losing the message."""
    from kombu import Connection

    folder, processed, count = tmp_path / "broker", tmp_path / "processed", 1500
    folder.mkdir()
    processed.mkdir()
    publisher = subprocess.Popen(
        [sys.executable, "-c", PUBLISHER, str(folder), str(processed), TRANSPORT, str(count)],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    options = {
        "data_folder_in": str(folder),
        "data_folder_out": str(folder),
        "processed_folder": str(processed),
    }
    received: list[int] = []
    try:
        with Connection(transport=TRANSPORT, transport_options=options) as conn:
            queue = conn.SimpleQueue("race")
            deadline = time.monotonic() + 120
            while len(received) < count and time.monotonic() < deadline:
                try:
                    message = queue.get(block=False)
                except queue.Empty:
                    continue
                received.append(message.payload["index"])
                message.ack()
    finally:
        publisher.wait(timeout=120)
    assert received == list(range(count))


# Queues mail as the account service does (one welcome email per imported user), then an erasure
# as the vault does, before any worker runs: every message waits in the broker folder.
BURST = """
import uuid
import django
django.setup()
from casemgmt.accounts.queue import enqueue_welcome_email
from casemgmt.vault.queue import enqueue_erasure
for _ in range({count}):
    enqueue_welcome_email(str(uuid.uuid4()))
enqueue_erasure(uuid.uuid4())
"""


def test_make_runs_worker_takes_an_erasure_queued_behind_a_burst_of_mail_next(tmp_path: Path) -> None:
    """An erasure queued behind 40 welcome emails is among the first jobs `make run`'s case worker
    takes (it consumes the mail queue and the default queue in turn); it used to be the last one."""
    sys.path.insert(0, str(ROOT / "deploy"))
    import devserver

    var_dir = tmp_path / "var"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CASE_", "ORCH_", "DJANGO_", "PYTEST_"))}
    env.update(
        PYTHONPATH=str(ROOT),
        DJANGO_SETTINGS_MODULE="casemgmt.config.settings.local",
        CASE_VAR_DIR=str(var_dir),
    )
    subprocess.run(
        [sys.executable, "manage_case.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True, timeout=300
    )
    queued = subprocess.run(
        [sys.executable, "-c", BURST.format(count=40)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert queued.returncode == 0, queued.stderr

    worker = ServiceProcess("embedded-case-worker", devserver.process("case-worker")[1], env)
    try:
        received = re.compile(r"Task (\S+)\[[\w-]+\] received")

        def taken() -> list[str]:
            assert worker.alive(), worker.log_text()
            return [match[1] for match in received.finditer(worker.log_text())]

        def erasure_taken() -> list[str] | None:
            names = taken()
            return names if "casemgmt.vault.run_erasure" in names else None

        order = wait_for(erasure_taken, timeout=120, what="the worker to take the erasure")
    finally:
        worker.stop()
    position = order.index("casemgmt.vault.run_erasure")
    # resume_erasures is the worker's own start-up scan; both pool processes may hold mail already.
    assert order[:position].count("casemgmt.accounts.send_welcome_email") <= 2, order
