"""`horarium jobs show` and `collections show` list a pause (Horarium extension) where there is
one, and nothing more where there is none."""

from __future__ import annotations

from horarium.cli.rest.job_views import job_pairs, pause_pairs

PAUSE = {"until": "2031-02-03T04:05:06Z", "reason": "vendor maintenance"}


def test_a_paused_job_shows_until_when_and_why() -> None:
    body = {"name": "jc/ping", "properties": {"state": "disabled", "pause": PAUSE}}
    pairs = dict(job_pairs(body))
    assert pairs["pause reason"] == "vendor maintenance"
    assert "2031-02-03" in pairs["paused until"]


def test_a_job_without_a_pause_shows_no_pause_lines() -> None:
    body = {"name": "jc/ping", "properties": {"state": "enabled"}}
    assert not [k for k, _ in job_pairs(body) if k.startswith("pause")]
    assert pause_pairs(None) == []
