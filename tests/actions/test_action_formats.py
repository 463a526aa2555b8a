"""The wire forms users see: history-message pieces, time values, durations (pure functions)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from horarium.actions.envelope import storage_queue_envelope
from horarium.actions.execution import bare_name, wire_time
from horarium.actions.fields import ActionInputError
from horarium.actions.http_history import header_lines, status_name
from horarium.actions.redact import redact
from horarium.actions.servicebus import time_to_live as parse_duration
from tests.actions.action_context import make_context


@pytest.mark.parametrize(
    ("code", "name"),
    [(200, "OK"), (201, "Created"), (202, "Accepted"), (204, "NoContent"), (404, "NotFound"),
     (500, "InternalServerError"), (503, "ServiceUnavailable"), (299, "299")],
)  # fmt: skip
def test_status_names_follow_dotnet_http_status_code(code: int, name: str) -> None:
    assert status_name(code) == name


def test_repeated_headers_are_joined_and_content_headers_left_out() -> None:
    lines = header_lines(
        [
            ("Set-Cookie", "a=1; path=/"),
            ("Content-Type", "text/html"),
            ("Server", "test"),
            ("Set-Cookie", "b=2"),
            ("Content-Length", "10"),
        ]
    )
    assert lines == "Set-Cookie: a=1; path=/, b=2\r\nServer: test\r\n"


def test_times_are_utc_without_offset_and_fraction_only_when_present() -> None:
    assert wire_time(datetime(2015, 9, 10, tzinfo=UTC)) == "2015-09-10T00:00:00"
    assert wire_time(datetime(2015, 9, 10, 0, 0, 1, 250000, tzinfo=UTC)) == "2015-09-10T00:00:01.25"
    plus_two = timezone(timedelta(hours=2))
    assert wire_time(datetime(2015, 9, 10, 2, 0, tzinfo=plus_two)) == "2015-09-10T00:00:00"


def test_ids_become_bare_names() -> None:
    assert bare_name("/subscriptions/s/resourceGroups/r/providers/x/jobCollections/c/jobs/j") == "j"
    assert bare_name("plain") == "plain"


def test_envelope_matches_the_live_layout() -> None:
    context = make_context(
        execution_tag="e927cf76d24da9625608248ce654cfa7",
        client_request_id="3c4b84e2-aee5-43ac-913e-c05c8827ac41",
        expected_time=datetime(2015, 9, 10, tzinfo=UTC),
    )
    assert storage_queue_envelope(context, "") == (
        '<?xml version="1.0" encoding="utf-16"?>\r\n'
        '<StorageQueueMessage xmlns:xsd="http://www.w3.org/2001/XMLSchema" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\r\n'
        "  <ExecutionTag>e927cf76d24da9625608248ce654cfa7</ExecutionTag>\r\n"
        "  <ClientRequestId>3c4b84e2-aee5-43ac-913e-c05c8827ac41</ClientRequestId>\r\n"
        "  <ExpectedExecutionTime>2015-09-10T00:00:00</ExpectedExecutionTime>\r\n"
        "  <SchedulerJobId>job-1</SchedulerJobId>\r\n"
        "  <SchedulerJobCollectionId>coll-1</SchedulerJobCollectionId>\r\n"
        "  <Region>West Europe</Region>\r\n"
        "  <Message />\r\n"
        "</StorageQueueMessage>"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("00:00:30", timedelta(seconds=30)),
        ("01:02:03", timedelta(hours=1, minutes=2, seconds=3)),
        ("1.00:00:00", timedelta(days=1)),
        ("30.00:00:00", timedelta(days=30)),
        ("00:00:01.5", timedelta(seconds=1.5)),
        ("PT30S", timedelta(seconds=30)),
        ("P1DT2H", timedelta(days=1, hours=2)),
    ],
)
def test_durations_accept_timespan_and_iso(text: str, expected: timedelta) -> None:
    assert parse_duration(text, "timeToLive") == expected


@pytest.mark.parametrize("text", ["soon", "25:00:00", "00:61:00", "P1M", ""])
def test_bad_durations_name_the_field(text: str) -> None:
    with pytest.raises(ActionInputError, match=r"'x\.timeToLive'"):
        parse_duration(text, "x.timeToLive")


def test_redaction_covers_url_encoded_secrets() -> None:
    message = "failed for sig=abc%2Bdef%3D and abc+def="
    assert redact(message, ["abc+def="]) == "failed for sig=*** and ***"
