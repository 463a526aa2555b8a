"""Service settings: one dataclass, the one place every option of `serve` and `worker` is declared.

Each field is an option: `--name-with-dashes` on the command line (built by `horarium.cli`), and
the environment variable `HORARIUM_NAME_IN_CAPITALS`. A field's metadata gives its help text,
which commands take it (`api`: only `serve`), its choices, and a flag's spelling.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from horarium.loops import LOOPS


def option(
    default: Any,
    help: str,
    *,
    api: bool = False,
    choices: tuple[str, ...] | None = None,
    flag: str | None = None,
) -> Any:
    """A settings field that is also a command-line option.

    `api`: the option concerns the management API, so only `serve` takes it; `choices`: the
    values allowed; `flag`: the spelling of a boolean option (e.g. `--engine/--no-engine`).
    A tuple default makes an option that may be given several times (comma-separated in its
    environment variable)."""
    metadata = {"help": help, "api": api, "choices": choices, "flag": flag}
    return field(default=default, metadata=metadata)


@dataclass(frozen=True)
class Settings:
    host: str = option("127.0.0.1", "Address the API listens on.", api=True)
    port: int = option(8080, "Port the API listens on.", api=True)
    data_dir: Path = option(Path("horarium-data"), "Folder of the embedded SQLite database.")
    database: str | None = option(
        None,
        "Database URL (sqlite:///FILE or postgresql://…); default: SQLite file in --data-dir.",
    )
    run_engine: bool = option(
        True,
        "Also run the scheduler in this process (serve only; a worker always does).",
        api=True,
        flag="--engine/--no-engine",
    )
    http_timeout: float = option(60.0, "Seconds an HTTP action may take.")
    grace_period: float = option(60.0, "Seconds late before an execution counts as missed.")
    poll_interval: float = option(1.0, "Longest sleep between looks for due work.")
    batch_size: int = option(200, "Executions claimed per round.")
    lease_seconds: float = option(
        300.0, "How long a claim is held before another process may take it over."
    )
    max_in_flight: int = option(500, "Executions running at once in this process.")
    loop: str = option(
        "auto",
        "Event loop: auto takes uvloop when it is installed, else asyncio's own.",
        choices=LOOPS,
    )
    region: str = option("local", "Value of the x-ms-scheduler-execution-region header.")
    aad_authority: str = option(
        "https://login.microsoftonline.com", "Azure AD authority for ActiveDirectoryOAuth actions."
    )
    storage_queue_url: str = option(
        "https://{account}.queue.core.windows.net", "Queue service URL template ({account})."
    )
    servicebus_url: str = option(
        "amqps://{namespace}.servicebus.windows.net:5671",
        "AMQP connection URL template ({namespace}).",
    )
    servicebus_queue_address: str = option(
        "{queue}", "AMQP target address template for queues ({queue})."
    )
    servicebus_topic_address: str = option(
        "{topic}", "AMQP target address template for topics ({topic})."
    )

    @property
    def database_url(self) -> str:
        if self.database:
            return self.database
        return f"sqlite:///{(self.data_dir / 'horarium.sqlite3').resolve()}"
