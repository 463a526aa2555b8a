"""`uniqueString()` gives ARM's own 13 characters: every input/output pair published from real
deployments or from Microsoft's Azure.Deployments.Expression package."""

from __future__ import annotations

import pytest

from horarium.importers.arm.unique_string import hash64, unique_string

PUBLISHED = [
    # takekazuomi/arm-uniquestring README (runs Azure.Deployments.Expression)
    (("test",), "rbgf3xv4ufgzg"),
    # Stack Overflow 43295720, "Azure ARM uniqueString function mimic" (the same package)
    (("tyeth",), "zcztcwvu6iyg6"),
    # KingslandConsulting/Kingsland.ArmLinter ArmFunctions_UniqueString.cs (deployed outputs)
    (("aaa",), "zavj67f3en4hc"),
    (("bbb",), "w5eragfxe33cy"),
    (("zzz",), "cryksdzzzawae"),
    (("xxx", "yyy", "zzz"), "lghi7k5js7itq"),
    # JasonWhall/go-azure-uniquestring README
    (("hello", "world"), "a7wkljktk6wne"),
]


@pytest.mark.parametrize(("values", "expected"), PUBLISHED)
def test_published_examples(values: tuple[str, ...], expected: str) -> None:
    assert unique_string(*values) == expected


def test_the_arguments_are_joined_with_a_dash_before_hashing() -> None:
    assert unique_string("hello", "world") == unique_string("hello-world")
    assert hash64(b"hello-world") == 571013382255652050  # the same README's hash


def test_thirteen_characters_of_the_base32_alphabet_for_any_length() -> None:
    for size in range(0, 40):
        text = unique_string("x" * size, "é")
        assert len(text) == 13
        assert set(text) <= set("abcdefghijklmnopqrstuvwxyz234567")
