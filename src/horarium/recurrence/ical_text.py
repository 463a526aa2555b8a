"""An iCalendar document's text, before icalendar parses it: its size in parts, and its time
zones read by name only.

*Parts.* icalendar's parsing costs CPU for each content line, parameter and list value it reads
(figures in docs/recurrence.md §8), so bytes alone do not bound the cost of reading a document.
`parts` counts lines, parameters and list values from the unfolded text (every `;` and `,`
counts, also in text, where they cost less), and `calendars` refuses a document of more than
`MAX_PARTS` before parsing it.

*Time zones.* An event's `TZID` names a zone of the time-zone database: an IANA name
(``Europe/Berlin``), a Windows name (``W. Europe Standard Time``, as Outlook writes) or a globally
unique form of one (``/example.org/Europe/Berlin``), resolved as icalendar resolves them. A
document's `VTIMEZONE` components are dropped before it is parsed: icalendar would keep the zone
a `VTIMEZONE` defines for the whole process, under its `TZID`, and read every later document's
same `TZID` with it (one document could shift another's events), and python-dateutil would keep
the rules of such a zone from one document to the next, uncounted by `ical_work`. A `TZID` that
names no zone is refused rather than read as a floating time.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from typing import Any

import icalendar
from icalendar.timezone import tzp

MAX_PARTS = 10_000  # content lines, parameters and list values of a document

_FOLD = re.compile(r"\r?\n[ \t]")  # a content line continued on the next (RFC 5545 §3.1)
_LINE_END = re.compile(r"\r?\n")


def lines(text: str) -> list[str]:
    """The document's content lines, unfolded."""
    return _LINE_END.split(_FOLD.sub("", text))


def parts(content: list[str]) -> int:
    """Content lines, parameters (`;`) and list values (`,`) in `content`, at most."""
    return len(content) + sum(line.count(";") + line.count(",") for line in content)


def without_time_zones(content: list[str]) -> str:
    """The document from its content lines, less its `VTIMEZONE` components (with what they
    hold)."""
    kept: list[str] = []
    inside = False
    for line in content:
        name = line.strip().upper()
        if inside:
            inside = name != "END:VTIMEZONE"
        elif name == "BEGIN:VTIMEZONE":
            inside = True
        else:
            kept.append(line)
    return "\r\n".join(kept)


def unknown_zone(calendar: icalendar.Calendar) -> tuple[int, Any, str] | None:
    """The first event (its number from 1, its UID) with a `TZID` that names no zone, and that
    `TZID`; None when every `TZID` names one."""
    for i, event in enumerate(calendar.walk("VEVENT")):
        for tzid in _zone_names(event):
            with warnings.catch_warnings():  # a globally unique TZID read as its last part
                warnings.simplefilter("ignore")
                known = tzp.timezone(tzid) is not None
            if not known:
                return i + 1, event.get("UID", "?"), tzid
    return None


def _zone_names(event: icalendar.Component) -> Iterator[str]:
    """The `TZID` parameters of the event's properties."""
    for value in event.values():
        for each in value if isinstance(value, list) else [value]:
            tzid = getattr(each, "params", {}).get("TZID")
            if tzid:
                yield str(tzid)
