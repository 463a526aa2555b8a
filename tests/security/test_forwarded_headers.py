"""X-Forwarded-For is believed only from the proxies named by `--forwarded-allow-ips`: by default
a client on loopback cannot put another address into the access log."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.server_process import running_server
from tests.support import wait_until

CLAIMED = "198.51.100.23"  # a documentation address, written in a header only


def _logged_address(tmp_path: Path, args: list[str]) -> str:
    with running_server(tmp_path, args=args) as server:
        path = "/healthz?sent=forwarded"  # told apart from the start-up probes
        response = httpx.get(server.url(path), headers={"X-Forwarded-For": CLAIMED})
        assert response.status_code == 200
        line = wait_until(
            lambda: next(
                (x for x in server.log().splitlines() if f"GET {path}" in x),
                None,
            ),
            "the access line of the request",
        )
    return str(line)


def test_a_forwarded_address_from_an_untrusted_client_is_not_believed(tmp_path: Path) -> None:
    line = _logged_address(tmp_path, [])
    assert CLAIMED not in line and "127.0.0.1:" in line, line


def test_a_forwarded_address_from_a_named_proxy_is_logged(tmp_path: Path) -> None:
    line = _logged_address(tmp_path, ["--forwarded-allow-ips", "127.0.0.1"])
    assert CLAIMED in line, line
