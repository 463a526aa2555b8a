"""Benchmark: Horarium's recurrence engine against python-dateutil's rrule on equivalent rules,
and its `recurrence.cron` against croniter on the same expressions.

    .venv/bin/python bench/recurrence.py

(a) the first execution after "now" for rules anchored 1 and 10 years back; (b) generating
100,000 consecutive executions; (c) the same two with exclusion calendars (Horarium only);
(d) both for cron expressions against croniter. Each pair of libraries must give the same
instants (checked). Prints the tables and writes them into
docs/benchmarks.md (section "Recurrence"; other sections are kept).
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from importlib.metadata import version
from itertools import islice
from pathlib import Path
from typing import Any

from croniter import croniter
from dateutil.rrule import DAILY, FR, MINUTELY, MONTHLY, rrule
from support import record_figures, write_section

from horarium.recurrence import Plan, plan, with_calendars

NOW = datetime(2026, 11, 21, 12, 0, 0, tzinfo=UTC)
CALLS = 20_000  # distinct "now" values per engine measurement
RRULE_BUDGET = 1.0  # seconds of repetitions per rrule cell (at least one call)
GENERATED = 100_000
COMMAND = ".venv/bin/python bench/recurrence.py"

Recurrence = dict[str, Any]
RuleMaker = Callable[[datetime], rrule]

# (name, Azure recurrence, equivalent rrule given dtstart)
RULES: list[tuple[str, Recurrence, RuleMaker]] = [
    ("every minute", {"frequency": "Minute"}, lambda a: rrule(MINUTELY, dtstart=a)),
    (
        "every 15 minutes",
        {"frequency": "Minute", "interval": 15},
        lambda a: rrule(MINUTELY, interval=15, dtstart=a),
    ),
    (
        "daily at 08:30, 12:30, 17:30",
        {"frequency": "Day", "schedule": {"hours": [8, 12, 17], "minutes": [30]}},
        lambda a: rrule(DAILY, byhour=(8, 12, 17), byminute=30, bysecond=0, dtstart=a),
    ),
    (
        "last Friday monthly",
        {
            "frequency": "Month",
            "schedule": {"monthlyOccurrences": [{"day": "Friday", "occurrence": -1}]},
        },
        lambda a: rrule(MONTHLY, byweekday=FR(-1), dtstart=a),
    ),
]
# For (b): 100,000 last Fridays would pass year 9999, so every 15 minutes on them instead.
GENERATE_RULES: list[tuple[str, Recurrence, RuleMaker]] = [
    *RULES[:3],
    (
        "last Friday monthly, every 15 min",
        {
            "frequency": "Month",
            "schedule": {
                "minutes": [0, 15, 30, 45],
                "monthlyOccurrences": [{"day": "Friday", "occurrence": -1}],
            },
        },
        lambda a: rrule(
            MONTHLY,
            byweekday=FR(-1),
            byhour=range(24),
            byminute=(0, 15, 30, 45),
            bysecond=0,
            dtstart=a,
        ),
    ),
]


# (c): weekends and New York's public holidays, in each of the three modes.
BUSINESS = {"business": {"weekends": True, "holidays": {"country": "US", "subdivision": "NY"}}}
CALENDAR_CALLS = 2_000
CALENDAR_GENERATED = 10_000
CALENDAR_RULES: list[tuple[str, Recurrence]] = [
    RULES[1][:2],
    RULES[2][:2],
    (
        "last day of the month at 18:00",
        {"frequency": "Month", "schedule": {"monthDays": [-1], "hours": [18], "minutes": [0]}},
    ),
]
MODES = ("Skip", "NextBusinessDay", "PreviousBusinessDay")
# (name, Horarium's expression, croniter's spelling of it)
CRONS: list[tuple[str, str, str]] = [
    ("every 15 minutes", "*/15 * * * *", "*/15 * * * *"),
    ("08:30, 12:30, 17:30", "30 8,12,17 * * *", "30 8,12,17 * * *"),
    ("09:00 on weekdays", "0 9 * * MON-FRI", "0 9 * * MON-FRI"),
    ("18:00 last Friday", "0 18 * * 5L", "0 18 * * L5"),
]
CRON_GENERATED = 20_000  # croniter takes tens of µs per instant


def _years_back(years: int) -> datetime:
    return NOW.replace(year=NOW.year - years, hour=10, minute=0)


def _properties(anchor: datetime, recurrence: Recurrence, zone: str | None) -> dict[str, Any]:
    recurrence = dict(recurrence)
    if zone:
        recurrence["timeZone"] = zone
        start = anchor.replace(tzinfo=None).isoformat()  # wall-clock time in the zone
    else:
        start = anchor.isoformat()
    return {"startTime": start, "recurrence": recurrence}


def engine_after_us(anchor: datetime, recurrence: Recurrence, zone: str | None = None) -> float:
    """Microseconds per `Plan.after(now)`, best of 3 rounds over CALLS distinct instants."""
    compiled = plan(_properties(anchor, recurrence, zone), created=anchor)
    nows = [NOW + timedelta(seconds=127 * i) for i in range(CALLS)]
    best = float("inf")
    for _ in range(3):
        began = time.perf_counter()
        for now in nows:
            compiled.after(now)
        best = min(best, time.perf_counter() - began)
    return best / CALLS * 1e6


def rrule_after_us(anchor: datetime, make: RuleMaker) -> tuple[float, int]:
    """Microseconds per `rrule.after(now)` (a fresh rule per call: no cache) and repetitions."""
    calls = 0
    began = time.perf_counter()
    while True:
        make(anchor).after(NOW)
        calls += 1
        if time.perf_counter() - began >= RRULE_BUDGET:
            break
    return (time.perf_counter() - began) / calls * 1e6, calls


def check_after(anchor: datetime, recurrence: Recurrence, make: RuleMaker) -> None:
    compiled = plan(_properties(anchor, recurrence, None), created=anchor)
    ours, theirs = compiled.after(NOW), make(anchor).after(NOW)
    assert ours == theirs, f"{recurrence}: engine {ours} != rrule {theirs}"


def generate_rate(produce: Callable[[], list[datetime]]) -> tuple[float, list[datetime]]:
    """Executions per second, best of 3."""
    best, produced = float("inf"), []
    for _ in range(3):
        began = time.perf_counter()
        produced = produce()
        best = min(best, time.perf_counter() - began)
    return len(produced) / best, produced


def calendar_rows() -> list[str]:
    """(c): `Plan.after(now)` and generation with exclusion calendars, in America/New_York."""
    rows: list[str] = []
    for name, recurrence in CALENDAR_RULES:
        for mode in MODES:
            excluding = {**recurrence, "excludeCalendars": ["business"], "onExcluded": mode}
            anchor = _years_back(1)
            properties = with_calendars(
                _properties(anchor, excluding, "America/New_York"), BUSINESS
            )
            compiled = plan(properties, created=anchor)
            nows = [NOW + timedelta(seconds=127 * i) for i in range(CALENDAR_CALLS)]
            began = time.perf_counter()
            for now in nows:
                compiled.after(now)
            after_us = (time.perf_counter() - began) / CALENDAR_CALLS * 1e6
            fresh = plan(properties, created=NOW)
            began = time.perf_counter()
            produced = list(islice(fresh.iter_from(NOW), CALENDAR_GENERATED))
            rate = len(produced) / (time.perf_counter() - began)
            row = f"| {name} | {mode} | {_us(after_us)} | {rate:,.0f}/s |"
            rows.append(row)
            print(row, flush=True)
    return rows


def _engine_run(compiled: Plan) -> list[datetime]:
    return list(islice(compiled.iter_from(NOW), GENERATED))


def _rrule_run(rule: rrule) -> list[datetime]:
    return list(islice(iter(rule), GENERATED))


def cron_rows() -> list[str]:
    """(c): `Plan.after(now)` and generation for cron expressions, against croniter."""
    lines = [
        "### (d) Cron expressions against croniter",
        "",
        f"Horarium: `Plan.after(now)` for a `recurrence.cron` job whose startTime is 10 years "
        f"back, best of 3 rounds of {CALLS:,} calls; croniter: `croniter(expr, now).get_next()`, "
        f"repeated for {RRULE_BUDGET:.0f} s. Generating: the first {CRON_GENERATED:,} instants "
        "from now, best of 3. Both give the same instants (checked, UTC).",
        "",
        "| expression | after(now) Horarium (UTC) | (Europe/Berlin) | croniter (UTC) "
        "| generate Horarium (UTC) | croniter (UTC) | Horarium ÷ croniter |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    anchor = _years_back(10)
    for name, ours, theirs in CRONS:
        recurrence = {"cron": ours}
        compiled = plan(_properties(anchor, recurrence, None), created=anchor)
        assert compiled.after(NOW) == croniter(theirs, NOW).get_next(datetime), name
        after = engine_after_us(anchor, recurrence)
        berlin = engine_after_us(anchor, recurrence, "Europe/Berlin")
        calls, began = 0, time.perf_counter()
        while calls == 0 or time.perf_counter() - began < RRULE_BUDGET:
            croniter(theirs, NOW).get_next(datetime)
            calls += 1
        theirs_after = (time.perf_counter() - began) / calls * 1e6
        from_now = plan(_properties(NOW, recurrence, None), created=NOW)
        rate, produced = generate_rate(
            lambda: list(islice(from_now.iter_from(NOW), CRON_GENERATED))  # noqa: B023
        )
        theirs_rate, expected = generate_rate(
            lambda: [
                walk.get_next(datetime)
                for walk in [croniter(theirs, NOW - timedelta(microseconds=1))]  # noqa: B023
                for _ in range(CRON_GENERATED)
            ]
        )
        assert produced == expected, f"{name}: the engine and croniter disagree"
        row = (
            f"| `{ours}` ({name}) | {_us(after)} | {_us(berlin)} | {_us(theirs_after)} "
            f"| {rate:,.0f}/s | {theirs_rate:,.0f}/s | {rate / theirs_rate:.0f}× |"
        )
        lines.append(row)
        print(row, flush=True)
    return [*lines, ""]


def _us(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:,.2f} s"
    if value >= 1e3:
        return f"{value / 1e3:,.1f} ms"
    return f"{value:,.1f} µs"


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} cores ({model}), {platform.system()} {platform.release()}, "
        f"CPython {platform.python_version()}, python-dateutil {version('python-dateutil')}"
    )


def main() -> int:
    lines = [
        "## Recurrence",
        "",
        f"Command: `{COMMAND}` (run {datetime.now(UTC):%Y-%m-%d}). Machine: {machine()}.",
        "Single thread; the machine was shared with other work, so take figures as ±30 %.",
        "",
        "### (a) First execution after now, rule anchored in the past",
        "",
        "Horarium: `Plan.after(now)`, best of 3 rounds of "
        f"{CALLS:,} calls with distinct instants. rrule: `rrule(...).after(now)` on a fresh "
        f"rule, repeated for {RRULE_BUDGET:.0f} s (at least once). Both give the same instant "
        "(checked). Target: ≤ 20 µs per call whatever the anchor's age.",
        "",
        "| rule | anchor | Horarium (UTC) | Horarium (Europe/Berlin) | rrule (UTC) | rrule calls |",
        "|---|---|---:|---:|---:|---:|",
    ]
    worst = 0.0
    for name, recurrence, make in RULES:
        for years in (1, 10):
            anchor = _years_back(years)
            check_after(anchor, recurrence, make)
            ours = engine_after_us(anchor, recurrence)
            berlin = engine_after_us(anchor, recurrence, "Europe/Berlin")
            worst = max(worst, ours, berlin)
            theirs, calls = rrule_after_us(anchor, make)
            row = (
                f"| {name} | {years} y back | {_us(ours)} | {_us(berlin)} | {_us(theirs)} "
                f"| {calls} |"
            )
            lines.append(row)
            print(row, flush=True)
    lines += [
        "",
        f"Slowest Horarium call: {worst:.1f} µs "
        f"({'meets' if worst <= 20 else 'MISSES'} the 20 µs target).",
        "",
        f"### (b) Generating {GENERATED:,} consecutive executions",
        "",
        f"Both anchored at now; Horarium: `Plan.iter_from(now)`, rrule: iterating the rule; "
        f"the first {GENERATED:,} instants, best of 3. Both lists are equal (checked). "
        "Target: at least rrule's rate.",
        "",
        "| rule | Horarium (UTC) | Horarium (Europe/Berlin) | rrule (UTC) | Horarium ÷ rrule |",
        "|---|---:|---:|---:|---:|",
    ]
    slowest_ratio = float("inf")
    for name, recurrence, make in GENERATE_RULES:
        in_utc = plan(_properties(NOW, recurrence, None), created=NOW)
        in_berlin = plan(_properties(NOW, recurrence, "Europe/Berlin"), created=NOW)
        ours, produced = generate_rate(partial(_engine_run, in_utc))
        ours_berlin, _ = generate_rate(partial(_engine_run, in_berlin))
        theirs, expected = generate_rate(partial(_rrule_run, make(NOW)))
        assert produced == expected, f"{name}: the engine and rrule disagree"
        slowest_ratio = min(slowest_ratio, ours / theirs)
        row = (
            f"| {name} | {ours:,.0f}/s | {ours_berlin:,.0f}/s | {theirs:,.0f}/s "
            f"| {ours / theirs:.1f}× |"
        )
        lines.append(row)
        print(row, flush=True)
    lines += [
        "",
        f"Lowest ratio (UTC, the equivalent rules): {slowest_ratio:.1f}× "
        f"({'meets' if slowest_ratio >= 1 else 'MISSES'} the target of at least rrule's rate).",
        "",
        "The Europe/Berlin columns have no rrule counterpart (rrule does not map nonexistent or "
        "repeated local times as the contract requires); they show what daylight saving costs: "
        "wall-clock series check the zone's offset twice per run day, so a rule with few runs a "
        "day (daily at 3 set hours) generates well below its UTC rate, and below rrule's UTC "
        "rate. Minute and Hour series run in elapsed time and cost the same in any zone.",
        "",
        "### (c) With exclusion calendars",
        "",
        "Horarium alone, in America/New_York, the job listing one calendar (weekends and New"
        " York's public holidays): `Plan.after(now)` over "
        f"{CALENDAR_CALLS:,} distinct instants (a fresh plan, so the first calls of each day pay"
        f" for computing it), and the first {CALENDAR_GENERATED:,} executions from now.",
        "",
        "| rule | onExcluded | after(now) | generating |",
        "|---|---|---:|---:|",
        *calendar_rows(),
        "",
        *cron_rows(),
    ]
    write_section("Recurrence", "\n".join(lines))
    print("\n".join(lines))
    record_figures(
        "recurrence",
        [
            ("slowest Plan.after(now), µs (target ≤ 20)", f"{worst:.1f}"),
            ("lowest generating rate ÷ rrule's (target ≥ 1)", f"{slowest_ratio:.1f}×"),
        ],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
