"""Service settings: one dataclass, filled from `horarium serve` options or HORARIUM_* variables."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8080
    data_dir: Path = Path("horarium-data")
    database: str | None = None  # None: SQLite file in data_dir
    run_engine: bool = True  # serve also runs the scheduler; `horarium worker` runs it alone
    http_timeout: float = 60.0  # seconds, outbound HTTP actions
    grace_period: float = 60.0  # seconds late before an execution counts as missed
    poll_interval: float = 1.0  # seconds between claims when nothing is due
    batch_size: int = 200  # executions claimed per round
    lease_seconds: float = 300.0  # how long a claim is held before another worker may take it over
    max_in_flight: int = 500  # concurrent executions per process
    loop: str = "auto"  # event loop: auto (uvloop when installed), asyncio, uvloop
    region: str = "local"  # x-ms-scheduler-execution-region
    aad_authority: str = "https://login.microsoftonline.com"
    storage_queue_url: str = "https://{account}.queue.core.windows.net"
    servicebus_url: str = "amqps://{namespace}.servicebus.windows.net:5671"
    servicebus_queue_address: str = "{queue}"
    servicebus_topic_address: str = "{topic}"

    @property
    def database_url(self) -> str:
        if self.database:
            return self.database
        return f"sqlite:///{(self.data_dir / 'horarium.sqlite3').resolve()}"
