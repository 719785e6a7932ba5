"""When a schedule fires: cron expressions in a time zone, or fixed intervals, bounded by the
schedule's start and end dates. Pure functions of their arguments; every time here is UTC.

Cron follows Debian cron (the `cronsim` library) across daylight-saving changes:
- An expression with a fixed minute and hour (`30 2 * * *`) names a wall-clock time. When that
  time does not exist (clocks jump forward), it fires at the first minute after the gap (03:00);
  when it exists twice (clocks fall back), it fires once, at the first occurrence.
- An expression whose minute or hour field starts with `*` (`*/15 * * * *`, `0 * * * *`) follows
  real time: it fires in both passes of a repeated hour and not in a skipped one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

# Fire times between two instants further apart than this are found by walking back from the later
# one (a short walk however long the gap), nearer ones by walking forward from the earlier one.
FORWARD_WALK = timedelta(days=2)
SECOND = timedelta(seconds=1)


class BadTiming(ValueError):
    """A cron expression or time zone that cannot be used; the message says why."""


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise BadTiming(f"unknown time zone {name!r} (an IANA name such as Europe/Berlin)") from None


def check_cron(expr: str, tz: ZoneInfo) -> None:
    if len(expr.split()) != 5:
        raise BadTiming("cron must have 5 fields: minute hour day-of-month month day-of-week")
    try:
        next(CronSim(expr, datetime.now(tz)))
    except (CronSimError, StopIteration) as exc:
        raise BadTiming(f"invalid cron expression: {exc or 'it never fires'}") from None


@dataclass(frozen=True)
class Timing:
    cron: str | None
    interval_seconds: int | None
    tz: ZoneInfo
    anchor: datetime  # interval fire times are anchor + k * interval
    start: datetime | None = None
    end: datetime | None = None

    def _allowed(self, t: datetime) -> bool:
        return (self.start is None or t >= self.start) and (self.end is None or t <= self.end)

    def _cron_after(self, t: datetime) -> datetime | None:
        """The first cron fire time strictly after `t`. Debian cron's wall-clock rule can answer a
        time before `t` when `t` falls in the second pass of a repeated hour; those are skipped."""
        if self.cron is None:
            raise RuntimeError("a cron timing has its expression")
        try:
            for found in CronSim(self.cron, t.astimezone(self.tz)):
                utc = found.astimezone(UTC)
                if utc > t:
                    return utc
        except StopIteration:  # no fire time within 50 years
            return None
        return None  # pragma: no cover - CronSim iterates until it raises

    def _interval_after(self, t: datetime) -> datetime:
        if self.interval_seconds is None:
            raise RuntimeError("an interval timing has its interval")
        k = math.floor((t - self.anchor).total_seconds() / self.interval_seconds) + 1
        return self.anchor + timedelta(seconds=k * self.interval_seconds)

    def next_after(self, t: datetime) -> datetime | None:
        """The first fire time strictly after `t` within the start and end dates, or None."""
        if self.start is not None and t < self.start:
            t = self.start - SECOND  # the start date itself may be a fire time
        found = self._cron_after(t) if self.cron else self._interval_after(t)
        if found is None or (self.end is not None and found > self.end):
            return None
        return found

    def upcoming(self, now: datetime, count: int) -> list[datetime]:
        """The next `count` fire times at or after `now`."""
        out: list[datetime] = []
        t = now - SECOND
        while len(out) < count and (found := self.next_after(t)) is not None:
            out.append(found)
            t = found
        return out

    def latest_between(self, low: datetime, high: datetime, limit: int) -> list[datetime]:
        """At most `limit` fire times in [low, high], the most recent ones, oldest first."""
        if self.start is not None:
            low = max(low, self.start)
        if self.end is not None:
            high = min(high, self.end)
        if high < low:
            return []
        if self.interval_seconds:
            return self._interval_between(low, high, limit)
        if high - low <= FORWARD_WALK:
            found = self._walk_forward(low, high)
        else:
            found = self._walk_back(low, high, limit)
        return found[-limit:]

    def _interval_between(self, low: datetime, high: datetime, limit: int) -> list[datetime]:
        if self.interval_seconds is None:
            raise RuntimeError("an interval timing has its interval")
        step = self.interval_seconds
        first = math.ceil((low - self.anchor).total_seconds() / step)
        last = math.floor((high - self.anchor).total_seconds() / step)
        return [
            self.anchor + timedelta(seconds=k * step) for k in range(max(first, last - limit + 1), last + 1)
        ]

    def _walk_forward(self, low: datetime, high: datetime) -> list[datetime]:
        out: list[datetime] = []
        t = low - SECOND
        while (found := self._cron_after(t)) is not None and found <= high:
            out.append(found)
            t = found
        return out

    def _walk_back(self, low: datetime, high: datetime, limit: int) -> list[datetime]:
        if self.cron is None:
            raise RuntimeError("a cron timing has its expression")
        out: list[datetime] = []
        try:
            for found in CronSim(self.cron, (high + SECOND).astimezone(self.tz), reverse=True):
                utc = found.astimezone(UTC)
                if utc < low or len(out) == limit:
                    break
                if utc <= high:
                    out.append(utc)
        except StopIteration:
            pass
        return sorted(set(out))
