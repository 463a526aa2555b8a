"""Which header and query names carry credentials, and how a URI is shown (docs/security.md,
"What is secret")."""

from __future__ import annotations

import pytest

from horarium.model.secrets import is_credential_name, mask_uri, uri_secrets


@pytest.mark.parametrize(
    "name",
    [
        "Authorization",
        "proxy-authorization",
        "Cookie",
        "x-functions-key",
        "api-key",
        "X-API-Key",
        "Ocp-Apim-Subscription-Key",
        "X-Auth-Token",
        "X-Goog-Api-Key",
        "client_secret",
        "X-Amz-Signature",
        "access_token",
        "code",
        "sig",
        "key",
        "db_password",
    ],
)
def test_credential_names(name: str) -> None:
    assert is_credential_name(name)


@pytest.mark.parametrize(
    "name", ["Content-Type", "X-Plain", "Accept", "sv", "se", "sp", "x-ms-client-request-id"]
)
def test_other_names_are_shown(name: str) -> None:
    assert not is_credential_name(name)


@pytest.mark.parametrize(
    ("uri", "shown"),
    [
        ("https://h/p?x=1", "https://h/p?x=1"),
        ("https://u:pw@h:8443/p@x?y=1", "https://u:***@h:8443/p@x?y=1"),
        ("https://u@h/p", "https://u@h/p"),
        (
            "https://f.azurewebsites.net/api/f?code=abc%3D%3D&name=x",
            "https://f.azurewebsites.net/api/f?code=***&name=x",
        ),
        (
            "https://a.blob.core.windows.net/c/b?sv=2021-08-06&se=2030-01-01&sp=r&sig=s%2Bg",
            "https://a.blob.core.windows.net/c/b?sv=2021-08-06&se=2030-01-01&sp=r&sig=***",
        ),
        ("https://h/p?Code=1&code=2#frag", "https://h/p?Code=***&code=***#frag"),
    ],
)
def test_a_uri_is_shown_without_its_secret_parts(uri: str, shown: str) -> None:
    assert mask_uri(uri) == shown


def test_the_secret_parts_of_a_uri_as_written_decoded_and_as_basic_credentials() -> None:
    found = uri_secrets("https://al%40ice:p%2Bw@h/p?sig=s%2Bg&x=1")
    assert "p%2Bw" in found and "p+w" in found
    assert "s%2Bg" in found and "s+g" in found
    assert "YWxAaWNlOnArdw==" in found  # base64("al@ice:p+w"), as an HTTP client sends it
