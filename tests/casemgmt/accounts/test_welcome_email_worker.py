"""The welcome email end to end: API -> on_commit -> Redis -> real Celery worker -> real SMTP server."""

from __future__ import annotations

import re
import uuid

import pytest

from tests.support.processes import start_celery_worker, wait_for
from tests.support.smtp import case_smtp_env, smtp_sink

NEW_PASSWORD = "welcome-aboard-passphrase-2026"


@pytest.fixture(scope="module")
def smtp_inbox():
    with smtp_sink() as sink:
        yield sink


@pytest.fixture(scope="module")
def mail_worker(subprocess_env, smtp_inbox):
    """A worker whose settings (from its environment) send mail over SMTP to the local server and
    which consumes a queue of its own, so the shared case worker never takes these tasks."""
    _inbox, port = smtp_inbox
    queue = f"case.mail-{uuid.uuid4().hex[:8]}"
    env = {
        **subprocess_env,
        **case_smtp_env(port),
        "CASE_ACCOUNTS_EMAIL_QUEUE": queue,
    }
    worker = start_celery_worker(
        name="case-mail-worker", app="casemgmt.config", queues=[queue], env=env, concurrency=1
    )
    try:
        yield queue
    finally:
        worker.stop()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_new_principal_receives_a_link_that_sets_the_password(
    api, admin_user, settings, smtp_inbox, mail_worker
):
    inbox, _port = smtp_inbox
    settings.ACCOUNTS_EMAIL_QUEUE = mail_worker
    address = f"newcomer-{uuid.uuid4().hex[:8]}@example.test"
    created = api(admin_user).post(
        "/admin/principals", {"email": address, "displayName": "Nia", "roles": ["viewer"]}, format="json"
    )
    assert created.status_code == 201, created.content

    message = wait_for(
        lambda: next((m for m in inbox.messages if m["To"] == address), None),
        timeout=60,
        what="the welcome email",
    )
    body = message.get_payload(decode=True).decode()
    assert message["Subject"].startswith("Welcome to ")
    # The link opens the console's set-password page; its token is the one the API takes.
    link = re.search(r"https://cases\.example\.test/console/password/set\?token=(\S+)", body)
    assert link, body

    anon = api(None)
    response = anon.post(
        "/auth/password/set", {"token": link.group(1), "newPassword": NEW_PASSWORD}, format="json"
    )
    assert response.status_code == 204, response.content
    login = anon.post("/auth/login", {"email": address, "password": NEW_PASSWORD}, format="json")
    assert login.status_code == 200
    assert login.json()["user"]["displayName"] == "Nia"
