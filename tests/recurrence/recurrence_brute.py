"""An independent, slow reference for the recurrence contract, for property tests.

It shares no code with `horarium.recurrence`: it walks the calendar day by day and each
matching day minute by minute, checks every minute against the schedule's definition in
docs/recurrence.md, "The rules" (written out plainly with `datetime`), turns matching wall-clock
times into instants with fold=0 and keeps each instant once.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

DAY_NAMES = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
MINUTE = timedelta(minutes=1)
HOUR = timedelta(hours=1)


@dataclass
class Job:
    """The inputs, already plain: what a test generates and also renders as job JSON."""

    zone: ZoneInfo
    frequency: str  # "Minute" … "Year"
    interval: int
    created: datetime  # aware UTC
    start_wall: datetime | None = None  # naive wall-clock startTime, or
    start_instant: datetime | None = None  # an aware startTime
    schedule: dict[str, list[object]] | None = None
    end: datetime | None = None
    extra: dict[str, object] = field(default_factory=dict)
    zone_name: str | None = None  # as written in the job JSON (e.g. a Windows name)

    def anchor(self) -> tuple[datetime, datetime]:
        """(anchor instant UTC, anchor wall-clock naive) per the design doc's terms."""
        if self.start_wall is not None:
            return _resolve(self.start_wall, self.zone), self.start_wall
        instant = self.start_instant or self.created
        return instant.astimezone(UTC), instant.astimezone(self.zone).replace(tzinfo=None)

    def has_start(self) -> bool:
        return self.start_wall is not None or self.start_instant is not None


def _resolve(wall: datetime, zone: ZoneInfo) -> datetime:
    return wall.replace(tzinfo=zone, fold=0).astimezone(UTC)


def _months_between(a: date, b: date) -> int:
    return (b.year - a.year) * 12 + b.month - a.month


def _week_monday(d: date) -> date:
    return d - timedelta(days=d.weekday())


