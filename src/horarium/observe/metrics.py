"""The process's Prometheus metrics (prometheus_client's default registry, with its process and
Python collectors). Each process counts its own work and serves its own `/metrics`.

Every label takes its values from a small fixed set — action types, phases, outcomes, route
templates, methods, status codes — so no label names a job or a collection: a million jobs are
still a few hundred series. The engine counts through children bound once per label
combination (`horarium.engine.telemetry`), so an execution costs a few additions under a lock,
no label lookup. The list, with the meaning of each label: docs/operations.md."""

from __future__ import annotations

import time
import weakref
from importlib import metadata
from typing import Protocol

from prometheus_client import Counter, Gauge, Histogram, disable_created_metrics

from horarium.model.enums import ACTION_TYPES
from horarium.model.notifications import EVENTS

# No `*_created` series: they double the exposition and say only when the process started.
disable_created_metrics()  # type: ignore[no-untyped-call]

OTHER = "other"  # the label value of an action type that is none of ACTION_TYPES
PHASES = ("main", "error")  # the main action, or the error action
ATTEMPT_OUTCOMES = ("succeeded", "failed")
# An execution ends: its main action succeeded, or its error action did after the main action
# failed for good, or no attempt of either succeeded.
EXECUTION_OUTCOMES = ("succeeded", "error_action_succeeded", "faulted")

_SHORT = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_ACTION = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
_LAG = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0)

ATTEMPTS = Counter(
    "horarium_attempts",
    "Attempts that ended, by the type of the action run, its phase (main or error action) and"
    " outcome.",
    ["action_type", "phase", "outcome"],
)
EXECUTIONS = Counter(
    "horarium_executions",
    "Executions that ended, by the type of the job's main action and outcome (succeeded,"
    " error_action_succeeded, faulted).",
    ["action_type", "outcome"],
)
RETRIES = Counter(
    "horarium_retries",
    "Failed attempts followed by a retry, by the type of the action and its phase.",
    ["action_type", "phase"],
)
POSTPONED = Counter(
    "horarium_postponed",
    "Missed executions that were not run (history says Postponed): due more than"
    " --grace-period ago when claimed (with executionPolicy.missed RunAll: older than its"
    " catchUpWindow; Skip: every one).",
)
# The job's executionPolicy and backfill (Horarium extensions; docs/engine.md).
SKIPPED = Counter(
    "horarium_skipped",
    "Executions not run because the job's previous one was unfinished (executionPolicy.overlap"
    " Skip, or BufferOne with one already waiting; history says Skipped).",
)
BUFFERED = Counter(
    "horarium_buffered",
    "Executions queued to run when the job's previous one ends (executionPolicy.overlap"
    " BufferOne).",
)
BACKFILL_QUEUED = Counter(
    "horarium_backfill_queued",
    "Executions queued by POST …/jobs/{job}/backfill (counted by the process answering it).",
)
BACKFILL_EXECUTIONS = Counter(
    "horarium_backfill_executions",
    "Backfill executions that ended, by outcome (succeeded, error_action_succeeded, faulted).",
    ["outcome"],
)
DEADLINES_LATE = Counter(
    "horarium_executions_late",
    "Executions not started within their job's executionPolicy.deadlines.startWithin"
    " (ExecutionLate raised; counted by the process that raised it).",
)
DEADLINES_OVERRAN = Counter(
    "horarium_executions_overran",
    "Executions not finished within their job's executionPolicy.deadlines.finishWithin of their"
    " first attempt's start (ExecutionOverran raised; counted by the process that raised it).",
)
LEASE_TAKEOVERS = Counter(
    "horarium_lease_takeovers",
    "Executions claimed while another process's lease on them had run out or been handed back.",
)
START_LAG = Histogram(
    "horarium_start_lag_seconds",
    "Seconds from an execution's expected time to the start of its first attempt.",
    buckets=_LAG,
)
ACTION_DURATION = Histogram(
    "horarium_action_duration_seconds",
    "Seconds an attempt's action took, by action type and outcome.",
    ["action_type", "outcome"],
    buckets=_ACTION,
)
LOOP_LAG = Gauge(
    "horarium_event_loop_lag_seconds",
    "The worst delay of the event loop over the last 10 s: how long a request or a timer"
    " waited behind other work in this process.",
)
IN_FLIGHT = Gauge(
    "horarium_executions_in_flight", "Executions whose action is running in this process."
)


class _Running(Protocol):
    @property
    def in_flight(self) -> int: ...


