"""`horarium jobs list|show|put|run|enable|disable|delete|history|upcoming` over the REST API."""

from __future__ import annotations

from typing import IO, Any

import click

from horarium.cli.rest.confirming import confirm_delete, yes_option
from horarium.cli.rest.connection import Connection, connection_options
from horarium.cli.rest.job_views import (
    JOB_HEADERS,
    JOB_NUMBERS,
    OVERDUE_HEADERS,
    UPCOMING_HEADERS,
    describe_policy,
    history_lines,
    job_pairs,
    job_row,
    overdue_row,
    upcoming_row,
    word,
)
from horarium.cli.rest.json_input import document_name, read_document
from horarium.cli.rest.naming import collection_options, job_named, job_options
from horarium.cli.rest.output import (
    dig,
    emit_json,
    json_option,
    note,
    print_listing,
    print_resource,
    when,
)
from horarium.client import CollectionRef, JobRef

JOB_STATES = ("Enabled", "Disabled", "Completed", "Faulted")
HISTORY_STATUSES = ("Completed", "Failed", "Postponed", "Skipped")


@click.group()
def jobs() -> None:
    """Jobs, through the REST API (--url, --token)."""


@jobs.command(name="list")
@collection_options(positional=False)
@click.option(
    "--state",
    type=click.Choice(JOB_STATES, case_sensitive=False),
    default=None,
    help="Only the jobs in this state.",
)
@json_option
@connection_options
def list_jobs(
    connection: Connection, collection: CollectionRef, state: str | None, as_json: bool
) -> None:
    """The jobs of a collection: state, schedule, next and last run, executions, failures,
    faulted."""
    with connection.client() as client:
        listing = client.list_jobs(collection, state=state, described=not as_json)
    empty = f"No {state + ' ' if state else ''}jobs in the collection {collection}."
    print_listing(listing, as_json, JOB_HEADERS, job_row, empty=empty, right=JOB_NUMBERS)


@jobs.command()
@job_options
@json_option
@connection_options
def show(connection: Connection, job: JobRef, as_json: bool) -> None:
    """One job: action, retries, schedule, next and last run, counts."""
    with connection.client() as client:
        body = client.get_job(job, described=not as_json)
    print_resource(body, as_json, job_pairs)


@jobs.command()
@click.argument("file", type=click.File("r"))
@click.option(
    "--job",
    default=None,
    help="Job name (default: the file's 'name', else the file's name without .json).",
)
@collection_options(positional=False)
@json_option
@connection_options
def put(
    connection: Connection,
    collection: CollectionRef,
    file: IO[str],
    job: str | None,
    as_json: bool,
) -> None:
    """Create or replace a job from FILE: its JSON as the API takes it ('-': stdin)."""
    document = read_document(file, "job")
    ref = collection.job(document_name(document, job, job_named, "--job J"))
    with connection.client() as client:
        written = client.put_job(ref, document.raw)
    if as_json:
        emit_json(written.body)
    else:
        verb = "Created" if written.created else "Replaced"
        note(f"{verb} the job {ref} ({_state_and_next(written.body)}).")


def _state_and_next(body: dict[str, Any]) -> str:
    state = word(dig(body, "properties", "state"))
    upcoming = dig(body, "properties", "status", "nextExecutionTime")
    return f"{state}, next run {when(upcoming)}" if upcoming else state


@jobs.command()
@job_options
@connection_options
def run(connection: Connection, job: JobRef) -> None:
    """Run a job now, once (the API refuses a Disabled job)."""
    with connection.client() as client:
        client.run_job(job)
    note(f"Asked the job {job} to run now.")


def _set_state(connection: Connection, job: JobRef, state: str, as_json: bool) -> None:
    with connection.client() as client:
        body = client.patch_job(job, {"properties": {"state": state}})
    if as_json:
        emit_json(body)
    else:
        note(f"The job {job} is {_state_and_next(body)}.")


@jobs.command()
@job_options
@json_option
@connection_options
def enable(connection: Connection, job: JobRef, as_json: bool) -> None:
    """Enable a job (PATCH its state)."""
    _set_state(connection, job, "Enabled", as_json)


@jobs.command()
@job_options
@json_option
@connection_options
def disable(connection: Connection, job: JobRef, as_json: bool) -> None:
    """Disable a job (PATCH its state)."""
    _set_state(connection, job, "Disabled", as_json)


@jobs.command()
@job_options
@yes_option
@connection_options
def delete(connection: Connection, job: JobRef, yes: bool) -> None:
    """Delete a job and its history."""
    confirm_delete(f"the job {job} and its history", yes)
    with connection.client() as client:
        client.delete_job(job)
    note(f"Deleted the job {job} and its history.")


@jobs.command()
@job_options
@click.option(
    "--status",
    type=click.Choice(HISTORY_STATUSES, case_sensitive=False),
    default=None,
    help="Only the entries with this status.",
)
@click.option(
    "--top",
    type=click.IntRange(1, 100),
    default=None,
    help="Entries per page, 1-100 (without it, the API's page: up to 1,000 entries).",
)
@click.option("--skip", type=click.IntRange(min=0), default=0, help="Entries to skip first.")
@click.option("--all", "every", is_flag=True, help="Follow nextLink: every page.")
@json_option
@connection_options
def history(
    connection: Connection,
    job: JobRef,
    status: str | None,
    top: int | None,
    skip: int,
    every: bool,
    as_json: bool,
) -> None:
    """A job's history, newest first: time, action, status, retry, message."""
    with connection.client() as client:
        listing = client.history(job, status=status, top=top, skip=skip)
        entries = list(listing.value)
        while every and listing.next_link is not None:
            listing = client.next_page(listing)
            entries += listing.value
    if as_json:
        emit_json({"value": entries, "nextLink": listing.next_link})
        return
    if entries:
        for line in history_lines(entries):
            click.echo(line)
    else:
        note(f"No {status + ' ' if status else ''}history entries for the job {job}.")
    if listing.next_link is not None:
        note(f"More entries follow: --all, or --skip {skip + len(entries)}.")


@jobs.command()
@job_options
@click.option(
    "--count",
    type=click.IntRange(1, 1000),
    default=10,
    show_default=True,
    help="How many executions (times a calendar skips are listed besides, not counted).",
)
@json_option
@connection_options
def upcoming(connection: Connection, job: JobRef, count: int, as_json: bool) -> None:
    """A job's next executions, in UTC and on its wall clock (a Horarium extension)."""
    with connection.client() as client:
        listing = client.upcoming(job, count)
    empty = f"The job {job} has no upcoming executions."
    headers: tuple[str, ...] = UPCOMING_HEADERS
    row = upcoming_row
    if any(entry.get("overdue") for entry in listing.value):
        headers, row = OVERDUE_HEADERS, overdue_row
    print_listing(listing, as_json, headers, row, empty=empty, right=(3,))
    policy = listing.extra.get("executionPolicy")
    if policy and not as_json:
        note(f"Execution policy: {describe_policy(policy)}.")
