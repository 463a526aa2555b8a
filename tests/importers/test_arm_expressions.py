"""The template expression language: each supported function with its own cases (examples of
ARM's function reference where it gives them), access, literals, the limits, and the error for
anything else."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from horarium.importers.arm.expressions import (
    MAX_DEPTH,
    MAX_EXPRESSION_CHARS,
    Context,
    ExpressionError,
    Scope,
    Unseen,
    evaluate_text,
)

NOW = datetime(2030, 4, 7, 14, 53, 14, tzinfo=UTC)
PARAMETERS: dict[str, Any] = {
    "name": "Demo",
    "count": 3,
    "flag": True,
    "tags": {"team": "b", "list": ["x", "y"]},
    "items": ["a", "b", "c"],
    "secret": Unseen("secret"),
}
VARIABLES: dict[str, Any] = {"prefix": "jobs-", "settings": {"hours": [6, 18]}}


def lookup(table: dict[str, Any]) -> Any:
    def find(name: str) -> Any:
        for key, value in table.items():
            if key.lower() == name.lower():
                return value
        raise ExpressionError(f"no {name!r}")

    return find


def context(*, loops: list[tuple[str, int]] | None = None, default: bool = False) -> Context:
    return Context(
        Scope("sub-1", "rg-a", "westeurope"),
        lookup(PARAMETERS),
        lookup(VARIABLES),
        NOW,
        loops or [],
        in_parameter_default=default,
    )


def value(text: str, **kw: Any) -> Any:
    return evaluate_text(text, context(**kw))


def error(text: str, **kw: Any) -> str:
    with pytest.raises(ExpressionError) as caught:
        value(text, **kw)
    return str(caught.value)


# -- literals and access -----------------------------------------------------------------------


def test_a_string_that_is_not_an_expression_is_itself() -> None:
    assert value("plain") == "plain"
    assert value("[[literal]") == "[literal]"  # `[[` escapes a leading bracket
    assert value("[concat('it''s', ' ok')]") == "it's ok"


def test_property_and_index_access() -> None:
    assert value("[parameters('tags').team]") == "b"
    assert value("[parameters('tags')['team']]") == "b"
    assert value("[parameters('tags').list[1]]") == "y"
    assert value("[variables('settings').hours[0]]") == 6
    assert "no property 'missing'" in error("[parameters('tags').missing]")
    assert "index 5 is outside the array of 3" in error("[parameters('items')[5]]")


# -- each function -----------------------------------------------------------------------------


def test_parameters() -> None:
    assert value("[parameters('name')]") == "Demo"
    assert value("[parameters('COUNT')]") == 3
    assert "no 'nope'" in error("[parameters('nope')]")


def test_variables() -> None:
    assert value("[variables('prefix')]") == "jobs-"
    assert value("[variables('settings')]") == {"hours": [6, 18]}


def test_concat() -> None:
    assert value("[concat(variables('prefix'), parameters('name'), '-', 1)]") == "jobs-Demo-1"
    both = "[concat(parameters('items'), parameters('items'))]"
    assert value(both) == ["a", "b", "c", "a", "b", "c"]


def test_format() -> None:
    assert value("[format('{0}-{1}', parameters('name'), 7)]") == "Demo-7"
    assert value("[format('job-{0:D3}', 7)]") == "job-007"
    assert value("[format('{{literal}} {0}', 'x')]") == "{literal} x"
    assert "no argument {2}" in error("[format('{2}', 'a')]")


def test_string() -> None:
    assert value("[string(5)]") == "5"
    assert value("[string(parameters('flag'))]") == "True"  # .NET's spelling, as ARM writes it
    assert value("[string(parameters('items'))]") == '["a","b","c"]'
    assert value("[string(parameters('tags'))]") == '{"team":"b","list":["x","y"]}'


def test_int() -> None:
    assert value("[int('4')]") == 4
    assert value("[int(parameters('count'))]") == 3
    assert "cannot read 'four'" in error("[int('four')]")


def test_bool() -> None:
    assert value("[bool('true')]") is True
    assert value("[bool('FALSE')]") is False
    assert value("[bool(1)]") is True
    assert value("[bool(0)]") is False
    assert "cannot read 'yes'" in error("[bool('yes')]")


def test_to_lower_and_to_upper() -> None:
    assert value("[toLower('One Two')]") == "one two"
    assert value("[toUpper(parameters('name'))]") == "DEMO"
    assert "needs a string" in error("[toLower(1)]")


def test_if_evaluates_only_the_branch_taken() -> None:
    assert value("[if(parameters('flag'), 'yes', 'no')]") == "yes"
    assert value("[if(equals(1, 2), 'yes', parameters('name'))]") == "Demo"
    assert value("[if(bool('true'), 'a', 'b')]") == "a"
    assert value("[if(parameters('flag'), 'ok', reference('never'))]") == "ok"
    assert "needs a bool condition" in error("[if('yes', 1, 2)]")


def test_equals() -> None:
    assert value("[equals(parameters('name'), 'Demo')]") is True
    assert value("[equals(parameters('name'), 'demo')]") is False  # case-sensitive, as in ARM
    assert value("[equals(1, '1')]") is False
    assert value("[equals(parameters('items'), parameters('items'))]") is True


def test_copy_index() -> None:
    loops = [("outer", 2), ("inner", 5)]
    assert value("[copyIndex()]", loops=loops) == 5
    assert value("[copyIndex(1)]", loops=loops) == 6
    assert value("[copyIndex('outer')]", loops=loops) == 2
    assert value("[copyIndex('outer', 10)]", loops=loops) == 12
    assert "outside a copy loop" in error("[copyIndex()]")
    assert "names the loop 'other'" in error("[copyIndex('other')]", loops=loops)


def test_resource_group() -> None:
    assert value("[resourceGroup().name]") == "rg-a"
    assert value("[resourceGroup().location]") == "westeurope"
    assert value("[resourceGroup().id]") == "/subscriptions/sub-1/resourceGroups/rg-a"


def test_resource_group_location_names_the_option_when_unknown() -> None:
    unknown = Context(Scope("s", "g", None), lookup(PARAMETERS), lookup(VARIABLES), NOW)
    with pytest.raises(ExpressionError, match="needs --location"):
        evaluate_text("[resourceGroup().location]", unknown)


def test_subscription() -> None:
    assert value("[subscription().subscriptionId]") == "sub-1"
    assert value("[subscription().id]") == "/subscriptions/sub-1"


def test_resource_id() -> None:
    assert value("[resourceId('Microsoft.Scheduler/jobCollections', 'jc')]") == (
        "/subscriptions/sub-1/resourceGroups/rg-a/providers/Microsoft.Scheduler/jobCollections/jc"
    )
    assert value("[resourceId('other', 'Microsoft.Scheduler/jobCollections/jobs', 'jc', 'j')]") == (
        "/subscriptions/sub-1/resourceGroups/other/providers/Microsoft.Scheduler"
        "/jobCollections/jc/jobs/j"
    )


def test_unique_string() -> None:
    assert value("[uniqueString('test')]") == "rbgf3xv4ufgzg"
    assert value("[uniqueString('hello', 'world')]") == "a7wkljktk6wne"
    assert value("[uniqueString(resourceGroup().id)]") == value(
        "[uniqueString('/subscriptions/sub-1/resourceGroups/rg-a')]"
    )


def test_utc_now_only_in_parameter_defaults() -> None:
    assert value("[utcNow()]", default=True) == "20300407T145314Z"
    assert value("[utcNow('u')]", default=True) == "2030-04-07 14:53:14Z"
    assert value("[utcNow('yyyy-MM-dd')]", default=True) == "2030-04-07"
    assert "only be used in a parameter's defaultValue" in error("[utcNow()]")


def test_date_time_add() -> None:
    # ARM's reference: dateTimeAdd(utcNow('u'), 'P3Y'), '-PT9H' and 'PT1H'
    assert value("[dateTimeAdd('2030-04-07 14:53:14Z', 'P3Y')]") == "2033-04-07T14:53:14Z"
    assert value("[dateTimeAdd('2030-04-07T14:53:14Z', '-PT9H')]") == "2030-04-07T05:53:14Z"
    assert value("[dateTimeAdd('2030-01-31T00:00:00Z', 'P1M', 'yyyy-MM-dd')]") == "2030-02-28"
    assert value("[dateTimeAdd('2030-01-01T10:00:00+02:00', 'PT1H')]") == "2030-01-01T09:00:00Z"
    assert "cannot read the duration 'soon'" in error("[dateTimeAdd('2030-01-01', 'soon')]")


# -- secrets, errors, limits -------------------------------------------------------------------


def test_an_unseen_secret_passes_through_every_function() -> None:
    assert value("[parameters('secret')]") == Unseen("secret")
    assert value("[concat('Bearer ', parameters('secret'))]") == Unseen("secret")
    assert value("[format('{0}', toUpper(parameters('secret')))]") == Unseen("secret")


def test_an_unsupported_function_is_named() -> None:
    assert error("[reference('site').hostNames[0]]") == (
        "reference() is not supported (see docs/migrating.md)"
    )
    assert "listKeys() is not supported" in error("[listKeys('x', '2019-01-01').keys[0]]")


def test_wrong_argument_counts_and_syntax() -> None:
    assert error("[toLower('a', 'b')]") == "toLower() takes 1 arguments, not 2"
    assert "expected ')' but found the end" in error("[concat('a']")
    assert value("[concat('a'") == "[concat('a'"  # no closing bracket: not an expression
    assert "cannot read the expression" in error('[concat("a")]')


def test_limits_are_named() -> None:
    deep = "[" + "toLower(" * (MAX_DEPTH + 1) + "'a'" + ")" * (MAX_DEPTH + 1) + "]"
    assert f"more than {MAX_DEPTH} deep (the limit)" in error(deep)
    long = "[concat(" + ", ".join(["'aaaaaaaaaa'"] * 2000) + ")]"
    assert f"at most {MAX_EXPRESSION_CHARS} (the limit)" in error(long)
