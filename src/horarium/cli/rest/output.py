"""What the management commands print: tables and key-value lists for people, the API's JSON
for scripts, and one-line notes on stderr."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from horarium.client import Listing

NONE = "-"
MIN_MESSAGE_WIDTH = 30

json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print the API's JSON instead of a table."
)


def emit_json(body: Any) -> None:
    """The API's JSON, indented, on stdout."""
    click.echo(json.dumps(body, indent=2, ensure_ascii=False))


def note(text: str) -> None:
    """A line for the person at the terminal (stderr: stdout stays the command's result)."""
    click.echo(text, err=True)


def table(
    headers: Sequence[str], rows: Iterable[Sequence[str]], *, right: Collection[int] = ()
) -> list[str]:
    """Aligned columns, two spaces apart; the columns in `right` aligned right (numbers)."""
    lines = [list(headers), *(list(row) for row in rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(headers))]

    def fit(cell: str, i: int) -> str:
        return cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])

    return ["  ".join(fit(cell, i) for i, cell in enumerate(line)).rstrip() for line in lines]


def print_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, right: Collection[int] = ()
) -> None:
    for line in table(headers, rows, right=right):
        click.echo(line)


def print_pairs(pairs: Iterable[tuple[str, str]]) -> None:
    """`name  value` lines, the values aligned."""
    found = list(pairs)
    width = max((len(name) for name, _ in found), default=0)
    for name, value in found:
        click.echo(f"{name.ljust(width)}  {value}".rstrip())


def print_listing(
    listing: Listing,
    as_json: bool,
    headers: Sequence[str],
    row: Callable[[dict[str, Any]], Sequence[str]],
    *,
    empty: str,
    right: Collection[int] = (),
) -> None:
    """A list command's result: the API's JSON, a table of a `row` per entry, or the note
    `empty` when there are no entries."""
    if as_json:
        emit_json(listing.as_json())
    elif not listing.value:
        note(empty)
    else:
        print_table(headers, [row(entry) for entry in listing.value], right=right)


def print_resource(
    body: dict[str, Any],
    as_json: bool,
    pairs: Callable[[dict[str, Any]], Iterable[tuple[str, str]]],
) -> None:
    """A show command's result: the API's JSON, or the resource's `pairs` as `name  value`
    lines."""
    if as_json:
        emit_json(body)
    else:
        print_pairs(pairs(body))


_FRACTION = re.compile(r"\.\d+(?=Z$|[+-]\d\d:\d\d$)")


def when(value: Any) -> str:
    """A date-time of the API to the second (`2024-01-01T10:00:00Z`), or '-'."""
    if not isinstance(value, str) or not value:
        return NONE
    return _FRACTION.sub("", value)


def cut(text: str, width: int) -> str:
    """`text` on one line, at most `width` characters (an ellipsis marks a cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: max(width - 1, 0)] + "…"


def room_left(used: int) -> int:
    """Characters left on a terminal line after `used` (at least MIN_MESSAGE_WIDTH)."""
    columns = shutil.get_terminal_size((100, 24)).columns
    return max(columns - used, MIN_MESSAGE_WIDTH)


def plural(count: int, noun: str) -> str:
    """`1 job`, `2 jobs`."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def text(value: Any) -> str:
    """A JSON value as a cell: strings as they are, None as '-', others as compact JSON."""
    if value is None:
        return NONE
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def dig(body: Any, *path: str) -> Any:
    """`body[path[0]][path[1]]…`, or None where something is missing."""
    for key in path:
        if not isinstance(body, dict):
            return None
        body = body.get(key)
    return body
