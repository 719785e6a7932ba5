"""The embedded default's WebSocket tickets: stored in the file cache (no Redis), one use."""

import pytest
from django.conf import settings

from casemgmt.accounts.authentication import authenticate_token
from casemgmt.realtime.tickets import ticket_redeem

pytestmark = pytest.mark.django_db


def test_a_ticket_from_the_api_redeems_once_from_the_file_cache(api, admin_user):
    assert settings.CACHES["default"]["BACKEND"].endswith("FileBasedCache")
    response = api(admin_user).post("/ws/ticket")
    assert response.status_code == 200, response.content
    credential = ticket_redeem(response.json()["ticket"])
    assert credential is not None and authenticate_token(credential)[0].pk == admin_user.pk
    assert ticket_redeem(response.json()["ticket"]) is None
