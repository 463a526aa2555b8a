"""Where the management commands send their requests, and with which credential: `--url`,
`--token` (or the local admin token), `--ca-file`, `--api-version`; and how a failed request is
told (one line, exit code 1)."""

from __future__ import annotations

import functools
import ssl
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import click

from horarium.cli.options import OneLineError
from horarium.loopback import is_loopback_url

if TYPE_CHECKING:
    from horarium.client import ClientError, HorariumClient

DEFAULT_URL = "http://127.0.0.1:8080"
DEFAULT_DATA_DIR = Path("horarium-data")
ADMIN_TOKEN_FILE = "admin-token"  # the file `serve` writes on its first start
API_VERSION = "2016-03-01"
TOKEN_HINT = "pass --token TOKEN or set HORARIUM_TOKEN"


class RequestFailed(click.ClickException):
    """The API refused a request, or did not answer: one line on stderr, exit code 1."""

    exit_code = 1


def local_admin_token(url: str, data_dir: Path) -> Path | None:
    """The admin-token file to use when no token is given: `<data_dir>/admin-token` when it
    exists and `url` is a loopback address. (A token read from a local file never goes to
    another host: a mistyped or hostile `--url` would receive the admin credential.)"""
    path = data_dir / ADMIN_TOKEN_FILE
    if is_loopback_url(url) and path.is_file():
        return path
    return None


@dataclass(frozen=True)
class Connection:
    """The options of one command invocation that say how to reach the API."""

    url: str
    token: str | None
    token_file: Path | None  # where the token was read, when it came from an admin-token file
    ca_file: Path | None
    api_version: str
    looked_for: Path | None = None  # the admin-token file looked for in vain (no token given)

    @contextmanager
    def client(self) -> Iterator[HorariumClient]:
        """A client for this invocation; a failed request becomes `RequestFailed`."""
        from horarium.client import ClientError, HorariumClient
        from horarium.client.rest import tls_context

        verify: ssl.SSLContext | bool = True
        if self.ca_file is not None:
            try:
                verify = tls_context(self.ca_file)
            except ValueError as e:
                raise OneLineError(f"--ca-file: {e}") from None
        self._warn_clear_text()
        client = HorariumClient(
            self.url, token=self.token, verify=verify, api_version=self.api_version
        )
        try:
            yield client
        except ClientError as e:
            raise self.failure(e) from None
        finally:
            client.close()

    def failure(self, error: ClientError) -> RequestFailed:
        """`error` in one line, with what to do about a missing credential or an unknown CA."""
        from horarium.client import ApiRefused, Unreachable

        text = str(error)
        if isinstance(error, ApiRefused) and error.status == 401:
            story = self._token_story()
            text += f" ({story}; {TOKEN_HINT})" if story else f" ({TOKEN_HINT})"
        elif isinstance(error, Unreachable) and "CERTIFICATE_VERIFY_FAILED" in error.reason:
            text += " (a certificate from a private CA: pass --ca-file or set HORARIUM_CA_FILE)"
        return RequestFailed(text)

    def _token_story(self) -> str | None:
        """Where the refused credential came from, or why there was none (None: it was
        given)."""
        if self.token_file is not None:
            return f"the token was read from {self.token_file}"
        if self.token or self.looked_for is None:
            return None
        if not is_loopback_url(self.url):
            return (
                f"no token was given; an admin-token file ({self.looked_for}) is used only for"
                " a loopback --url"
            )
        return (
            f"no token was given and there is no admin-token file at {self.looked_for}: run"
            " from the folder holding the service's horarium-data, or pass --data-dir DIR"
        )

    def _warn_clear_text(self) -> None:
        if self.token and urlsplit(self.url).scheme == "http" and not is_loopback_url(self.url):
            click.echo(
                f"Warning: the token goes to {self.url} in clear text (http); use https.",
                err=True,
            )


def _check_url(ctx: click.Context, param: click.Parameter, value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise click.BadParameter(f"{value!r} is not an http(s) URL (e.g. {DEFAULT_URL})")
    return value.rstrip("/")


def _connection(
    url: str, token: str | None, data_dir: Path, ca_file: Path | None, api_version: str
) -> Connection:
    token_file = looked_for = None
    if not token:
        token_file = local_admin_token(url, data_dir)
        if token_file is not None:
            try:
                token = token_file.read_text().strip()
            except OSError as e:
                reason = f"cannot read {token_file} ({e.strerror})"
                raise OneLineError(f"{reason}; {TOKEN_HINT}") from None
        else:
            looked_for = (data_dir / ADMIN_TOKEN_FILE).absolute()
    return Connection(url, token or None, token_file, ca_file, api_version, looked_for)


_OPTIONS = (
    click.option(
        "--url",
        envvar="HORARIUM_URL",
        show_envvar=True,
        default=DEFAULT_URL,
        show_default=True,
        callback=_check_url,
        help="Base URL of the Horarium API.",
    ),
    click.option(
        "--token",
        envvar="HORARIUM_TOKEN",
        show_envvar=True,
        default=None,
        help="Bearer token (an API key). Without it, the admin-token file of --data-dir is used"
        " when --url is a loopback address.",
    ),
    click.option(
        "--data-dir",
        envvar="HORARIUM_DATA_DIR",
        show_envvar=True,
        default=DEFAULT_DATA_DIR,
        show_default=True,
        type=click.Path(file_okay=False, path_type=Path),
        help="The data folder of a local `horarium serve`, whose admin-token is used when no"
        " token is given.",
    ),
    click.option(
        "--ca-file",
        envvar="HORARIUM_CA_FILE",
        show_envvar=True,
        default=None,
        type=click.Path(dir_okay=False, path_type=Path),
        help="PEM file of the CA certificates to verify an https URL with (a private CA),"
        " instead of the system's.",
    ),
    click.option(
        "--api-version",
        default=API_VERSION,
        show_default=True,
        help="The api-version query parameter sent.",
    ),
)


def connection_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the connection options to a command, which gets them as `connection`."""

    @functools.wraps(command)
    def run(
        *args: Any,
        url: str,
        token: str | None,
        data_dir: Path,
        ca_file: Path | None,
        api_version: str,
        **kwargs: Any,
    ) -> Any:
        connection = _connection(url, token, data_dir, ca_file, api_version)
        return command(*args, connection=connection, **kwargs)

    for option in reversed(_OPTIONS):
        run = option(run)
    return run
