"""A client of the case service's API: cases and the task inbox. Authenticates with a bearer
token (a JWT from /auth/login, or an agent principal's API key)."""

from __future__ import annotations

from typing import Any

from shared.client.base import HttpxTransport, JsonClient, Transport, path, with_query


class CaseClient:
    def __init__(self, base_url: str, token: str = "", *, transport: Transport | None = None) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = JsonClient(base_url, headers, transport or HttpxTransport())

    def cases_list(self, *, status: str | None = None, limit: int = 25) -> dict[str, Any]:
        query = {"status": status, "limit": limit}
        return self.http.call("GET", with_query("/cases", query))

    def case_get(self, case_id: str) -> dict[str, Any]:
        return self.http.call("GET", path("cases", case_id))

    def case_create(
        self, *, case_type: str, data: dict[str, Any], title: str | None = None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"case_type_key": case_type, "case_data": data}
        if title:
            body["displayName"] = title
        return self.http.call("POST", "/cases", body)

    def inbox(self, *, status: str | None = None, limit: int = 25) -> dict[str, Any]:
        return self.http.call("GET", with_query("/tasks/inbox", {"status": status, "limit": limit}))

    def task_claim(self, case_id: str, step_id: str) -> dict[str, Any]:
        return self.http.call("POST", path("tasks", case_id, step_id, "claim"))

    def task_complete(
        self, case_id: str, step_id: str, *, data: dict[str, Any] | None = None, outcome: str | None = None
    ) -> dict[str, Any]:
        body = {"data": data or {}, "outcome": outcome}
        return self.http.call("POST", path("tasks", case_id, step_id, "complete"), body)
