"""Schemathesis against the service's own `/openapi.json`: no generated request gets a 5xx.

Bounded: every operation in both generation modes, `EXAMPLES` examples each, from a seed chosen
per run (`HORARIUM_FUZZ_SEED` repeats a run; a failure names its seed), so that successive runs
explore different requests; `-m long_fuzz` runs the same passes with `LONG_EXAMPLES`. Three passes:
free path parameters (mostly names that do not exist, or are not valid names); path parameters
pinned to an existing collection and job so that generated bodies and queries reach the
validation and the store; and the same with a lone surrogate or a NUL in every string of every
generated body. Requests carry the server's admin token (`server.auth_headers()`). On SQLite
here, on PostgreSQL in tests/api/test_api_fuzz_postgres.py.
"""

from __future__ import annotations

import itertools
import json
import os
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, seed, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.openapi.loaders import from_url

from tests.migrated_databases import migrated_pg_database
from tests.server_process import ServerProcess, running_server

EXAMPLES = 4
LONG_EXAMPLES = 100
SEED = int(os.environ.get("HORARIUM_FUZZ_SEED") or random.SystemRandom().randrange(2**32))
BUDGETS = [
    pytest.param(EXAMPLES, id="quick"),
    pytest.param(LONG_EXAMPLES, id="long", marks=pytest.mark.long_fuzz),
]
PINNED = {
    "subscriptionId": "fuzz-subscription",
    "resourceGroupName": "fuzz-rg",
    "jobCollectionName": "fuzzcollection",
    "jobName": "fuzzjob",
}


# The database of the server this module's tests fuzz: tests/api/test_api_fuzz_postgres.py runs
# the same tests on PostgreSQL (a module of its own, so that another worker runs it meanwhile).
DATABASE = "sqlite"


@pytest.fixture(scope="module")
def fuzz_server(request: pytest.FixtureRequest, tmp_path_factory: Any) -> Iterator[ServerProcess]:
    """A server on the database named by the test's module (`DATABASE`)."""
    database: str = request.module.DATABASE
    workdir: Path = tmp_path_factory.mktemp(f"fuzz-{database}")
    if database == "postgres":
        with migrated_pg_database() as url, running_server(workdir, database=url) as server:
            yield server
    else:
        with running_server(workdir) as server:
            yield server


def _fuzz(
    server: ServerProcess,
    prepare: Callable[[Any], None],
    examples: int,
    *,
    bodies_only: bool = False,
) -> int:
    """Every operation (`bodies_only`: every one that takes a body), with valid-per-schema and
    invalid generated requests, `examples` of each; returns how many requests were sent. Fails
    (with the offending request and the run's seed) on the first 5xx."""
    limits = settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    schema = from_url(server.url("/openapi.json"))
    sent = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        if bodies_only and not operation.body:
            continue
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @seed(SEED)
            @limits
            def run(case: Any) -> None:
                nonlocal sent
                prepare(case)
                sent += 1
                case.call_and_validate(
                    base_url=server.base_url,
                    headers=server.auth_headers(),
                    checks=[not_a_server_error],
                )

            try:
                run()
            except BaseException as failure:
                failure.add_note(f"fuzz seed {SEED}: repeat with HORARIUM_FUZZ_SEED={SEED}")
                where = f"{operation.method.upper()} {operation.path}"
                failure.add_note(f"operation: {where} ({mode.value})")
                raise
    return sent


def _reset(server: ServerProcess) -> None:
    """The pinned collection and job exist, enabled, before every pinned case."""
    base = (
        f"/subscriptions/{PINNED['subscriptionId']}/resourceGroups/{PINNED['resourceGroupName']}"
        f"/providers/Microsoft.Scheduler/jobCollections/{PINNED['jobCollectionName']}"
    )
    query = {"api-version": "2016-03-01"}
    with httpx.Client(
        base_url=server.base_url, params=query, timeout=30, headers=server.auth_headers()
    ) as http:
        collection = {"location": "West US", "properties": {"sku": {"name": "Standard"}}}
        assert http.put(base, json=collection).status_code in (200, 201)
        http.delete(f"{base}/jobs/{PINNED['jobName']}")
        job = {
            "properties": {
                "action": {
                    "type": "Http",
                    "request": {"uri": "http://127.0.0.1:9/", "method": "GET"},
                },
                "recurrence": {"frequency": "Hour", "interval": 1},
            }
        }
        assert http.put(f"{base}/jobs/{PINNED['jobName']}", json=job).status_code == 201


