"""Start-up review of how `serve` exposes the API: settings that cannot work or would expose it
unsafely are refused (`ExposureError`, one line); those that weaken it are warned about."""

from __future__ import annotations

import ssl
from urllib.parse import urlsplit

from horarium.config import Settings
from horarium.loopback import is_loopback


class ExposureError(ValueError):
    """A setting `serve` refuses to start with (the text names the option and the rule)."""


def review(settings: Settings) -> list[str]:
    """The warnings to show at start-up; raises `ExposureError` for a refused setting."""
    _check_auth(settings)
    _check_oidc(settings)
    _check_tls(settings)
    _check_public_url(settings.public_url)
    warnings = []
    if settings.auth == "none":
        warnings.append(
            f"authentication is OFF (--auth none): anyone who can connect to"
            f" {settings.host}:{settings.port} may read, change and delete every job."
        )
    if not is_loopback(settings.host) and settings.ssl_certfile is None:
        warnings.append(
            f"the API listens on {settings.host} without TLS (--ssl-certfile, --ssl-keyfile):"
            " API keys and tokens travel in clear text unless a TLS proxy is in front."
        )
    return warnings


def _check_auth(settings: Settings) -> None:
    if settings.auth == "none" and not is_loopback(settings.host):
        raise ExposureError(
            f"--auth none is refused with --host {settings.host}: without authentication the API"
            " may only listen on a loopback address (127.0.0.1, ::1, localhost)."
        )


def _check_oidc(settings: Settings) -> None:
    if settings.oidc_issuer and not settings.oidc_audience:
        raise ExposureError(
            "--oidc-audience is required with --oidc-issuer (the 'aud' its tokens must carry)."
        )
    if settings.oidc_issuer:
        from horarium.api.oidc_keys import check_transport  # aiohttp and JWT: only then

        try:
            check_transport(settings.oidc_issuer)
        except ValueError as e:
            raise ExposureError(f"--oidc-issuer {settings.oidc_issuer}: {e}") from None


def _check_tls(settings: Settings) -> None:
    certfile, keyfile = settings.ssl_certfile, settings.ssl_keyfile
    if (certfile is None) != (keyfile is None):
        raise ExposureError("--ssl-certfile and --ssl-keyfile go together: give both or neither.")
    if certfile is None or keyfile is None:
        return
    try:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(certfile, keyfile, password=lambda: b"")  # encrypted: refused
    except (OSError, ssl.SSLError) as e:
        raise ExposureError(
            f"--ssl-certfile {certfile} / --ssl-keyfile {keyfile}: cannot load the certificate"
            f" and its key ({getattr(e, 'strerror', None) or e})."
        ) from e


def _check_public_url(url: str | None) -> None:
    if url is None:
        return
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
        raise ExposureError(
            f"--public-url {url!r} is not an http(s) URL of the service (e.g."
            " https://scheduler.example.com or https://host/prefix)."
        )
