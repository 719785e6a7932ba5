"""The orchestrator's Django admin carries the product's name, not Django's."""

from __future__ import annotations

import pytest
from django.test import Client


@pytest.mark.django_db
def test_admin_login_page_names_the_product():
    page = Client().get("/admin/login/")
    assert page.status_code == 200
    assert b"Workflow Orchestration" in page.content
    assert b"Django administration" not in page.content and b"Django site admin" not in page.content
