"""Which cases a WebSocket reader may hear about: a case type's `accessTeams` hides its cases from
non-members. The cases app sits above realtime, so it registers the reader of a case's access
teams here from its `AppConfig.ready()`."""

from __future__ import annotations

from collections.abc import Callable

# Given a case id: its access teams as stored on the case ("" = open), or None for no such case.
CaseTeams = Callable[[str], "str | None"]
_READERS: list[CaseTeams] = []


def case_teams_register(reader: CaseTeams) -> None:
    if reader not in _READERS:
        _READERS.append(reader)


def case_teams(case_id: str) -> str | None:
    for reader in _READERS:
        return reader(case_id)
    return ""


def may_hear(teams_setting: str, case_access: str | None) -> bool:
    """The database policy's rule, for messages: open cases, every team, or a shared team."""
    if not case_access or teams_setting == "*":
        return True
    return bool(set(case_access.split(",")) & set(filter(None, teams_setting.split(","))))
