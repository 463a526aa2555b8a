"""A/B of the SQLite record statements' two forms: the dispatch benchmark's burst, horarium alone.

    .venv/bin/python bench/store_forms.py --form fast|plain [--jobs 2000] [--collection-share F]
    nice -n -19 valgrind --tool=callgrind .venv/bin/python bench/store_forms.py --form fast

`fast` is what the engine uses on SQLite (`store/runs/sqlite_fast.py`: instants bound as stored
text, rows handed to the driver as tuples); `plain` is `SQLiteDialect`, SQLAlchemy's own
parameter handling. Under callgrind, subtract a run with `--jobs 20` (start-up) and divide by
the difference in jobs for the instructions per execution. The count is not free of the
machine's load: the engine's timers and polls take more turns when the process runs slowly
(+15 % seen at load 5), so compare runs taken back to back at the same load. Not a test: prints
the dispatch benchmark's table."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import dispatch

import horarium.store.runs.store as run_store
from horarium.store.runs.dialect import RunDialect, SQLiteDialect, dialect_of


def plain_dialect_of(db: Any) -> RunDialect:
    return SQLiteDialect() if db.dialect.name == "sqlite" else dialect_of(db)


async def main(jobs: int, **tuning: Any) -> None:
    from horarium.loops import running_loop_name

    dispatch.prepare_process()
    print(f"Event loop: {running_loop_name()}\n")
    sink, url = dispatch.start_sink()
    try:
        result = await dispatch.run_horarium(url, [0.0] * jobs, **tuning)
        print(dispatch.table(f"Burst: {jobs} jobs due at the same instant", [result], None))
    finally:
        sink.terminate()
        sink.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--form", choices=("fast", "plain"), required=True)
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--collection-share", type=float, default=None)
    arguments = parser.parse_args()
    if arguments.form == "plain":
        run_store.dialect_of = plain_dialect_of  # type: ignore[assignment]
    from horarium.loops import loop_factory

    with asyncio.Runner(loop_factory=loop_factory("auto")) as runner:
        tuning = {}
        if arguments.collection_share is not None:
            tuning["collection_share"] = arguments.collection_share
        runner.run(main(arguments.jobs, **tuning))