_dispatchers: weakref.WeakSet[_Running] = weakref.WeakSet()  # see count_in_flight


def count_in_flight(dispatcher: _Running) -> None:
    """Report `dispatcher.in_flight` (summed over this process's dispatchers) when scraped:
    nothing to count per execution."""
    _dispatchers.add(dispatcher)


IN_FLIGHT.set_function(lambda: float(sum(d.in_flight for d in list(_dispatchers))))
DUE_BACKLOG = Gauge(
    "horarium_due_backlog",
    "Executions due now that no process holds, in Enabled collections (database-wide: every"
    " process reports the same value; read when scraped, at most every few seconds).",
)
LIVE_NODES = Gauge(
    "horarium_live_nodes",
    "Engine processes whose heartbeat is within --node-timeout (database-wide, read with the"
    " due backlog): a drop means a node is gone.",
)
CLAIM_SECONDS = Histogram(
    "horarium_claim_seconds",
    "Seconds a claim transaction took in this process, from asking to commit (the wait for"
    " SQLite's write lock included).",
    buckets=_SHORT,
)
RECORD_SECONDS = Histogram(
    "horarium_record_seconds",
    "Seconds a record transaction (one batch of finished attempts) took in this process, from"
    " asking to commit.",
    buckets=_SHORT,
)
RECORD_FAILURES = Counter(
    "horarium_record_failures",
    "Record transactions that failed; written again while the database was unreachable, else"
    " their executions run again when their leases run out.",
)
ATTEMPTS_NOT_WRITTEN = Counter(
    "horarium_attempts_not_written",
    "Finished attempts the store refused because this process no longer held their executions:"
    " their leases ran out while they ran (another process may have run them again), or their"
    " jobs were deleted meanwhile.",
)
HTTP_REQUESTS = Counter(
    "horarium_http_requests",
    "HTTP requests answered, by route template, method and status.",
    ["route", "method", "status"],
)
HTTP_DURATION = Histogram(
    "horarium_http_request_duration_seconds",
    "Seconds to answer an HTTP request, by route template and method.",
    ["route", "method"],
    buckets=_SHORT,
)
NOTIFICATIONS_DELIVERED = Counter(
    "horarium_notifications_delivered",
    "Notifications a target accepted (answered 2xx), by event.",
    ["event"],
)
NOTIFICATION_FAILURES = Counter(
    "horarium_notification_failures",
    "Notification POSTs that failed (no 2xx answer, or refused), by event; each is tried again"
    " until --notification-attempts.",
    ["event"],
)
NOTIFICATIONS_FAILED = Counter(
    "horarium_notifications_failed",
    "Notifications given up for a target (--notification-attempts failed, the outbound policy"
    " refuses its address, or its secret cannot be read), by event.",
    ["event"],
)
BUILD_INFO = Gauge("horarium_build_info", "Always 1; the label is Horarium's version.", ["version"])


def _version() -> str:
    try:
        return metadata.version("horarium")
    except metadata.PackageNotFoundError:
        return "0"


BUILD_INFO.labels(_version()).set(1)

clock = time.perf_counter  # the clock of the `*_seconds` transaction timings


def action_type(value: object) -> str:
    """The label value of an action's `type` (a bounded set)."""
    return value if isinstance(value, str) and value in ACTION_TYPES else OTHER


def claim_took(began: float) -> None:
    """A claim transaction asked for at `clock()` = `began` has committed."""
    CLAIM_SECONDS.observe(clock() - began)


def record_took(began: float) -> None:
    """A record transaction asked for at `clock()` = `began` has committed."""
    RECORD_SECONDS.observe(clock() - began)


def _zero_series() -> None:
    """Every series of the bounded label sets exists from the start (at 0), so that rates and
    alerts see a change from 0 rather than a series appearing."""
    for kind in ACTION_TYPES:
        for phase in PHASES:
            RETRIES.labels(kind, phase)
            for outcome in ATTEMPT_OUTCOMES:
                ATTEMPTS.labels(kind, phase, outcome)
        for outcome in ATTEMPT_OUTCOMES:
            ACTION_DURATION.labels(kind, outcome)
        for outcome in EXECUTION_OUTCOMES:
            EXECUTIONS.labels(kind, outcome)
    for outcome in EXECUTION_OUTCOMES:
        BACKFILL_EXECUTIONS.labels(outcome)
    for event in EVENTS:
        for counter in (NOTIFICATIONS_DELIVERED, NOTIFICATION_FAILURES, NOTIFICATIONS_FAILED):
            counter.labels(event)


_zero_series()
