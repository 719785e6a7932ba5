"""The notification email: a plain-text and an HTML body in the tenant's branding."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.utils.html import escape

from casemgmt.notifications.models import Notification
from casemgmt.tenancy.defaults import DEFAULT_COLORS
from casemgmt.tenancy.models import Branding
from casemgmt.tenancy.selectors import terminology_of
from shared.api.time import iso

if TYPE_CHECKING:
    from casemgmt.workflows.models import CaseStep

HEX_COLOUR = re.compile(r"^#[0-9A-Fa-f]{6}$")

HEADLINES = {
    Notification.ASSIGNED: "{task} assigned to you",
    Notification.ESCALATED: "{task} escalated to you",
    Notification.SLA_BREACHED: "{task} overdue",
}
SENTENCES = {
    Notification.ASSIGNED: "The {task_l} \u201c{step}\u201d of {case_l} {number} is now assigned to you.",
    Notification.ESCALATED: "The {task_l} \u201c{step}\u201d of {case_l} {number} was escalated to you.",
    Notification.SLA_BREACHED: "The {task_l} \u201c{step}\u201d of {case_l} {number} you hold is past its due time.",
}


def _colour(branding: Branding | None, name: str) -> str:
    # Colours go into a style attribute: only #RRGGBB is used, anything else falls back.
    value = str(((branding.colors if branding else None) or {}).get(name) or "")
    return value if HEX_COLOUR.match(value) else DEFAULT_COLORS[name]


def _facts(step: CaseStep, labels: dict[str, str]) -> list[tuple[str, str]]:
    case = step.case
    facts = [
        (labels["case"], f"{case.case_number} \u2014 {case.display_name}"),
        (labels["task"], step.name),
    ]
    if step.due_at:
        facts.append(("Due", iso(step.due_at) or ""))
    if step.escalated and step.escalation_reason:
        facts.append(("Reason", step.escalation_reason))
    return facts


@dataclass(frozen=True)
class Content:
    """What both bodies say."""

    organisation: str
    greeting: str
    sentence: str
    facts: list[tuple[str, str]]
    link: str
    footer: str
    why: str = "You receive this email because email notifications are on in your preferences."


def _content(notification: Notification, branding: Branding | None) -> tuple[str, Content]:
    step, recipient, tenant = notification.step, notification.recipient, notification.tenant
    organisation = (branding.company_name if branding else "") or tenant.name
    labels = terminology_of(tenant_id=tenant.id)
    headline = HEADLINES[notification.event].format(task=labels["task"])
    sentence = SENTENCES[notification.event].format(
        task_l=labels["task"].lower(),
        case_l=labels["case"].lower(),
        step=step.name,
        number=step.case.case_number,
    )
    subject = f"[{organisation}] {headline}: {step.name} ({step.case.case_number})"
    return subject, Content(
        organisation=organisation,
        greeting=f"Hello {recipient.display_name or recipient.email},",
        sentence=sentence,
        facts=_facts(step, labels),
        link=f"{settings.PUBLIC_BASE_URL.rstrip('/')}/tasks/{step.case_id}/{step.step_id}",
        footer=(branding.powered_by if branding else "") or organisation,
    )


def notification_email(
    notification: Notification, *, from_email: str | None = None
) -> EmailMultiAlternatives:
    branding = Branding.objects.filter(tenant_id=notification.tenant_id).first()
    subject, content = _content(notification, branding)
    message = EmailMultiAlternatives(
        subject=subject,
        body=_text(content),
        from_email=from_email,
        to=[notification.recipient.email],
        headers={"X-Notification-Id": str(notification.id)},
    )
    message.attach_alternative(_html(content, branding), "text/html")
    return message


def _text(c: Content) -> str:
    facts = [f"{k}: {v}" for k, v in c.facts]
    return "\n".join([c.greeting, "", c.sentence, "", *facts, "", f"Open it: {c.link}", "", c.why, c.footer])


def _html(c: Content, branding: Branding | None) -> str:
    primary, secondary = _colour(branding, "primary"), _colour(branding, "secondary")
    rows = "".join(
        f'<tr><td style="padding:2px 12px 2px 0;color:{secondary}">{escape(k)}</td><td>{escape(v)}</td></tr>'
        for k, v in c.facts
    )
    logo = (
        f'<img src="{escape(branding.logo_url)}" alt="" height="32" style="vertical-align:middle;margin-right:8px">'
        if branding and branding.logo_url
        else ""
    )
    return (
        '<!DOCTYPE html><html><body style="margin:0;font-family:Arial,sans-serif;color:#1f2933">'
        f'<div style="background:{primary};color:#ffffff;padding:16px 24px;font-size:18px">'
        f"{logo}{escape(c.organisation)}</div>"
        f'<div style="padding:24px"><p>{escape(c.greeting)}</p><p>{escape(c.sentence)}</p>'
        f'<table style="border-collapse:collapse;margin:12px 0">{rows}</table>'
        f'<p><a href="{escape(c.link)}" style="background:{primary};color:#ffffff;padding:10px 16px;'
        f'text-decoration:none;border-radius:4px;display:inline-block">Open</a></p>'
        f'<p style="color:{secondary};font-size:12px">{escape(c.why)}</p></div>'
        f'<div style="border-top:3px solid {secondary};padding:12px 24px;font-size:12px;color:{secondary}">'
        f"{escape(c.footer)}</div></body></html>"
    )
