"""The outbound policy's decisions, without connecting anywhere: which addresses each item covers,
how embedded IPv4 addresses are judged, the resolver's filtering, the start-up checks."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult
from click.testing import CliRunner

from horarium.actions.outbound import (
    OutboundPolicy,
    OutboundPolicyError,
    OutboundRefused,
    PolicyResolver,
    guarded_socket,
    weakening,
)
from horarium.cli import main
from horarium.config import Settings

DEFAULT = OutboundPolicy.parse(Settings().outbound_deny, Settings().outbound_allow)

METADATA_SPELLINGS = [
    "169.254.169.254",
    "::ffff:169.254.169.254",  # IPv4-mapped
    "::ffff:a9fe:a9fe",
    "::a9fe:a9fe",  # IPv4-compatible
    "::ffff:0:a9fe:a9fe",  # IPv4-translated
    "64:ff9b::a9fe:a9fe",  # NAT64
    "2002:a9fe:a9fe::1",  # 6to4
    "fd00:ec2::254",  # AWS over IPv6
    "fd20:ce::254",  # Google Cloud over IPv6
    "100.100.100.200",  # Alibaba Cloud
    "168.63.129.16",  # Azure WireServer
    "169.254.170.2",  # AWS ECS credentials
]


@pytest.mark.parametrize("address", METADATA_SPELLINGS)
def test_the_default_policy_denies_metadata_addresses_in_every_spelling(address: str) -> None:
    assert DEFAULT.denied_by(address) == "metadata"


@pytest.mark.parametrize(
    "address", ["169.254.1.1", "fe80::1", "fe80::1%eth0", "::ffff:169.254.9.9"]
)
def test_the_default_policy_denies_link_local_addresses(address: str) -> None:
    assert DEFAULT.denied_by(address) == "link-local"


@pytest.mark.parametrize(
    "address", ["127.0.0.1", "::1", "10.0.0.1", "192.168.1.1", "8.8.8.8", "2606:4700::1111"]
)
def test_the_default_policy_lets_actions_reach_loopback_private_and_public_addresses(
    address: str,
) -> None:
    assert DEFAULT.denied_by(address) is None


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.255.255.254",
        "::1",
        "::ffff:127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.0.1",
        "100.64.0.1",
        "100.127.255.255",
        "fc00::1",
        "fd12:3456::1",
        "0.0.0.0",
        "::",
    ],
)
def test_private_covers_loopback_rfc1918_cgnat_ula_and_unspecified(address: str) -> None:
    assert OutboundPolicy.parse(["private"]).denied_by(address) == "private"


@pytest.mark.parametrize("address", ["172.32.0.1", "100.128.0.1", "11.0.0.1", "fe00::1"])
def test_private_stops_at_the_edges_of_its_ranges(address: str) -> None:
    assert OutboundPolicy.parse(["private"]).denied_by(address) is None


def test_an_allowed_cidr_wins_over_deny_in_every_spelling() -> None:
    policy = OutboundPolicy.parse(["private", "metadata"], ["10.1.0.0/16", "127.0.0.3/32"])
    assert policy.denied_by("10.1.2.3") is None
    assert policy.denied_by("10.2.0.1") == "private"
    assert policy.denied_by("127.0.0.3") is None
    assert policy.denied_by("::ffff:127.0.0.3") is None
    assert policy.denied_by("127.0.0.4") == "private"


def test_the_most_specific_item_is_named() -> None:
    policy = OutboundPolicy.parse(["link-local", "metadata", "169.254.0.0/17"])
    assert policy.denied_by("169.254.169.254") == "metadata"
    assert policy.denied_by("169.254.1.1") == "169.254.0.0/17"
    assert policy.denied_by("169.254.200.1") == "link-local"


def test_an_ipv4_mapped_cidr_denies_the_ipv4_address_too() -> None:
    policy = OutboundPolicy.parse(["::ffff:127.0.0.3/128"])
    assert policy.denied_by("127.0.0.3") == "127.0.0.3/32"
    assert policy.denied_by("::ffff:127.0.0.3") == "127.0.0.3/32"


def test_an_empty_deny_list_denies_nothing() -> None:
    assert OutboundPolicy.parse([]).denied_by("169.254.169.254") is None


@pytest.mark.parametrize(
    ("deny", "allow", "named"),
    [
        (["foo"], [], "--outbound-deny: 'foo' is neither a CIDR"),
        (["10.0.0.1/8"], [], "--outbound-deny: '10.0.0.1/8' has host bits set"),
        (["300.1.1.1/32"], [], "--outbound-deny: '300.1.1.1/32'"),
        ([], ["private"], "--outbound-allow: 'private' is not a CIDR"),
    ],
)
def test_a_malformed_item_is_named(deny: list[str], allow: list[str], named: str) -> None:
    with pytest.raises(OutboundPolicyError, match=named):
        OutboundPolicy.parse(deny, allow)


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_a_malformed_item_stops_the_command_with_exit_code_2(command: str) -> None:
    result = CliRunner().invoke(main, [command, "--outbound-deny", "metadata,bogus"])
    assert result.exit_code == 2
    assert "--outbound-deny: 'bogus' is neither a CIDR" in result.output
    assert "Traceback" not in result.output


def test_the_default_policy_is_not_reported_weakened() -> None:
    assert weakening(Settings().outbound_deny, Settings().outbound_allow) is None
    assert weakening(["169.254.0.0/16", "fe80::/10", "metadata", "private"], []) is None


@pytest.mark.parametrize(
    ("deny", "allow", "says"),
    [
        ([], [], "link-local addresses (not in --outbound-deny); metadata addresses"),
        (["private"], [], "link-local addresses (not in --outbound-deny)"),
        (["link-local"], [], "metadata addresses (not in --outbound-deny)"),
        (["link-local", "metadata"], ["169.254.0.0/16"], "(--outbound-allow 169.254.0.0/16)"),
        (["link-local", "metadata"], ["fd00::/8"], "metadata addresses (--outbound-allow fd00::/8"),
    ],
)
def test_a_weakened_policy_is_reported_in_one_line(
    deny: list[str], allow: list[str], says: str
) -> None:
    line = weakening(deny, allow)
    assert line is not None and "\n" not in line
    assert line.startswith("the outbound policy is weakened: actions may reach ")
    assert says in line


class Answers(AbstractResolver):
    """A resolver that answers from a table and never touches the network."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        return [
            ResolveResult(
                hostname=host,
                host=address,
                port=port,
                family=socket.AF_INET6 if ":" in address else socket.AF_INET,
                proto=0,
                flags=0,
            )
            for address in self.table[host]
        ]

    async def close(self) -> None:
        pass


