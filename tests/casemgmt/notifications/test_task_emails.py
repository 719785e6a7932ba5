"""Task notification emails end to end: inbox API -> notification row -> on_commit -> Redis -> real
Celery worker -> real SMTP server (aiosmtpd), and none for a person who turned them off."""

from __future__ import annotations

import email
import uuid
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from casemgmt.notifications.models import Notification
from casemgmt.notifications.services import notification_send
from casemgmt.workflows.services import tasks_escalate_overdue
from tests.casemgmt.workflows.conftest import Flow, ok, task_step
from tests.support.processes import start_celery_worker, wait_for
from tests.support.smtp import Inbox, case_smtp_env, smtp_sink

WORKER = ["tasks:read", "tasks:claim", "tasks:complete", "cases:read"]


@pytest.fixture(scope="module")
def smtp_inbox():
    with smtp_sink() as sink:
        yield sink


@pytest.fixture(scope="module")
def mail_worker(subprocess_env, smtp_inbox):
    """A worker that sends over SMTP to the local server, on a queue of its own (concurrency 1, so
    notifications leave in the order they were queued)."""
    _inbox, port = smtp_inbox
    queue = f"case.notify-{uuid.uuid4().hex[:8]}"
    env = {
        **subprocess_env,
        **case_smtp_env(port),
        "CASE_NOTIFICATIONS_QUEUE": queue,
        # lets a tenant's email connector use the local SMTP server (loopback is refused otherwise)
        "CASE_CONNECTOR_ALLOWED_HOSTS": "127.0.0.1",
    }
    worker = start_celery_worker(
        name="case-notify-worker", app="casemgmt.config", queues=[queue], env=env, concurrency=1
    )
    try:
        yield queue
    finally:
        worker.stop()


@pytest.fixture
def setup(api, admin_user, tenant, make_user, settings, mail_worker, smtp_inbox):
    settings.NOTIFICATIONS_QUEUE = mail_worker
    ok(
        api(admin_user).put(
            "/tenant/branding",
            {"organizationName": "Umbrella Mutual", "primaryColor": "#aa1122", "secondaryColor": "#334455"},
            format="json",
        )
    )
    people = {
        name: make_user(tenant, permissions=WORKER, email=f"{name}-{uuid.uuid4().hex[:6]}@example.test")
        for name in ("alice", "bob", "carol")
    }
    return Flow(api, admin_user), people, smtp_inbox[0]


def one_email(inbox: Inbox, address: str, subject_part: str) -> email.message.Message:
    return wait_for(
        lambda: next((m for m in inbox.to(address) if subject_part in m["Subject"]), None),
        timeout=60,
        what=f"an email to {address} about {subject_part!r}",
    )


