"""Instructions per execution, by part, counted by callgrind: where the dispatch burst's work
goes, in a figure that does not depend on the machine's load or speed.

    .venv/bin/python bench/instructions.py [--small 200] [--big 2000]

Each part runs once at `--small` and once at `--big` jobs, each run a process of its own under
`valgrind --tool=callgrind` (two at a time); a part's instructions per execution are the
difference between the two counts divided by the difference in jobs, so start-up (imports, the
connection pool, the schema) cancels out. The parts, each against the same HTTP sink (another
process, not counted) and with the same action client:

  client      the action client sending the requests alone (`dispatch.run_ceiling`: the dispatch
              benchmark's ceiling)
  memory      the engine's dispatcher, recorder and decider on the unit tests' in-memory store
              (`dispatch.run_memory_engine`: the burst's bound without a database)
  sqlite      horarium on a SQLite file, history and status written (`dispatch.run_horarium`),
              its periodic tasks slowed to once a minute as `bench/store_forms.py` does (under
              callgrind a burst lasts some 50 times longer)
  and, to be subtracted, filling each store with the jobs alone (`dispatch.memory_burst_store`,
  `dispatch._insert_jobs`).

The table gives, per execution, the client's count and each engine's own count beyond it (its
run − filling its store − the client's), split by where the instructions ran: the interpreter
(libpython), SQLite (the library and its driver module), the C library, and the rest (uvloop,
aiohttp's and the standard library's C extensions). Its last column is the share of the ceiling
the burst would reach were time proportional to instructions: client ÷ (client + own). The
engine on SQLite still polls its history's row count every 0.2 s of a run that lasts longer
under callgrind, so its figure is slightly high. Not a test: prints a table; the own counts go
to docs/benchmarks.md's current figures.

    .venv/bin/python bench/instructions.py --part sqlite --jobs 2000

runs one part once, without callgrind (what each counted process runs).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dispatch
from store_forms import DAMPED  # the periodic tasks slowed under callgrind
from support import record_figures, run, sink

PARTS = ("client", "memory", "memory-filling", "sqlite", "sqlite-filling")
SLOTS = 500  # the dispatch benchmark's --max-in-flight
WHERE = ("interpreter", "SQLite", "C library", "other")
LINE = re.compile(r"^\s*([\d,]+)\s+\([^)]*\)\s+(.*)$")

# -- one part, in the counted process ------------------------------------------------------------


async def run_part(part: str, jobs: int) -> None:
    dispatch.prepare_process()
    with sink(record=False) as url:
        if part == "client":
            await dispatch.run_ceiling(url, jobs, SLOTS)
        elif part == "memory":
            await dispatch.run_memory_engine(url, jobs, SLOTS)
        elif part == "memory-filling":
            now = datetime.now(UTC)
            dispatch.memory_burst_store(url, jobs, now + timedelta(seconds=1), now)
        elif part == "sqlite":
            await dispatch.run_horarium(url, [0.0] * jobs, SLOTS, **DAMPED)
        else:
            await fill_sqlite(url, jobs)


async def fill_sqlite(url: str, jobs: int) -> None:
    """What `dispatch.run_horarium` does before its engine starts: the schema, then the jobs."""
    from horarium.store.core.db import create_engine, migrate

    with tempfile.TemporaryDirectory() as tmp:
        db = create_engine(dispatch.settings(Path(tmp)).database_url)
        await migrate(db)
        now = datetime.now(UTC)
        await dispatch._insert_jobs(db, url, [now + timedelta(seconds=1)] * jobs, now)
        await db.dispose()


# -- counting ------------------------------------------------------------------------------------


def count(part: str, jobs: int, folder: Path) -> Counter[str]:
    """The instructions of one run of `part`, by where they ran (`WHERE`)."""
    out = folder / f"{part}.{jobs}.out"
    command = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out}",
        sys.executable,
        __file__,
        "--part",
        part,
        "--jobs",
        str(jobs),
    ]
    subprocess.run(command, check=True, capture_output=True)
    annotated = subprocess.run(
        ["callgrind_annotate", "--threshold=100", str(out)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return by_place(annotated)


def by_place(annotated: str) -> Counter[str]:
    """`callgrind_annotate`'s per-function counts summed by `WHERE`."""
    counts: Counter[str] = Counter()
    for line in annotated.splitlines():
        found = LINE.match(line)
        if found is None or "PROGRAM TOTALS" in found.group(2):
            continue
        counts[place(found.group(2))] += int(found.group(1).replace(",", ""))
    return counts


def place(function: str) -> str:
    """Where a function of `callgrind_annotate`'s list ran: its object file, or for code inlined
    without one, its source file."""
    if "sqlite3" in function:
        return "SQLite"
    if "libpython" in function or "/Python-3." in function:
        return "interpreter"
    if "libc.so" in function:
        return "C library"
    return "other"


def per_execution(big: Counter[str], small: Counter[str], jobs: int) -> dict[str, float]:
    return {where: (big[where] - small[where]) / jobs for where in WHERE}


def minus(a: dict[str, float], *others: dict[str, float]) -> dict[str, float]:
    return {where: a[where] - sum(other[where] for other in others) for where in WHERE}


def row(name: str, counts: dict[str, float], client: float | None) -> str:
    total = sum(counts.values())
    cells = " | ".join(f"{counts[where] / 1000:,.0f}k" for where in WHERE)
    share = "–" if client is None else f"{client / (client + total):.0%}"
    return f"| {name} | {total / 1000:,.0f}k | {cells} | {share} |"


def main(small: int, big: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(2) as pool:
        runs = {
            (part, jobs): pool.submit(count, part, jobs, Path(tmp))
            for part in PARTS
            for jobs in (small, big)
        }
        counts = {key: future.result() for key, future in runs.items()}
    each = {
        part: per_execution(counts[part, big], counts[part, small], big - small) for part in PARTS
    }
    client = each["client"]
    memory = minus(each["memory"], each["memory-filling"], client)
    sqlite = minus(each["sqlite"], each["sqlite-filling"], client)
    store = minus(sqlite, memory)
    base = sum(client.values())
    print(f"Instructions per execution, {small} and {big} one-time jobs due at once (callgrind)\n")
    print("| part | instructions | " + " | ".join(WHERE) + " | client ÷ (client + own) |")
    print("|---|---:|" + "---:|" * len(WHERE) + "---:|")
    print(row("the action client alone (the ceiling)", client, None))
    print(row("the engine's own, on the in-memory store (no database)", memory, base))
    print(row("horarium's own, on SQLite", sqlite, base))
    print(row("of which the SQLite store (SQLite − in-memory)", store, None))
    print(
        f"\nThe target of 80 % of the ceiling leaves the engine {base / 4 / 1000:,.0f}k "
        "instructions per execution (a quarter of the client's)."
    )
    record_figures(
        "instructions",
        [
            ("the action client alone, per execution", f"{base / 1000:,.0f}k"),
            (
                "the engine's own: in-memory store / SQLite, per execution",
                f"{sum(memory.values()) / 1000:,.0f}k / {sum(sqlite.values()) / 1000:,.0f}k",
            ),
        ],
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=200)
    parser.add_argument("--big", type=int, default=2000)
    parser.add_argument("--part", choices=PARTS, help="run this part once (what is counted)")
    parser.add_argument("--jobs", type=int, default=2000, help="with --part")
    arguments = parser.parse_args()
    os.environ.setdefault("PYTHONHASHSEED", "0")
    if arguments.part:
        run(run_part(arguments.part, arguments.jobs))
    else:
        main(arguments.small, arguments.big)
