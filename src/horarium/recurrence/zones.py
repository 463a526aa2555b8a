"""Time-zone names: IANA (`Europe/Berlin`) or Windows (`W. Europe Standard Time`), any case.

Windows names go through tzlocal's copy of the CLDR windowsZones table (maintained upstream),
not a hand-written list.
"""

from __future__ import annotations

from functools import cache
from zoneinfo import ZoneInfo, available_timezones

from tzlocal.windows_tz import tz_names

UTC_ZONE = ZoneInfo("UTC")

# Zones whose offset never changes: arithmetic needs no look-ups for them.
_FIXED = {"utc", "etc/utc", "etc/uct", "uct", "etc/universal", "universal", "etc/zulu", "zulu"}


@cache
def _iana() -> dict[str, str]:
    return {name.lower(): name for name in available_timezones()}


@cache
def _windows() -> dict[str, str]:
    return {name.lower(): iana for name, iana in tz_names.items()}


def find_zone(name: str) -> ZoneInfo | None:
    """The zone called `name` (IANA or Windows, case-insensitive), or None if unknown."""
    key = name.strip().lower()
    iana = _iana().get(key) or _windows().get(key)
    if iana is None:
        return None
    return ZoneInfo(iana)


def is_fixed(zone: ZoneInfo) -> bool:
    """True for UTC and Etc/GMT±N: one offset forever."""
    key = (zone.key or "").lower()
    return key in _FIXED or key.startswith(("etc/gmt", "gmt"))