def _is_run_day(job: Job, anchor_wall: datetime, d: date) -> bool:
    """Does the schedule run on calendar day `d` (in the zone)? Design doc §2–3."""
    n = job.interval
    s = job.schedule
    a = anchor_wall.date()
    if job.frequency == "Day":
        return (d - a).days % n == 0
    if job.frequency == "Week":
        if ((_week_monday(d) - _week_monday(a)).days // 7) % n != 0:
            return False
        names = [str(x).lower() for x in (s or {}).get("weekDays", [])]
        wanted = [DAY_NAMES.index(x) for x in names] or [a.weekday()]
        return d.weekday() in wanted
    if job.frequency == "Month":
        if _months_between(a, d) % n != 0:
            return False
        length = calendar.monthrange(d.year, d.month)[1]
        if s is None:  # clamped to the month's end, like .NET AddMonths
            return d.day == min(a.day, length)
        month_days = [int(x) for x in s.get("monthDays", [])]  # type: ignore[call-overload]
        occurrences = s.get("monthlyOccurrences", [])
        if not month_days and not occurrences:
            return d.day == a.day
        for md in month_days:
            if md > 0 and d.day == md:
                return True
            if md < 0 and d.day == length + 1 + md:
                return True
        for occ in occurrences:
            assert isinstance(occ, dict)
            lowered = {k.lower(): v for k, v in occ.items()}
            if DAY_NAMES.index(str(lowered["day"]).lower()) != d.weekday():
                continue
            nth = lowered.get("occurrence")
            if nth is None:
                return True
            from_start = (d.day - 1) // 7 + 1
            from_end = (length - d.day) // 7 + 1
            if (nth > 0 and from_start == nth) or (nth < 0 and from_end == -nth):
                return True
        return False
    if job.frequency == "Year":
        if (d.year - a.year) % n != 0 or d.month != a.month:
            return False
        length = calendar.monthrange(d.year, d.month)[1]
        if s is None:
            return d.day == min(a.day, length)
        return d.day == a.day
    raise AssertionError(job.frequency)


def _times_match(job: Job, anchor_wall: datetime, wall: datetime) -> bool:
    s = job.schedule or {}
    minutes = s.get("minutes")
    hours = s.get("hours")
    if job.schedule is None:
        return (wall.hour, wall.minute) == (anchor_wall.hour, anchor_wall.minute)
    want_minutes = minutes if minutes else [anchor_wall.minute]
    want_hours = hours if hours else (list(range(24)) if minutes else [anchor_wall.hour])
    return wall.hour in want_hours and wall.minute in want_minutes


def _sub_minute(job: Job, anchor_wall: datetime) -> timedelta:
    """Seconds rule: 0 when minutes are given, else the anchor's seconds (and microseconds)."""
    if job.schedule is not None and job.schedule.get("minutes"):
        return timedelta(0)
    return timedelta(seconds=anchor_wall.second, microseconds=anchor_wall.microsecond)


def _series_runs_from(job: Job, t: datetime, wanted: int, horizon_days: int) -> list[datetime]:
    """The series' instants ≥ t (no startTime/created floor), at most `wanted`, brute force."""
    anchor, anchor_wall = job.anchor()
    zone = job.zone
    found: set[datetime] = set()
    if job.frequency in ("Minute", "Hour") and job.schedule is None:
        step = job.interval * (MINUTE if job.frequency == "Minute" else HOUR)
        u = max(t, anchor).replace(second=0, microsecond=0) - MINUTE
        u += timedelta(seconds=anchor.second, microseconds=anchor.microsecond)
        end = u + timedelta(days=horizon_days)
        while u < end and len(found) < wanted:
            if u >= t and u >= anchor and (u - anchor) % step == timedelta(0):
                found.add(u)
            u += MINUTE
        return sorted(found)
    if job.frequency == "Hour":  # minute marks on the zone's clock, hours in elapsed time
        local_anchor = anchor.astimezone(zone)
        hour_start = anchor - timedelta(
            minutes=local_anchor.minute,
            seconds=local_anchor.second,
            microseconds=local_anchor.microsecond,
        )
        marks = job.schedule["minutes"]  # type: ignore[index]
        u = t.replace(second=0, microsecond=0)
        end = u + timedelta(days=horizon_days)
        while u < end and len(found) < wanted:
            into = u - hour_start
            if u >= t and (into // HOUR) % job.interval == 0 and (into % HOUR) // MINUTE in marks:
                found.add(u)
            u += MINUTE
        return sorted(found)
    # Wall-clock frequencies: day by day; on run days, minute by minute.
    sub = _sub_minute(job, anchor_wall)
    day = t.astimezone(zone).date() - timedelta(days=2)
    last = day + timedelta(days=horizon_days)
    done_after: date | None = None
    while day <= last:
        if done_after is not None and day > done_after:
            break
        if _is_run_day(job, anchor_wall, day):
            wall = datetime(day.year, day.month, day.day) + sub
            for _ in range(24 * 60):
                if _times_match(job, anchor_wall, wall):
                    u = _resolve(wall, zone)
                    if u >= t:
                        found.add(u)
                wall += MINUTE
            if len(found) >= wanted and done_after is None:
                done_after = day + timedelta(days=2)  # walls of later days may resolve earlier
        day += timedelta(days=1)
    return sorted(found)[:wanted]


def expected_runs(job: Job, t: datetime, wanted: int, horizon_days: int = 3000) -> list[datetime]:
    """The job's executions at or after `t` (design doc §1–5, endTime honoured, count not)."""
    anchor, _ = job.anchor()
    created = job.created.astimezone(UTC)
    if job.has_start():
        floor = max(anchor, created)
        runs = _series_runs_from(job, max(t, floor), wanted, horizon_days)
    else:  # no startTime: once at created, then the series' instants after it
        runs = [created] if t <= created else []
        later = _series_runs_from(
            job, max(t, created + timedelta(microseconds=1)), wanted, horizon_days
        )
        runs = (runs + later)[:wanted]
    if job.end is not None:
        runs = [u for u in runs if u < job.end]
    return runs


def to_properties(job: Job) -> dict[str, object]:
    """The job as Azure job JSON `properties`."""
    recurrence: dict[str, object] = {"frequency": job.frequency, "interval": job.interval}
    if job.zone_name or job.zone.key != "UTC":
        recurrence["timeZone"] = job.zone_name or job.zone.key
    if job.schedule is not None:
        recurrence["schedule"] = job.schedule
    if job.end is not None:
        recurrence["endTime"] = job.end.isoformat()
    recurrence.update(job.extra)
    properties: dict[str, object] = {"recurrence": recurrence}
    if job.start_wall is not None:
        properties["startTime"] = job.start_wall.isoformat()
    elif job.start_instant is not None:
        properties["startTime"] = job.start_instant.isoformat()
    return properties
