"""The tables. The management API writes definitions; the engine claims and records executions.

The API and the engine meet only here. Names are matched case-insensitively (ARM rule), so each
resource has a lowercase `key` column with a unique index; `name` keeps the caller's spelling.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    func,
    select,
)
from sqlalchemy.sql.selectable import Exists

from horarium.model.enums import CollectionState
from horarium.store.core.types import UTCDateTime

# The id of a table that gains a row per execution or event: 64-bit on PostgreSQL (an int4 id
# runs out after 2^31 rows, and retention never gives ids back); on SQLite INTEGER, the rowid
# alias, already 64-bit.
GROWING_ID = BigInteger().with_variant(Integer(), "sqlite")

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

job_collections = Table(
    "job_collections",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    # lower(subscription/resourceGroup/name): the case-insensitive identity
    Column("key", String(400), nullable=False, unique=True),
    Column("subscription_id", String(100), nullable=False),
    Column("resource_group", String(100), nullable=False),
    Column("name", String(100), nullable=False),
    Column("location", String(100), nullable=True),
    Column("state", String(20), nullable=False),  # Enabled / Disabled / Suspended / Deleted
    Column("sku", String(20), nullable=False),  # Free, Standard, P10Premium, P20Premium, Seconds
    Column("document", JSON, nullable=False),  # the stored resource (tags, properties, quota)
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    # A Disabled collection's pause ends then: the engine enables it (`store.runs.pauses`).
    Column("paused_until", UTCDateTime, nullable=True),
    # The events its notifications list, one bit each (`model.notifications.BITS`; 0: none):
    # read with the claimed jobs, so that a collection without notifications costs nothing.
    Column("notify_events", Integer, nullable=False, server_default="0"),
    Index(None, "subscription_id", "resource_group"),
    Index(None, "paused_until"),
)
# Listings match subscription and resource group case-insensitively (ARM rule).
Index(
    "ix_job_collections_lower_subscription_id",
    func.lower(job_collections.c.subscription_id),
    func.lower(job_collections.c.resource_group),
)

jobs = Table(
    "jobs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "collection_id",
        Integer,
        ForeignKey("job_collections.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("key", String(100), nullable=False),  # lower(name), unique within the collection
    Column("name", String(100), nullable=False),
    # The job's properties as accepted (startTime, action, recurrence, state), secrets included.
    # Never returned as is: the API strips secrets on the way out.
    Column("definition", JSON, nullable=False),
    Column("state", String(20), nullable=False),  # Enabled / Disabled / Completed / Faulted
    # "created" of the recurrence contract: when the schedule was last set (PUT, or a PATCH
    # that touched startTime or recurrence). The series is computed from it.
    Column("schedule_set_at", UTCDateTime, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    # Bumped by every API write; the engine's writes are conditional on it, so an execution
    # that raced with a redefinition cannot overwrite the new schedule.
    Column("version", Integer, nullable=False, server_default="1"),
    # Scheduling: the next execution due (NULL: nothing scheduled) and its ordinal (1-based,
    # counts executions of the series; it becomes `repeatCount` in history).
    Column("next_execution_at", UTCDateTime, nullable=True),
    Column("next_repeat", Integer, nullable=False, server_default="1"),
    # Claim lease: the process holding the job's due execution, and until when.
    Column("lease_owner", String(100), nullable=True),
    Column("lease_expires_at", UTCDateTime, nullable=True),
    # Status, as the API reports it.
    Column("execution_count", Integer, nullable=False, server_default="0"),
    Column("failure_count", Integer, nullable=False, server_default="0"),
    Column("faulted_count", Integer, nullable=False, server_default="0"),
    Column("last_execution_at", UTCDateTime, nullable=True),
    Column("ended_at", UTCDateTime, nullable=True),  # became Completed / Faulted
    # A Disabled job's pause ends then: the engine enables it (`store.runs.pauses`).
    Column("paused_until", UTCDateTime, nullable=True),
    # When an execution of the job last faulted, until a main action succeeds again (kept only
    # while its collection notifies JobRecovered: `store.runs.notices`).
    Column("faulted_since", UTCDateTime, nullable=True),
    Index(None, "collection_id", "key", unique=True),
    # PostgreSQL: pages keep room for the new versions of their rows, so that a lease update
    # (no indexed column) is HOT: no new index entries (migration 0013).
    postgresql_with={"fillfactor": 50},
)
# Indexes on columns NULL for many rows (`next_execution_at`: ended jobs; `ended_at`: jobs not
# ended; `paused_until`: jobs not paused); on PostgreSQL partial, so that a row whose value is
# NULL has no entry (the statements reading them compare the column or take its min(), which
# PostgreSQL reads from a partial index).
for _column in (
    jobs.c.paused_until,
    jobs.c.next_execution_at,
    jobs.c.ended_at,  # retention: Completed / Faulted jobs are deleted after 60 days
):
    Index(f"ix_jobs_{_column.name}", _column, postgresql_where=_column.is_not(None))

job_history = Table(
    "job_history",
    metadata,
    Column("id", GROWING_ID, primary_key=True, autoincrement=True),  # newest first = id desc
    Column("job_id", Integer, ForeignKey("jobs.id", ondelete="CASCADE"), nullable=False),
    Column("execution_tag", String(64), nullable=True),
    Column("action_name", String(20), nullable=False),  # MainAction / ErrorAction
    Column("status", String(20), nullable=False),  # Completed / Failed / Postponed
    Column("retry_count", Integer, nullable=False, server_default="0"),
    Column("repeat_count", Integer, nullable=False, server_default="0"),
    Column("expected_execution_time", UTCDateTime, nullable=True),
    Column("start_time", UTCDateTime, nullable=True),
    Column("end_time", UTCDateTime, nullable=True),
    Column("message", Text, nullable=False, server_default=""),
    Index(None, "job_id", "id"),
    Index(None, "job_id", "status", "id"),
    # Reads by age: the engine page's recent counts, retention's deletes on SQLite. On
    # PostgreSQL a BRIN (rows arrive in end_time order; no entry per row), migration 0014.
    Index(None, "end_time", postgresql_using="brin"),
)

# Executions that exist but have not finished: the engine's durable work queue (owned by
# horarium.engine, SQL in horarium.store.runs). A due execution becomes a row here, with its
# execution tag, before its first attempt, so that a crash replays it with the same tag; retries
# and the error action wait here; run-now requests are rows here too.
job_executions = Table(
    "job_executions",
    metadata,
    Column("id", GROWING_ID, primary_key=True, autoincrement=True),
    Column("job_id", Integer, ForeignKey("jobs.id", ondelete="CASCADE"), nullable=False),
    Column("execution_tag", String(32), nullable=False),
    # scheduled / last (ends a recurring series) / once (a one-time job's run) / run_now
    Column("kind", String(10), nullable=False),
    Column("repeat_count", Integer, nullable=False),
    Column("expected_at", UTCDateTime, nullable=False),
    Column("job_version", Integer, nullable=False),  # jobs.version when the execution was made
    Column("phase", String(10), nullable=False),  # main / error
    Column("attempt", Integer, nullable=False, server_default="0"),  # retryCount of the next try
    # When the row may be claimed: the next attempt's time, or, while claimed, the lease expiry.
    Column("due_at", UTCDateTime, nullable=False),
    Column("lease_owner", String(100), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Index(None, "due_at"),
    Index(None, "job_id"),
)

# The deadlines of jobs whose `executionPolicy.deadlines` is set (Horarium extension;
# docs/engine.md, "Deadlines"): one row per such job, written by the API with the job
# (`store.resources.jobs`), marked by the engine's claim when an execution starts and by its
# periodic look when an event is raised (`store.runs.deadlines`). `due_at`: when the look must
# judge the started execution (its late start, or `finishWithin` after its start).
job_deadlines = Table(
    "job_deadlines",
    metadata,
    Column("job_id", Integer, ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True),
    Column("started_for", UTCDateTime, nullable=True),  # expected time of the started execution
    Column("started_at", UTCDateTime, nullable=True),  # its first attempt's start
    Column("late_for", UTCDateTime, nullable=True),  # ExecutionLate raised for this execution
    Column("overran_for", UTCDateTime, nullable=True),  # ExecutionOverran raised for this one
    Column("due_at", UTCDateTime, nullable=True),
    Index(None, "due_at"),
)

# API keys callers authenticate with (horarium.api.api_keys; SQL in
# horarium.store.resources.api_keys). Only the SHA-256 of a token is kept: the token itself is
# shown once, when it is made.
api_keys = Table(
    "api_keys",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(100), nullable=False, unique=True),
    Column("token_sha256", String(64), nullable=False, unique=True),  # hex digest of the token
    Column("subscription", String(100), nullable=False),  # lower-cased id, or "*" (every one)
    Column("role", String(20), nullable=False),  # reader / contributor
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=True),  # NULL: never
)

# How far a periodic engine task has looked, by task (horarium.store.runs.retention: the history
# trim keeps the id of the newest history entry it has examined, so a restart resumes there).
engine_marks = Table(
    "engine_marks",
    metadata,
    Column("name", String(50), primary_key=True),
    Column("value", BigInteger, nullable=False),
)

# Exclusion calendars of a collection (Horarium extension; SQL in
# horarium.store.resources.calendars). The jobs that list one carry a copy of its properties in
# their definition (`resolvedCalendars`), rewritten with every calendar write.
calendars = Table(
    "calendars",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "collection_id",
        Integer,
        ForeignKey("job_collections.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("key", String(100), nullable=False),  # lower(name), unique within the collection
    Column("name", String(100), nullable=False),
    Column("properties", JSON, nullable=False),  # canonical: dates, ranges, holidays, ical, …
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Index(None, "collection_id", "key", unique=True),
)

# The engine processes of a cluster, each beating its row every few seconds
# (horarium.engine.nodes): the executions leased by a node whose beat is older than
# `--node-timeout` are taken over by the others. `id` is the node's lease owner id.
nodes = Table(
    "nodes",
    metadata,
    Column("id", String(100), primary_key=True),
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("started", UTCDateTime, nullable=False),
    Column("last_beat", UTCDateTime, nullable=False),
    Column("version", String(40), nullable=False),
    # The newest migration the node's code knows (None: a node older than this column).
    Column("schema_revision", String(32), nullable=True),
    # The database's clock less the node's, in seconds (PostgreSQL; None: not measured).
    Column("clock_offset", Float, nullable=True),
    Index(None, "last_beat"),
)

# Notifications waiting to be delivered (Horarium extension; written by the engine in the
# transaction that records what they tell, `store.runs.notices`; delivered by
# `horarium.engine.notifying` through `store.runs.outbox`). `collection_id` has no foreign key (an
# insert would wait on an API write holding the collection row): a row whose collection is gone
# is dropped on delivery. `body` is the exact JSON that is sent and signed.
notifications = Table(
    "notifications",
    metadata,
    Column("id", GROWING_ID, primary_key=True, autoincrement=True),
    Column("collection_id", Integer, nullable=False),
    Column("event", String(30), nullable=False),
    Column("body", Text, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    # When the row may be taken: the next attempt's time, or, while taken, the lease expiry.
    Column("due_at", UTCDateTime, nullable=False),
    Column("attempts", Integer, nullable=False, server_default="0"),  # deliveries tried
    Column("finished", JSON, nullable=True),  # the uris done with: accepted, or refused for good
    Index(None, "due_at"),
)

# Check-in monitors of a collection (Horarium extension; the API's SQL in
# horarium.store.resources.monitors, the engine's in horarium.store.runs.monitor_checks). Only
# the SHA-256 of a monitor's ping token is kept, as for API keys. `due_at` is when time alone
# changes its status (`model.monitor_status.due_at`): what the engine's periodic look claims on.
monitors = Table(
    "monitors",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "collection_id",
        Integer,
        ForeignKey("job_collections.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("key", String(100), nullable=False),  # lower(name), unique within the collection
    Column("name", String(100), nullable=False),
    # startTime / recurrence (calendars resolved, as a job's) / grace / maxRuntime, canonical
    Column("definition", JSON, nullable=False),
    Column("state", String(20), nullable=False),  # Enabled / Disabled
    Column("schedule_set_at", UTCDateTime, nullable=False),  # "created" of its series
    Column("token_sha256", String(64), nullable=False, unique=True),  # hex digest of the token
    Column("status", String(10), nullable=False),  # New / Up / Late / Down
    Column("expected_at", UTCDateTime, nullable=True),  # first expected instant not covered
    Column("started_at", UTCDateTime, nullable=True),  # a `start` without its success yet
    Column("last_check_in_at", UTCDateTime, nullable=True),
    Column("due_at", UTCDateTime, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Index(None, "collection_id", "key", unique=True),
    Index(None, "due_at"),
)

# A monitor's check-ins, newest first by `id` (kept as job history is: 60 days, 1,000 each).
monitor_check_ins = Table(
    "monitor_check_ins",
    metadata,
    Column("id", GROWING_ID, primary_key=True, autoincrement=True),
    Column("monitor_id", Integer, ForeignKey("monitors.id", ondelete="CASCADE"), nullable=False),
    Column("kind", String(10), nullable=False),  # Success / Start / Fail
    Column("exit_code", Integer, nullable=True),
    Column("received_at", UTCDateTime, nullable=False),
    Column("body", Text, nullable=False, server_default=""),  # at most 10 KB of text
    Index(None, "monitor_id", "id"),
    Index(None, "received_at"),
)


def collection_stopped() -> Exists:
    """Whether the collection of the `jobs` row of the enclosing query is not Enabled (Suspended
    or Disabled: it runs nothing of its jobs), as an EXISTS. Negated, it costs one lookup of the
    collection by key per row (an anti-join); joined on the state instead, PostgreSQL's planner
    may read a collection's whole jobs index."""
    return (
        select(job_collections.c.id)
        .where(
            job_collections.c.id == jobs.c.collection_id,
            job_collections.c.state != CollectionState.ENABLED,
        )
        .exists()
    )
