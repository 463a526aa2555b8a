"""Service settings: one dataclass, the one place every option of `serve` and `worker` is declared.

Each field is an option: `--name-with-dashes` on the command line (built by `horarium.cli`), and
the environment variable `HORARIUM_NAME_IN_CAPITALS`. A field's metadata gives its help text,
which commands take it (`api`: only `serve`), its choices, and a flag's spelling.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from horarium.logs import FORMATS, LEVELS
from horarium.loops import LOOPS


def option(
    default: Any,
    help: str,
    *,
    api: bool = False,
    choices: tuple[str, ...] | None = None,
    flag: str | None = None,
    secret: bool = False,
) -> Any:
    """A settings field that is also a command-line option.

    `api`: the option concerns the management API, so only `serve` takes it; `choices`: the
    values allowed; `flag`: the spelling of a boolean option (e.g. `--engine/--no-engine`).
    A tuple default makes an option that may be given several times (comma-separated in its
    environment variable). `secret`: its value holds a credential, left out of the settings'
    repr (so that no traceback or debug line shows it)."""
    metadata = {"help": help, "api": api, "choices": choices, "flag": flag}
    return field(default=default, metadata=metadata, repr=not secret)


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
    header_timeout: float = option(
        10.0,
        "Seconds a request's line and headers may take to arrive once it has begun; a slower"
        " client is disconnected.",
        api=True,
    )
    keep_alive_timeout: int = option(
        30,
        "Seconds a keep-alive connection may stay idle between requests before it is closed;"
        " longer than HTTP clients keep idle connections (httpx 5 s, aiohttp 15 s), so that a"
        " client never sends a request on a connection the server is closing.",
        api=True,
    )
    database_timeout: float = option(
        10.0,
        "Seconds a PostgreSQL statement may take (also while the network to it is silent):"
        " past it the statement is cancelled, the API answers 503 and the engine backs off as"
        " in an outage (0: no limit).",
    )
    http_timeout: float = option(60.0, "Seconds an HTTP action may take.")
    grace_period: float = option(60.0, "Seconds late before an execution counts as missed.")
    poll_interval: float = option(1.0, "Longest sleep between looks for due work.")
    batch_size: int = option(200, "Executions claimed per round.")
    lease_seconds: float = option(
        300.0, "How long a claim is held before another process may take it over."
    )
    max_in_flight: int = option(500, "Executions running at once in this process.")
    plan_cache_size: int = option(
        500_000,
        "Recurring jobs whose compiled schedule the engine keeps (about 0.6 KB each); beyond"
        " that the least recently run is compiled again when it next runs.",
    )
    slow_attempt_seconds: float = option(
        2.0,
        "Seconds after which an attempt counts as slow: a collection whose attempts end"
        " sooner may take every slot of --max-in-flight; new, slow and hung ones share"
        " nine tenths of them, so that they cannot keep the other collections waiting.",
    )
    collection_share: float | None = option(
        None,
        "No longer used: --slow-attempt-seconds and the slots' shares replace it. Accepted,"
        " with a warning at start, so that older settings still start.",
    )
    node_timeout: float = option(
        15.0,
        "Seconds without a heartbeat (written every third of it) after which the other"
        " processes take over a process's executions.",
    )
    max_clock_offset: float = option(
        10.0,
        "Seconds a process's clock may differ from PostgreSQL's: the engine reads the database's"
        " time (the offset is measured at every heartbeat and corrected), and past this bound a"
        " process claims no work until its clock is put right.",
    )
    drain_seconds: float = option(
        10.0,
        "On stop (SIGTERM), how long running attempts may take to finish before they are"
        " handed back; executions not started are handed back at once.",
    )
    notification_attempts: int = option(
        10,
        "Deliveries tried for one notification (collection notifications) before it is given up.",
    )
    notification_retry_seconds: float = option(
        10.0,
        "Seconds before a notification that was not delivered is sent again, doubled after"
        " each failure (at most an hour).",
    )
    smtp_url: str | None = option(
        None,
        "SMTP server that email notifications are sent through: smtp://[user:password@]host"
        "[:port] (STARTTLS when the server offers it) or smtps://… (TLS from the start). Give"
        " it through the environment when it holds a password.",
        secret=True,
    )
    smtp_from: str | None = option(
        None,
        "The From address of email notifications (default: horarium@ the host of --smtp-url).",
    )
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

    # -- security (docs/security.md) ----------------------------------------------------------
    auth: str = option(
        "keys",
        "Caller authentication: keys (API keys, and OpenID Connect tokens when --oidc-issuer is"
        " set) or none (refused unless --host is a loopback address).",
        api=True,
        choices=("keys", "none"),
    )
    allowed_hosts: tuple[str, ...] = option(
        (),
        "Host header values the API and the metrics port answer (default: the bind address,"
        " localhost, 127.0.0.1, ::1 and the host of --public-url).",
    )
    public_url: str | None = option(
        None, "The URL callers reach the API at; nextLink is built from it.", api=True
    )
    forwarded_allow_ips: tuple[str, ...] = option(
        (),
        "Addresses of the reverse proxies whose X-Forwarded-For and X-Forwarded-Proto are"
        " trusted ('*': any); by default no one's.",
        api=True,
    )
    oidc_issuer: str | None = option(
        None, "Also accept JWTs from this OpenID Connect issuer (its URL).", api=True
    )
    oidc_audience: str | None = option(
        None, "The audience (aud) an OpenID Connect token must carry.", api=True
    )
    oidc_subscriptions_claim: str = option(
        "subscriptions",
        "Claim of an OpenID Connect token that lists its subscriptions ('*': all).",
        api=True,
    )
    oidc_role_claim: str = option(
        "role",
        "Claim of an OpenID Connect token that names its role (reader, contributor).",
        api=True,
    )
    ssl_certfile: Path | None = option(
        None,
        "TLS certificate (PEM) for the API; with --ssl-keyfile the API speaks https.",
        api=True,
    )
    ssl_keyfile: Path | None = option(None, "TLS private key (PEM) for the API.", api=True)
    secret_key_file: Path | None = option(
        None,
        "File of the key that encrypts secrets at rest (default: secret.key in --data-dir,"
        " created on first start).",
    )
    secret_key: str | None = option(
        None,
        "The secret-encryption key itself (base64 of 32 bytes); set it through the environment,"
        " not the command line. Wins over --secret-key-file.",
    )
    outbound_deny: tuple[str, ...] = option(
        ("link-local", "metadata"),
        "Addresses HTTP actions may not reach: CIDRs, or link-local, metadata, private"
        " (loopback, RFC 1918, CGNAT, ULA).",
    )
    outbound_allow: tuple[str, ...] = option(
        (), "CIDRs HTTP actions may reach even when --outbound-deny covers them."
    )
    max_collections_per_subscription: int = option(
        100, "Job collections one subscription may hold.", api=True
    )

    # -- operations (docs/operations.md) -------------------------------------------------------
    log_format: str = option(
        "text", "Log lines as text, or as one JSON object each.", choices=FORMATS
    )
    log_level: str = option(
        "info",
        "Horarium's log level (debug also logs every successful execution).",
        choices=LEVELS,
    )
    access_log: bool = option(
        True,
        "Log one line per API request (uvicorn.access; JSON under --log-format json).",
        api=True,
        flag="--access-log/--no-access-log",
    )
    metrics_public: bool = option(
        False,
        "Answer /metrics without a bearer token (default: a key or token that reaches every"
        " subscription).",
        flag="--metrics-public/--no-metrics-public",
    )
    metrics_port: int | None = option(
        None,
        "Also answer /metrics, /healthz and /readyz on this port (plain http, on"
        " --metrics-host): a worker's only HTTP listener.",
    )
    metrics_host: str = option("127.0.0.1", "Address the --metrics-port listener binds.")

    @property
    def database_url(self) -> str:
        if self.database:
            return self.database
        return f"sqlite:///{(self.data_dir / 'horarium.sqlite3').resolve()}"


def outdated_options(settings: Settings) -> list[str]:
    """Start-up warnings about options given that no longer do anything."""
    if settings.collection_share is None:
        return []
    return [
        "--collection-share (HORARIUM_COLLECTION_SHARE) no longer does anything: a collection"
        " whose attempts end quickly may take every slot, and new, slow or hung ones share nine"
        " tenths of them (--slow-attempt-seconds); remove it."
    ]
