"""A/B of the engine's cost per execution: the dispatch benchmark's burst, horarium alone.

    .venv/bin/python bench/store_forms.py --form fast|plain [--jobs 2000] [--slow-attempt-seconds S]
    nice -n -19 valgrind --tool=callgrind .venv/bin/python bench/store_forms.py --form fast
    nice -n -19 valgrind --tool=callgrind .venv/bin/python bench/store_forms.py --tree ../old
    nice -n -19 valgrind --tool=callgrind .venv/bin/python bench/store_forms.py --client-alone

`fast` is what the engine uses on SQLite (`store/runs/sqlite_fast.py`: instants bound as stored
text, rows handed to the driver as tuples); `plain` is `SQLiteDialect`, SQLAlchemy's own
parameter handling. `--tree` runs the engine of another checkout (a git worktree of an older
commit) with this harness, for a before/after pair (its fast form). Under callgrind, subtract a
run with `--jobs 20` (start-up) and divide by the difference in jobs for the instructions per
execution. `--client-alone` counts the HTTP action client sending the same requests with no
engine (the dispatch benchmark's ceiling): the engine's own share is the difference.

The periodic tasks (the pause and notification polls every `poll_interval`, node heartbeats)
are slowed to once a minute unless `--periodic` is given: under callgrind the burst takes some
30 s instead of one, so they would run about 30 times more often per execution than in a real
run. The count is still not free of the machine's load (the engine's timers take more turns
when the process runs slowly: +15 % seen at load 5), so compare runs taken back to back with
nothing else running. `--collection-share` sets that setting of an older tree (`--tree`), which had
it instead of `--slow-attempt-seconds`. Not a test: prints the dispatch benchmark's table."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

# Damped periodic tasks (see above): options of `Settings`, where the checkout has them.
DAMPED = {"poll_interval": 60.0, "node_timeout": 600.0}


def plain_dialect_of(db: Any) -> Any:
    from horarium.store.runs.dialect import RunDialect
    from horarium.store.runs.sqlite_fast import SQLiteDialect

    return SQLiteDialect() if db.dialect.name == "sqlite" else RunDialect()


async def main(jobs: int, client_alone: bool = False, **tuning: Any) -> None:
    # Imported here, after `--tree` has put that checkout's bench folder first on sys.path.
    import dispatch
    from support import sink

    from horarium.loops import running_loop_name

    dispatch.prepare_process()
    print(f"Event loop: {running_loop_name()}\n")
    with sink(record=False) as url:
        if client_alone:  # the dispatch benchmark's ceiling: the same requests, no engine
            result = await dispatch.run_ceiling(url, jobs, 500)
        else:
            result = await dispatch.run_horarium(url, [0.0] * jobs, **tuning)
        print(dispatch.table(f"Burst: {jobs} jobs due at the same instant", [result], None))


def tuning_of(arguments: argparse.Namespace) -> dict[str, Any]:
    from horarium.config import Settings

    options = {field.name for field in dataclasses.fields(Settings)}
    tuning: dict[str, Any] = {}
    if not arguments.periodic:
        tuning.update({k: v for k, v in DAMPED.items() if k in options})
    for name in ("slow_attempt_seconds", "collection_share"):
        value = getattr(arguments, name)
        if value is not None:
            if name not in options:
                raise SystemExit(f"--{name.replace('_', '-')}: not a setting of this tree")
            tuning[name] = value
    return tuning


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--form", choices=("fast", "plain"), default="fast")
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--slow-attempt-seconds", type=float, default=None)
    parser.add_argument("--collection-share", type=float, default=None, help="older trees")
    parser.add_argument("--periodic", action="store_true", help="periodic tasks as configured")
    parser.add_argument("--tree", type=Path, help="the checkout whose engine runs (default: this)")
    parser.add_argument(
        "--client-alone",
        action="store_true",
        help="the HTTP action client alone (the dispatch benchmark's ceiling), no engine",
    )
    arguments = parser.parse_args()
    tree = (arguments.tree or Path(__file__).parent.parent).resolve()
    if arguments.tree is not None and arguments.form == "plain":
        parser.error("--tree runs the other checkout's own (fast) form")
    sys.path[:0] = [str(tree / "src"), str(tree / "bench")]
    if arguments.form == "plain":
        import horarium.store.runs.store as run_store

        run_store.dialect_of = plain_dialect_of  # type: ignore[assignment]
    from support import run

    run(main(arguments.jobs, arguments.client_alone, **tuning_of(arguments)))
