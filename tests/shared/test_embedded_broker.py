"""The embedded default (`make run`: filesystem broker) keeps all broker state under the service's var/
folder: queued messages and the `*.exchange` tables kombu writes when queues are bound and when
workers are pinged. Checked in a fresh interpreter whose working directory is an empty folder, since
kombu puts anything it is not told where to put in the working directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Sends one task (declares and binds the default queue, writes a message) and broadcasts a ping
# (binds a reply queue to the pidbox fanout exchange), which is what a running service does.
SCRIPT = """
import sys
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