@pytest.mark.parametrize("examples", BUDGETS)
def test_no_server_error_for_any_request(fuzz_server: ServerProcess, examples: int) -> None:
    assert _fuzz(fuzz_server, lambda case: None, examples) > examples


def _pinning(server: ServerProcess) -> Callable[[Any], None]:
    """Prepares a case to act on the pinned collection and job, made again after a write."""
    changed = [True]

    def pin(case: Any) -> None:
        if changed[0]:
            _reset(server)
        changed[0] = case.method.upper() != "GET"  # only writes can change what is there
        for name, value in PINNED.items():
            if name in (case.path_parameters or {}):
                case.path_parameters[name] = value
        if isinstance(case.query, dict) and "api-version" in case.query:
            case.query["api-version"] = "2016-03-01"

    return pin


@pytest.mark.parametrize("examples", BUDGETS)
def test_no_server_error_on_existing_resources(fuzz_server: ServerProcess, examples: int) -> None:
    assert _fuzz(fuzz_server, _pinning(fuzz_server), examples) > examples


# What no stored value may hold; schemathesis does not generate them. (A key given twice cannot
# be generated either: tests/security/test_input_hygiene.py sends those as raw text.)
UNSTORABLE = ("\ud800", "\x00", "\udfff")


def _poisoned(value: Any, marks: Iterator[str]) -> Any:
    """`value` with a lone surrogate or a NUL added to every string value in it (names are
    left alone, so that known properties, tags and headers stay what they were)."""
    if isinstance(value, str):
        return value + next(marks)
    if isinstance(value, list):
        return [_poisoned(item, marks) for item in value]
    if isinstance(value, dict):
        return {k: _poisoned(v, marks) for k, v in value.items()}
    return value


def _assert_nothing_unstorable_kept(server: ServerProcess) -> None:
    """The pinned subscription's list, collection and job read back without any of UNSTORABLE
    (they would come back as JSON escapes)."""
    base = f"/subscriptions/{PINNED['subscriptionId']}"
    collection = (
        f"{base}/resourceGroups/{PINNED['resourceGroupName']}/providers/Microsoft.Scheduler"
        f"/jobCollections/{PINNED['jobCollectionName']}"
    )
    paths = (
        f"{base}/providers/Microsoft.Scheduler/jobCollections",
        collection,
        f"{collection}/jobs/{PINNED['jobName']}",
    )
    with httpx.Client(
        base_url=server.base_url,
        params={"api-version": "2016-03-01"},
        timeout=30,
        headers=server.auth_headers(),
    ) as http:
        for path in paths:
            response = http.get(path)
            assert response.status_code in (200, 404), response.text
            for escape in (b"\\ud8", b"\\udf", b"\\u0000"):
                assert escape not in response.content.lower(), response.text


@pytest.mark.parametrize("examples", BUDGETS)
def test_no_server_error_for_unstorable_text_in_bodies(
    fuzz_server: ServerProcess, examples: int
) -> None:
    """Generated bodies for the pinned resources, each string value carrying a lone surrogate
    or a NUL: never a 5xx, and never stored (checked before each next case)."""
    pin = _pinning(fuzz_server)
    marks = itertools.cycle(UNSTORABLE)

    def poison(case: Any) -> None:
        _assert_nothing_unstorable_kept(fuzz_server)  # what the previous case wrote
        pin(case)
        if isinstance(case.body, dict | list | str):
            # As JSON text (escapes for the surrogates), which schemathesis sends as it is.
            case.body = json.dumps(_poisoned(case.body, marks)).encode()

    assert _fuzz(fuzz_server, poison, examples, bodies_only=True) > examples
    _assert_nothing_unstorable_kept(fuzz_server)
