"""The outbound policy: which addresses actions may connect to (--outbound-deny, --outbound-allow).

Deny items are CIDRs or the names `link-local`, `metadata` and `private`; allow items are CIDRs,
and an allowed address is reachable whatever denies it. Addresses are judged as connected to: an
IPv6 address that carries an IPv4 one (IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64
64:ff9b::/96, 6to4) is denied when either is denied and allowed when either is allowed.

The shared aiohttp session enforces it twice, both at connect time: `PolicyResolver` drops the
denied addresses of every DNS answer (and refuses a name with none left), and `guarded_socket`
refuses to open a socket to a denied address (IP-literal hosts never reach the resolver).
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network
from typing import Any

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

Network = IPv4Network | IPv6Network
Address = IPv4Address | IPv6Address

LINK_LOCAL = ("169.254.0.0/16", "fe80::/10")
# Cloud metadata and credential endpoints (docs/security.md cites each).
METADATA = (
    "169.254.169.254/32",  # AWS, Azure IMDS, Google Cloud, Oracle, OpenStack, DigitalOcean, …
    "169.254.170.2/32",  # AWS ECS task metadata and credentials
    "169.254.170.23/32",  # AWS EKS Pod Identity agent
    "169.254.0.23/32",  # Tencent Cloud
    "169.254.42.42/32",  # Scaleway
    "100.100.100.200/32",  # Alibaba Cloud
    "168.63.129.16/32",  # Azure WireServer (host agent channel; public address space)
    "192.0.0.192/32",  # Oracle Cloud Classic
    "fd00:ec2::254/128",  # AWS IMDS over IPv6
    "fd00:ec2::23/128",  # AWS EKS Pod Identity agent over IPv6
    "fd20:ce::254/128",  # Google Cloud, IPv6-only instances
    "fd00:a9fe:a9fe::1/128",  # Akamai (Linode)
    "fd00:42::42/128",  # Scaleway over IPv6
    "fd00:100::100:200/128",  # Alibaba Cloud over IPv6
    "fd00:c1::a9fe:a9fe/128",  # Oracle Cloud Infrastructure over IPv6
)
PRIVATE = (
    "127.0.0.0/8",  # loopback
    "::1/128",
    "10.0.0.0/8",  # RFC 1918
    "172.16.0.0/12",
    "192.168.0.0/16",
    "100.64.0.0/10",  # carrier-grade NAT (RFC 6598)
    "fc00::/7",  # unique local (RFC 4193)
    "0.0.0.0/8",  # "this network"; 0.0.0.0 reaches the local host
    "::/128",  # unspecified
)
NAMED = {"link-local": LINK_LOCAL, "metadata": METADATA, "private": PRIVATE}

_V4_MAPPED = 0xFFFF  # ::ffff:a.b.c.d, the top 96 bits
_V4_TRANSLATED = 0xFFFF_0000  # ::ffff:0:a.b.c.d (RFC 2765)
_NAT64 = 0x64_FF9B << 64  # 64:ff9b::a.b.c.d (RFC 6052 well-known prefix), the top 96 bits
_SIX_TO_FOUR = 0x2002  # 2002:aabb:ccdd::/48 (RFC 3056), the top 16 bits


class OutboundPolicyError(ValueError):
    """A malformed `--outbound-deny` / `--outbound-allow` item; the text names it."""

    def __init__(self, option: str, item: str, rule: str) -> None:
        super().__init__(f"{option}: '{item}' {rule}")
        self.option = option
        self.item = item


class OutboundRefused(OSError):
    """A connection the outbound policy refused; nothing was sent. The text says which address
    and which `--outbound-deny` item."""

    def __init__(self, refused: Sequence[tuple[str, str]]) -> None:
        addresses = ", ".join(dict.fromkeys(address for address, _ in refused))
        items = ", ".join(dict.fromkeys(item for _, item in refused))
        verb = "is" if len(refused) == 1 else "are"
        noun = "address" if len(refused) == 1 else "addresses"
        reason = f"{noun} {addresses} {verb} denied by the outbound policy"
        super().__init__(errno.EACCES, f"{reason} (--outbound-deny {items})")
        self.refused = tuple(refused)

    def __str__(self) -> str:
        return str(self.strerror)


@dataclass(frozen=True)
class _Rule:
    net: int
    mask: int
    label: str  # the item that made it: a name or the CIDR


@dataclass(frozen=True)
class OutboundPolicy:
    """The parsed deny and allow lists, most specific rule first."""

    deny4: tuple[_Rule, ...]
    deny6: tuple[_Rule, ...]
    allow4: tuple[_Rule, ...]
    allow6: tuple[_Rule, ...]

    @classmethod
    def parse(cls, deny: Iterable[str], allow: Iterable[str] = ()) -> OutboundPolicy:
        """Raises OutboundPolicyError naming the first malformed item."""
        denied = [(net, label) for item in deny for net, label in _deny_item(item)]
        allowed = [(_cidr("--outbound-allow", item), item.strip()) for item in allow]
        d4, d6 = _rules(denied)
        a4, a6 = _rules((net, str(net)) for net, _ in allowed)
        return cls(d4, d6, a4, a6)

    def denied_by(self, address: str | Address) -> str | None:
        """The `--outbound-deny` item that refuses `address`, or None when it may be reached.
        A string that is not an IP address raises ValueError."""
        ip = address if isinstance(address, IPv4Address | IPv6Address) else ip_address(address)
        value = int(ip)
        if ip.version == 4:
            return None if _match(self.allow4, value) else _match(self.deny4, value)
        inner = _embedded_v4(value)
        if _match(self.allow6, value) or (inner is not None and _match(self.allow4, inner)):
            return None
        label = _match(self.deny6, value)
        if label is None and inner is not None:
            label = _match(self.deny4, inner)
        return label


def _deny_item(item: str) -> list[tuple[Network, str]]:
    name = item.strip().lower()
    if name in NAMED:
        return [(ip_network(cidr), name) for cidr in NAMED[name]]
    net = _cidr("--outbound-deny", item, names=True)
    return [(net, str(net))]


def _cidr(option: str, item: str, *, names: bool = False) -> Network:
    text = item.strip()
    try:
        net = ip_network(text, strict=True)
    except ValueError as exc:
        if "host bits set" in str(exc):
            rule = "has host bits set (write its network address)"
            raise OutboundPolicyError(option, item, rule) from None
        rule = "is not a CIDR (such as 10.0.0.0/8)"
        if names:
            rule = "is neither a CIDR (such as 10.0.0.0/8) nor one of " + ", ".join(NAMED)
        raise OutboundPolicyError(option, item, rule) from None
    if isinstance(net, IPv6Network) and net.prefixlen >= 96:
        mapped = net.network_address.ipv4_mapped
        if mapped is not None:  # ::ffff:a.b.c.d/n is the IPv4 network it maps
            return IPv4Network(f"{mapped}/{net.prefixlen - 96}")
    return net


def _rules(nets: Iterable[tuple[Network, str]]) -> tuple[tuple[_Rule, ...], tuple[_Rule, ...]]:
    ordered = sorted(nets, key=lambda pair: -pair[0].prefixlen)
    rules = [(n.version, _Rule(int(n.network_address), int(n.netmask), s)) for n, s in ordered]
    return tuple(r for v, r in rules if v == 4), tuple(r for v, r in rules if v == 6)


def _match(rules: tuple[_Rule, ...], value: int) -> str | None:
    for rule in rules:
        if value & rule.mask == rule.net:
            return rule.label
    return None


def _embedded_v4(value: int) -> int | None:
    """The IPv4 address an IPv6 address carries, if it is of a form that carries one."""
    top = value >> 32
    if top in (_V4_MAPPED, _V4_TRANSLATED) or (top == 0 and value > 1):
        return value & 0xFFFF_FFFF
    if top == _NAT64:
        return value & 0xFFFF_FFFF
    if value >> 112 == _SIX_TO_FOUR:
        return (value >> 80) & 0xFFFF_FFFF
    return None


def verdict(policy: OutboundPolicy, address: str) -> str | None:
    """`denied_by`, with an address that does not parse refused rather than raised."""
    try:
        return policy.denied_by(address)
    except ValueError:
        return "(an address that is not an IP address)"


class PolicyResolver(AbstractResolver):
    """Resolves through `inner` (aiohttp's default resolver unless given), then drops the
    addresses the policy denies; raises OutboundRefused when none is left."""

    def __init__(self, policy: OutboundPolicy, inner: AbstractResolver | None = None) -> None:
        self._policy = policy
        self._inner = inner if inner is not None else DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        answers = await self._inner.resolve(host, port, family)
        kept: list[ResolveResult] = []
        refused: list[tuple[str, str]] = []
        for answer in answers:
            label = verdict(self._policy, answer["host"])
            if label is None:
                kept.append(answer)
            else:
                refused.append((answer["host"], label))
        if not kept and refused:
            raise OutboundRefused(refused)
        return kept

    async def close(self) -> None:
        await self._inner.close()


def guarded_socket(policy: OutboundPolicy) -> Callable[[tuple[Any, ...]], socket.socket]:
    """An aiohttp `socket_factory` that refuses to open a socket to a denied address."""

    def open_socket(addr_info: tuple[Any, ...]) -> socket.socket:
        family, kind, proto, _, sockaddr = addr_info
        host = str(sockaddr[0])
        label = verdict(policy, host)
        if label is not None:
            raise OutboundRefused([(host, label)])
        return socket.socket(family=family, type=kind, proto=proto)

    return open_socket


def check_broker(policy: OutboundPolicy, host: str, port: int) -> None:
    """Blocking: resolve `host` and raise OutboundRefused if any of its addresses is denied
    (for clients that resolve and connect by themselves, such as the AMQP sender)."""
    try:
        answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return  # the client's own lookup reports the failure
    refused = [
        (str(sockaddr[0]), label)
        for *_, sockaddr in answers
        if (label := verdict(policy, str(sockaddr[0]))) is not None
    ]
    if refused:
        raise OutboundRefused(refused)


def weakening(deny: Iterable[str], allow: Iterable[str]) -> str | None:
    """One line saying how the lists leave link-local or metadata addresses reachable, or None.
    Items are assumed valid (parse them first)."""
    denied = [net for item in deny for net, _ in _deny_item(item)]
    allowed = [_cidr("--outbound-allow", item) for item in allow]
    gaps: list[str] = []
    for name in ("link-local", "metadata"):
        nets = [ip_network(cidr) for cidr in NAMED[name]]
        if not all(any(_covers(d, n) for d in denied) for n in nets):
            gaps.append(f"{name} addresses (not in --outbound-deny)")
            continue
        opening = [str(a) for a in allowed if any(_overlap(a, n) for n in nets)]
        if opening:
            gaps.append(f"{name} addresses (--outbound-allow {', '.join(opening)})")
    if not gaps:
        return None
    return "the outbound policy is weakened: actions may reach " + "; ".join(gaps)


def _covers(outer: Network, inner: Network) -> bool:
    return outer.version == inner.version and inner.subnet_of(outer)  # type: ignore[arg-type]


def _overlap(one: Network, other: Network) -> bool:
    return one.version == other.version and one.overlaps(other)
