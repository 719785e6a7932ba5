"""Inbound webhooks and task notifications on SQLite (the embedded default): the PostgreSQL suite's
tests, run here unchanged, including concurrent replays of one delivery id."""

import pytest

from tests.casemgmt.notifications.test_task_emails import (  # noqa: F401 - collected here too
    flow_setup,
    test_case_text_is_escaped_in_the_html_body,
    test_one_email_per_task_event_and_person,
)
from tests.casemgmt.webhooks.test_inbound import (  # noqa: F401 - collected here too
    flow,
    test_a_delivery_creates_a_case_whose_workflow_starts,
    test_a_delivery_naming_a_case_merges_into_it,
    test_a_failed_delivery_can_be_retried_with_the_same_id,
    test_a_replayed_delivery_id_is_ignored,
    test_signed_deliveries,
)
from tests.casemgmt.webhooks.test_inbound_concurrency import (  # noqa: F401 - collected here too
    test_the_same_delivery_sent_at_once_makes_one_case,
)

pytestmark = pytest.mark.django_db
