"""`horarium.loopback`: what counts as this machine, before a secret may travel in clear (the
API's exposure checks, the SMTP password, the OIDC issuer, the CLI's local admin token)."""

from __future__ import annotations

import pytest

from horarium.loopback import is_loopback, is_loopback_url


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.45.6.7", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LocalHost.", True),
        ("10.0.0.1", False),
        ("0.0.0.0", False),
        ("::", False),
        ("localhost.example.com", False),
        ("mail.example.com", False),
        ("", False),
    ],
)
def test_only_the_loopback_interface_counts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_url_is_judged_by_its_host_alone() -> None:
    assert is_loopback_url("http://[::1]:8080/subscriptions")
    assert is_loopback_url("https://user:pw@127.0.0.1/")
    assert not is_loopback_url("http://127.0.0.1.example.com/")
    assert not is_loopback_url("http://10.1.1.1/?next=127.0.0.1")
    assert not is_loopback_url("not a url")
