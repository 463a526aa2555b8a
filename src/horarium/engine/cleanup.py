"""The periodic retention task (indexed deletes, see `horarium.store.runs.retention`; on
PostgreSQL also the history's daily partitions, made ahead and dropped whole:
`horarium.store.runs.partitions`)."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.engine.clock import Clock
from horarium.store.core.outages import is_outage
from horarium.store.runs.partitions import drop_partitions_before, prepare_partitions
from horarium.store.runs.retention import (
    CHECK_INS,
    delete_aged_history,
    delete_history_before,
    delete_jobs_ended_before,
    trim_history,
)

log = logging.getLogger(__name__)

HISTORY_ENTRIES = 1000  # per job, and check-ins per monitor
HISTORY_AGE = timedelta(days=60)
ENDED_JOB_AGE = timedelta(days=60)  # Completed / Faulted jobs
INTERVAL = 600.0  # seconds between cleanups
FIRST_DELAY = 30.0


async def clean_once(db: AsyncEngine, clock: Clock) -> dict[str, int]:
    """One cleanup pass; returns how many entries and jobs each rule deleted (and how many
    history partitions were made and dropped)."""
    now = clock.now()
    return {
        "partitionsMade": await prepare_partitions(db, now),
        "trimmed": await trim_history(db, HISTORY_ENTRIES),
        "partitionsDropped": await drop_partitions_before(db, now - HISTORY_AGE),
        "aged": await delete_aged_history(db, now - HISTORY_AGE),
        "jobs": await delete_jobs_ended_before(db, now - ENDED_JOB_AGE),
        "checkInsTrimmed": await trim_history(db, HISTORY_ENTRIES, CHECK_INS),
        "checkInsAged": await delete_history_before(db, now - HISTORY_AGE, CHECK_INS),
    }


async def clean_forever(db: AsyncEngine, clock: Clock) -> None:
    try:  # today's history partition before the first records, when it is missing
        await prepare_partitions(db, clock.now())
    except Exception as exc:
        if not is_outage(exc):
            log.exception("making the history partitions failed")
    await asyncio.sleep(FIRST_DELAY)
    while True:
        try:
            counts = await clean_once(db, clock)
            if any(counts.values()):
                log.info("retention cleanup: %s", counts)
        except Exception as exc:
            if not is_outage(exc):
                log.exception("retention cleanup failed")
            else:  # the engine's other transactions report the outage
                log.warning("retention cleanup skipped: the database cannot be reached")
        await asyncio.sleep(INTERVAL)