async def test_the_resolver_refuses_a_name_that_resolves_to_the_metadata_address() -> None:
    resolver = PolicyResolver(DEFAULT, Answers({"metadata.example": ["169.254.169.254"]}))
    with pytest.raises(OutboundRefused) as refused:
        await resolver.resolve("metadata.example", 80)
    assert str(refused.value) == (
        "address 169.254.169.254 is denied by the outbound policy (--outbound-deny metadata)"
    )


async def test_the_resolver_keeps_only_the_allowed_addresses_of_an_answer() -> None:
    table = {"mixed.example": ["169.254.169.254", "fd00:ec2::254", "192.0.2.10"]}
    resolver = PolicyResolver(DEFAULT, Answers(table))
    kept = await resolver.resolve("mixed.example", 443)
    assert [answer["host"] for answer in kept] == ["192.0.2.10"]


async def test_the_resolver_passes_an_empty_answer_on() -> None:
    resolver = PolicyResolver(DEFAULT, Answers({"nothing.example": []}))
    assert await resolver.resolve("nothing.example", 80) == []


def test_no_socket_is_opened_to_a_denied_address(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_socket(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a socket was created")

    monkeypatch.setattr(socket, "socket", no_socket)
    opener = guarded_socket(DEFAULT)
    for address in ("169.254.169.254", "::ffff:169.254.169.254", "fe80::1"):
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        with pytest.raises(OutboundRefused, match="denied by the outbound policy"):
            opener((family, socket.SOCK_STREAM, 6, "", (address, 80)))
