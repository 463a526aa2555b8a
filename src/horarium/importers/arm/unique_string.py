"""ARM's `uniqueString()`: the arguments joined with `-`, UTF-8 encoded, hashed to 64 bits with
the MurmurHash3 x86 variant Azure Resource Manager uses (two 32-bit lanes, seed 0), and written
as 13 characters of the alphabet `a-z2-7`, five bits each from the most significant bit.

The function is undocumented; this reproduces every published input/output pair (pinned in
tests/importers/test_arm_unique_string.py)."""

from __future__ import annotations

MASK32 = 0xFFFFFFFF
MASK64 = 0xFFFFFFFFFFFFFFFF
C1 = 0x239B961B
C2 = 0xAB0E9789
ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"
LENGTH = 13


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & MASK32


def _fmix(h: int) -> int:
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & MASK32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & MASK32
    return h ^ (h >> 16)


def _lane1(k: int) -> int:
    return (_rotl((k * C1) & MASK32, 15) * C2) & MASK32


def _lane2(k: int) -> int:
    return (_rotl((k * C2) & MASK32, 17) * C1) & MASK32


def hash64(data: bytes) -> int:
    """The 64-bit hash of `data` (high word: the second lane)."""
    h1 = h2 = 0
    blocks = len(data) // 8 * 8
    for at in range(0, blocks, 8):
        h1 ^= _lane1(int.from_bytes(data[at : at + 4], "little"))
        h1 = (_rotl(h1, 19) + h2) & MASK32
        h1 = (h1 * 5 + 0x561CCD1B) & MASK32
        h2 ^= _lane2(int.from_bytes(data[at + 4 : at + 8], "little"))
        h2 = (_rotl(h2, 13) + h1) & MASK32
        h2 = (h2 * 5 + 0x0BCAA747) & MASK32
    tail = data[blocks:]
    if tail:
        h1 ^= _lane1(int.from_bytes(tail[:4], "little"))
        if len(tail) > 4:
            h2 ^= _lane2(int.from_bytes(tail[4:], "little"))
    h1 ^= len(data) & MASK32
    h2 ^= len(data) & MASK32
    h1 = (h1 + h2) & MASK32
    h2 = (h2 + h1) & MASK32
    h1, h2 = _fmix(h1), _fmix(h2)
    h1 = (h1 + h2) & MASK32
    h2 = (h2 + h1) & MASK32
    return (h2 << 32) | h1


def unique_string(*values: str) -> str:
    """`uniqueString(values…)` as ARM computes it."""
    hashed = hash64("-".join(values).encode("utf-8"))
    out = []
    for _ in range(LENGTH):
        out.append(ALPHABET[hashed >> 59])
        hashed = (hashed << 5) & MASK64
    return "".join(out)
