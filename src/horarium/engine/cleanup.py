"""The periodic retention task (indexed deletes, see `horarium.store.retention`)."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from horarium.engine.clock import Clock
from horarium.store.retention import (
    delete_history_before,
    delete_jobs_ended_before,
    keep_newest_history,
)
from horarium.store.runs import Runs

log = logging.getLogger(__name__)

HISTORY_ENTRIES = 1000  # per job
HISTORY_AGE = timedelta(days=60)
ENDED_JOB_AGE = timedelta(days=60)  # Completed / Faulted jobs
INTERVAL = 600.0  # seconds between cleanups
FIRST_DELAY = 30.0


async def clean_once(runs: Runs, clock: Clock, touched_jobs: set[int]) -> dict[str, int]:
    """One cleanup pass; `touched_jobs` (jobs with new history) is emptied as they are trimmed."""
    now = clock.now()
    jobs = list(touched_jobs)
    touched_jobs.difference_update(jobs)
    return {
        "trimmed": await keep_newest_history(runs, jobs, HISTORY_ENTRIES),
        "aged": await delete_history_before(runs, now - HISTORY_AGE),
        "jobs": await delete_jobs_ended_before(runs, now - ENDED_JOB_AGE),
    }


async def clean_forever(runs: Runs, clock: Clock, touched_jobs: set[int]) -> None:
    await asyncio.sleep(FIRST_DELAY)
    while True:
        try:
            counts = await clean_once(runs, clock, touched_jobs)
            if any(counts.values()):
                log.info("retention cleanup: %s", counts)
        except Exception:
            log.exception("retention cleanup failed")
        await asyncio.sleep(INTERVAL)
