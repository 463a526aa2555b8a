"""SQLite on a full disk (a 3 MB tmpfs filled up): writes answer 503 ServiceUnavailable saying
so, on the same keep-alive connection, never a 500 or a reset (a write that still fits in the
WAL's reused space is stored and answered 201); reads still answer; /readyz says
not ready while nothing can be stored; once space is freed writes and /readyz recover. Nothing
of a refused request is stored. Before, a PUT answered 500 with a traceback and the next request
on the connection was reset."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.api_client import Api
from tests.server_process import running_server
from tests.support import IN_CI, wait_until


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MB tmpfs of its own (mounting needs root)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3M", "tmpfs", str(disk)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        reason = f"cannot mount a tmpfs here ({mounted.stderr.strip()})"
        if IN_CI:
            pytest.fail(f"{reason} (CI=true: it must run)")
        pytest.skip(reason)
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _job(i: int) -> dict[str, Any]:
    return {
        "properties": {
            "startTime": "2031-01-01T00:00:00Z",
            "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
            "description": f"job {i} " + "x" * 4000,
        }
    }


def _put_until_refused(api: Api, name: str, in_a_row: int) -> list[httpx.Response]:
    """PUT jobs until `in_a_row` are refused one after the other (at most 200 PUTs); every
    answer. On a full disk a write may still fit in the WAL's space, which SQLite reuses once a
    checkpoint has copied it back: such a write is stored and answered 201. Once that space is
    used up (a checkpoint cannot grow the database file), every write is refused."""
    answers: list[httpx.Response] = []
    for i in range(200):
        response = api.put(api.job(name, f"j{i}"), _job(i))
        assert response.status_code in (201, 503), response.text
        answers.append(response)
        if len(answers) >= in_a_row and all(r.status_code != 201 for r in answers[-in_a_row:]):
            return answers
    raise AssertionError(f"{len(answers)} PUTs on a full disk, never {in_a_row} refused in a row")


def test_a_full_disk_answers_503_and_recovers_when_space_is_freed(small_disk: Path) -> None:
    with running_server(small_disk / "work", engine=True) as server:
        api = Api(server)
        name = api.new_collection("P20Premium")
        filler = small_disk / "filler"
        subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], capture_output=True)

        answers = _put_until_refused(api, name, in_a_row=8)
        stored = [r.json()["name"] for r in answers if r.status_code == 201]
        for response in answers[-8:]:  # one keep-alive connection: none of them was reset
            assert response.status_code == 503, response.text
            error = response.json()["error"]
            assert error["code"] == "ServiceUnavailable"
            assert "disk is full" in error["message"], error
            assert response.headers["Retry-After"]
        assert api.get(api.collection(name)).status_code == 200  # reads still work
        ready = httpx.get(server.url("/readyz"), timeout=10)
        assert ready.status_code == 503
        assert ready.json()["error"]["details"][0]["code"] == "DatabaseCannotWrite"

        filler.unlink()
        wait_until(
            lambda: httpx.get(server.url("/readyz"), timeout=10).status_code == 200,
            "/readyz to recover once space is freed",
        )
        response = api.put(api.job(name, "after"), _job(99))
        assert response.status_code == 201, response.text
        listed = api.get(api.collection(name) + "/jobs").json()["value"]
        # What was answered 201 is there; nothing of the refused requests was stored.
        assert sorted(j["name"] for j in listed) == sorted([*stored, f"{name}/after"]), listed
        log = server.log()
    assert "Traceback" not in log
    assert log.count("the database cannot be written") <= 2, log  # one line, not one a request