def parts(message: email.message.Message) -> tuple[str, str]:
    bodies = {
        p.get_content_type(): p.get_payload(decode=True).decode()
        for p in message.walk()
        if not p.is_multipart()
    }
    return bodies["text/plain"], bodies["text/html"]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_assignment_escalation_and_sla_breach_emails(setup, api):
    flow, people, inbox = setup
    alice, bob = people["alice"], people["bob"]
    flow.workflow([task_step("review", slaHours=4, assignTo=str(alice.id))])
    case = flow.case({"amount": 5, "title": "Dented car"})
    base = f"/tasks/{case['id']}/review"

    # assigned by the workflow at activation
    assigned = one_email(inbox, alice.email, "Task assigned to you")
    assert assigned["Subject"] == f"[Umbrella Mutual] Task assigned to you: Review ({case['caseNumber']})"
    text, html = parts(assigned)
    assert case["caseNumber"] in text and f"https://cases.example.test{base}" in text
    assert "Umbrella Mutual" in html and "#aa1122" in html and "#334455" in html
    assert "Dented car" in html

    # escalated to bob by the admin
    ok(
        api(flow.admin).post(
            f"{base}/escalate", {"reason": "needs a senior", "escalateTo": str(bob.id)}, format="json"
        )
    )
    escalated = one_email(inbox, bob.email, "Task escalated to you")
    assert "needs a senior" in parts(escalated)[0]

    # bob holds it; it passes its due time
    assert tasks_escalate_overdue(now=timezone.now() + timedelta(hours=5)) == 0  # escalated already
    flow.workflow([task_step("check", slaHours=1)])
    second = flow.case({"amount": 6})
    ok(api(bob).post(f"/tasks/{second['id']}/check/claim"))  # his own claim: no email
    assert tasks_escalate_overdue(now=timezone.now() + timedelta(hours=2)) == 1
    overdue = one_email(inbox, bob.email, "Task overdue")
    assert second["caseNumber"] in overdue["Subject"]
    assert not [m for m in inbox.to(bob.email) if "Task assigned" in m["Subject"]]

    def rows() -> list[tuple[str, str]]:  # a fresh query each time (a queryset caches its rows)
        return sorted(Notification.objects.filter(recipient__in=[alice, bob]).values_list("event", "status"))

    expected = [("assigned", "sent"), ("escalated", "sent"), ("sla_breached", "sent")]
    # the worker marks a row sent just after the SMTP server took the message
    wait_for(lambda: rows() == expected, timeout=30, what="the notifications marked sent")


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_no_email_when_the_preference_is_off(setup, api):
    flow, people, inbox = setup
    carol, alice = people["carol"], people["alice"]
    ok(api(carol).put("/auth/preferences", {"emailNotifications": False}, format="json"))
    flow.workflow([task_step("review", slaHours=1)])
    case = flow.case()
    base = f"/tasks/{case['id']}/review"
    ok(api(flow.admin).post(f"{base}/reassign", {"assignTo": str(carol.id)}, format="json"))
    assert tasks_escalate_overdue(now=timezone.now() + timedelta(hours=2)) == 1
    # a later email to someone else, through the same single-threaded worker, marks the queue drained
    ok(api(flow.admin).post(f"{base}/reassign", {"assignTo": str(alice.id)}, format="json"))
    one_email(inbox, alice.email, "Task assigned to you")
    assert inbox.to(carol.email) == []
    assert not Notification.objects.filter(recipient=carol).exists()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_tenant_email_connector_is_the_transport(setup, api, smtp_inbox, settings):
    flow, people, inbox = setup
    settings.CONNECTOR_ALLOWED_HOSTS = ["127.0.0.1"]
    config = {
        "host": "127.0.0.1",
        "port": smtp_inbox[1],
        "use_tls": False,
        "from": "Umbrella <cases@umbrella.test>",
    }
    ok(api(flow.admin).put("/connectors/email/config", {"config": config}, format="json"))
    alice = people["alice"]
    flow.workflow([task_step("review", assignTo=str(alice.id))])
    flow.case()
    message = one_email(inbox, alice.email, "Task assigned to you")
    assert message["From"] == "Umbrella <cases@umbrella.test>"


@pytest.mark.django_db
def test_a_refused_tenant_smtp_host_fails_without_retry(flow_setup, api):
    flow, alice, _bob = flow_setup
    config = {"host": "127.0.0.2", "port": 2525, "use_tls": False, "from": "cases@umbrella.test"}
    stored = api(flow.admin).put("/connectors/email/config", {"config": config}, format="json")
    assert stored.status_code == 200, stored.content
    flow.workflow([task_step("review", assignTo=str(alice.id))])
    flow.case()
    row = Notification.objects.get(recipient=alice)
    assert notification_send(notification_id=row.id) == "failed"  # loopback, not allow-listed
    row.refresh_from_db()
    assert row.status == "failed" and "127.0.0.2" in row.last_error and not mail.outbox


@pytest.mark.django_db
def test_one_email_per_task_event_and_person(flow_setup, django_capture_on_commit_callbacks):
    flow, alice, bob = flow_setup
    flow.workflow([task_step("review")])
    case = flow.case()
    base = f"/tasks/{case['id']}/review"
    for target in (alice, bob, alice):  # alice is assigned twice: one notification
        ok(flow.client.post(f"{base}/reassign", {"assignTo": str(target.id)}, format="json"))
    rows = Notification.objects.filter(step__case_id=case["id"])
    assert sorted(rows.values_list("recipient__email", flat=True)) == sorted([alice.email, bob.email])
    first = rows.get(recipient=alice)
    assert notification_send(notification_id=first.id) == "sent"
    assert notification_send(notification_id=first.id) == "not pending"  # a redelivered job
    assert len(mail.outbox) == 1 and mail.outbox[0].to == [alice.email]
    # turned off after it was queued: skipped at send time
    bob.preferences = {"emailNotifications": False}
    bob.save(update_fields=["preferences"])
    assert notification_send(notification_id=rows.get(recipient=bob).id) == "skipped"
    assert len(mail.outbox) == 1


@pytest.fixture
def flow_setup(api, admin_user, tenant, make_user):
    return Flow(api, admin_user), make_user(tenant, permissions=WORKER), make_user(tenant, permissions=WORKER)


@pytest.mark.django_db
def test_case_text_is_escaped_in_the_html_body(flow_setup):
    flow, alice, _bob = flow_setup
    flow.workflow([task_step("review", assignTo=str(alice.id))])
    flow.case({"amount": 1, "title": "<script>alert(1)</script>"})
    assert notification_send(notification_id=Notification.objects.get(recipient=alice).id) == "sent"
    [message] = mail.outbox
    html = message.alternatives[0][0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>" not in html
    assert "<script>alert(1)</script>" in message.body  # the plain-text body shows it as written
