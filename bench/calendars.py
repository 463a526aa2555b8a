"""Benchmark: what reading iCalendar documents and compiling jobs that list them cost.

    .venv/bin/python bench/calendars.py [--jobs 300]

(a) Storing a calendar: `read_calendar` of documents at and past the limits of
docs/recurrence.md §8 (CPU seconds, one call each, a fresh text). (b) Many documents: `--jobs`
hourly jobs, each listing its own document of 20 yearly events since 2020, compiled as the
engine compiles them, then `Plan.after(now)` once per plan (the first call of a day computes
it). Horarium alone: no other scheduler has exclusion calendars. Prints the tables and writes
them into docs/benchmarks.md (section "Exclusion calendars"; other sections are kept).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from support import record_figures, write_section

from horarium.recurrence import RecurrenceError, plan, read_calendar, with_calendars

CREATED = datetime(2026, 11, 1, tzinfo=UTC)
NOW = datetime(2026, 11, 28, 12, tzinfo=UTC)
HEAD = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\n"


def _document(events: list[str], tag: str = "") -> str:
    body = "".join(
        f"BEGIN:VEVENT\r\nUID:{i}-{tag}\r\n{e}END:VEVENT\r\n" for i, e in enumerate(events)
    )
    return f"{HEAD}X-BENCH:{tag}\r\n{body}END:VCALENDAR\r\n"


def _holiday(i: int) -> str:
    day = f"2027{i % 12 + 1:02d}{i % 28 + 1:02d}"
    stamps = "".join(f"{p}:20260101T000000Z\r\n" for p in ("DTSTAMP", "CREATED", "LAST-MODIFIED"))
    return (
        f"DTSTART;VALUE=DATE:{day}\r\nDTEND;VALUE=DATE:{day}\r\n{stamps}SUMMARY:Holiday {i}\r\n"
        "DESCRIPTION:A public holiday\r\nCATEGORIES:Holidays\r\nTRANSP:TRANSPARENT\r\n"
        "CLASS:PUBLIC\r\nSTATUS:CONFIRMED\r\nSEQUENCE:0\r\n"
    )


def _yearly(since: int, i: int) -> str:
    return f"DTSTART;VALUE=DATE:{since}{i % 12 + 1:02d}{i % 28 + 1:02d}\r\nRRULE:FREQ=YEARLY\r\n"


DOCUMENTS: list[tuple[str, Callable[[str], str]]] = [
    (
        "580 exported holidays, 16 parts each",
        lambda t: _document([_holiday(i) for i in range(580)], t),
    ),
    ("20 yearly events since 1970", lambda t: _document([_yearly(1970, i) for i in range(20)], t)),
    (
        "a daily event since 1900",
        lambda t: _document(["DTSTART:19000101T090000Z\r\nRRULE:FREQ=DAILY\r\n"], t),
    ),
    (
        "a rule that never matches (refused)",
        lambda t: _document(
            ["DTSTART:20200101T090000Z\r\nRRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=31\r\n"], t
        ),
    ),
    (
        "9,990 short lines",
        lambda t: _document(["DTSTART;VALUE=DATE:20270101\r\n" + "X-N:n\r\n" * 9_980], t),
    ),
    (
        "60,000 short lines, 0.5 MB (refused)",
        lambda t: _document(["DTSTART;VALUE=DATE:20270101\r\n" + "X-N:n\r\n" * 60_000], t),
    ),
]


def reading_rows() -> list[str]:
    rows = []
    for i, (name, make) in enumerate(DOCUMENTS):
        text = make(f"r{i}-{time.time_ns()}")
        began = time.process_time()
        try:
            read_calendar({"ical": text})
            outcome = "stored"
        except RecurrenceError as refused:
            outcome = "400: " + refused.rule.split(";")[0].split(" (")[0]
        took = time.process_time() - began
        rows.append(f"| {name} | {took:.3f} | {outcome} |")
        print(rows[-1], flush=True)
    return rows


def many_documents(jobs: int) -> tuple[float, float]:
    """CPU seconds to compile `jobs` plans, each listing its own document, and for one
    `after(now)` on each."""
    job = {
        "startTime": "2026-11-01T09:00:00Z",
        "recurrence": {"frequency": "Hour", "excludeCalendars": ["c"]},
    }
    stamp = time.time_ns()
    texts = [_document([_yearly(2020, i) for i in range(20)], f"m{k}-{stamp}") for k in range(jobs)]
    began = time.process_time()
    plans = [plan(with_calendars(job, {"c": {"ical": t}}), created=CREATED) for t in texts]
    compiled = time.process_time() - began
    began = time.process_time()
    for each in plans:
        each.after(NOW + timedelta(hours=1))
    return compiled, time.process_time() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=300)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "## Exclusion calendars",
        "",
        f"Command: `.venv/bin/python bench/calendars.py --jobs {args.jobs}`, {started}, "
        f"{os.cpu_count()} cores, {platform.python_implementation()} "
        f"{platform.python_version()}, load {load:.1f} at start. Horarium alone (no other "
        "scheduler has exclusion calendars).",
        "",
        "### (a) Storing a calendar",
        "",
        "`read_calendar` of one document (CPU seconds, a text not read before: what "
        "`PUT …/calendars/{name}` costs in the API's worker process).",
        "",
        "| document | CPU s | outcome |",
        "|---|---:|---|",
        *reading_rows(),
    ]
    compiled, after = many_documents(args.jobs)
    lines += [
        "",
        "### (b) Many documents",
        "",
        f"{args.jobs} hourly jobs, each listing its own document of 20 yearly events since 2020, "
        "compiled as the engine compiles them, then `Plan.after(now)` once on each (CPU "
        "seconds in all).",
        "",
        "| jobs | compile, s | per job, ms | after(now) on each, s |",
        "|---:|---:|---:|---:|",
        f"| {args.jobs} | {compiled:.2f} | {compiled / args.jobs * 1e3:.1f} | {after:.3f} |",
    ]
    print("\n".join(lines[-6:]))
    write_section("Exclusion calendars", "\n".join(lines))
    record_figures(
        "calendars",
        [
            (
                f"compiling a job that lists its own document ({args.jobs} jobs), ms",
                f"{compiled / args.jobs * 1e3:.1f}",
            ),
            (f"after(now) on each of {args.jobs} such plans, s", f"{after:.3f}"),
        ],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
