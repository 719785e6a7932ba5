"""The time zones a person picks from: the IANA region/city names and UTC, without the tz
database's aliases and internals (Factory, localtime, posixrules, Etc/GMT+5, US/Eastern, EST5EDT,
...). Both consoles offer these in a searchable list; any valid zone name is still accepted."""

from __future__ import annotations

import zoneinfo
from functools import cache

_REGIONS = (
    "Africa/",
    "America/",
    "Antarctica/",
    "Arctic/",
    "Asia/",
    "Atlantic/",
    "Australia/",
    "Europe/",
    "Indian/",
    "Pacific/",
)


@cache
def pickable_zones() -> list[str]:
    return ["UTC", *sorted(z for z in zoneinfo.available_timezones() if z.startswith(_REGIONS))]
