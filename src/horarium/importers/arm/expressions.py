"""ARM template expressions (`"[concat(parameters('a'), '-x')]"`): a tokenizer, a parser and an
evaluator of the part of the language real Scheduler templates use.

Functions (names in any case): `parameters`, `variables`, `concat`, `format`, `string`, `int`,
`bool`, `toLower`, `toUpper`, `if`, `equals`, `copyIndex`, `resourceGroup`, `subscription`,
`resourceId`, `uniqueString`, `utcNow` (in parameter defaults only, as in ARM) and
`dateTimeAdd`; property access (`.name`) and index access (`['name']`, `[0]`). Any other function
is an `ExpressionError` naming it, so a template is never imported half understood.

Bounded: an expression longer than `MAX_EXPRESSION_CHARS` or nested deeper than `MAX_DEPTH`, or a
value longer than `MAX_VALUE_CHARS`, is an error naming the limit.

A securestring parameter without a value evaluates to `Unseen`, which every function passes on:
the caller decides whether the field it lands in may stay unseen (a secret)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import isodate

from horarium.importers.arm.unique_string import unique_string

MAX_EXPRESSION_CHARS = 24_576  # ARM's own limit on one expression
MAX_DEPTH = 32  # nested calls and accesses
MAX_VALUE_CHARS = 1_048_576  # a string value built by concat(), format(), string()


class ExpressionError(ValueError):
    """An expression that cannot be evaluated here; the message says why in one line."""


@dataclass(frozen=True)
class Unseen:
    """The value of a secure parameter that was given no value (the secret is not known)."""

    parameter: str


# -- tokens ------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>'(?:[^']|'')*')
      | (?P<number>-?\d+)
      | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<punct>[()\[\],.])
    )""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class Token:
    kind: str  # string, number, name, punct, end
    text: str
    at: int


def tokens(text: str) -> list[Token]:
    """The tokens of an expression (without its outer brackets)."""
    found: list[Token] = []
    at = 0
    while at < len(text):
        if text[at:].strip() == "":
            break
        match = _TOKEN.match(text, at)
        if match is None:
            raise ExpressionError(f"cannot read the expression at {text[at : at + 20]!r}")
        kind = match.lastgroup or "punct"
        found.append(Token(kind, match.group(kind), match.start(kind)))
        at = match.end()
    found.append(Token("end", "", len(text)))
    return found


# -- syntax ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Literal:
    value: Any


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple[Node, ...]


@dataclass(frozen=True)
class Member:
    target: Node
    name: str


@dataclass(frozen=True)
class Index:
    target: Node
    key: Node


Node = Literal | Call | Member | Index


class _Parser:
    def __init__(self, text: str) -> None:
        self.items = tokens(text)
        self.at = 0

    def peek(self) -> Token:
        return self.items[self.at]

    def take(self, text: str | None = None) -> Token:
        token = self.items[self.at]
        if text is not None and token.text != text:
            shown = repr(token.text) if token.text else "the end"
            raise ExpressionError(f"expected {text!r} but found {shown}")
        self.at += 1
        return token

    def expression(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise ExpressionError(f"nested more than {MAX_DEPTH} deep (the limit)")
        node = self.primary(depth)
        while self.peek().text in (".", "["):
            if self.take().text == ".":
                name = self.take()
                if name.kind != "name":
                    raise ExpressionError(f"expected a property name after '.', not {name.text!r}")
                node = Member(node, name.text)
            else:
                node = Index(node, self.expression(depth + 1))
                self.take("]")
            depth += 1
            if depth > MAX_DEPTH:
                raise ExpressionError(f"nested more than {MAX_DEPTH} deep (the limit)")
        return node

    def primary(self, depth: int) -> Node:
        token = self.take()
        if token.kind == "string":
            return Literal(token.text[1:-1].replace("''", "'"))
        if token.kind == "number":
            return Literal(int(token.text))
        if token.kind == "name":
            self.take("(")
            args: list[Node] = []
            if self.peek().text != ")":
                args.append(self.expression(depth + 1))
                while self.peek().text == ",":
                    self.take()
                    args.append(self.expression(depth + 1))
            self.take(")")
            return Call(token.text, tuple(args))
        raise ExpressionError(f"unexpected {token.text or 'end'!r}")


def parse(text: str) -> Node:
    """The syntax tree of an expression (the text between the outer `[` `]`)."""
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ExpressionError(
            f"the expression is {len(text)} characters; at most {MAX_EXPRESSION_CHARS} (the limit)"
        )
    parser = _Parser(text)
    node = parser.expression(0)
    if parser.peek().kind != "end":
        raise ExpressionError(f"unexpected {parser.peek().text!r} after the expression")
    return node


def is_expression(value: str) -> bool:
    """Whether a template string is an expression: `[…]`, but not `[[…` (a literal `[`)."""
    return value.startswith("[") and value.endswith("]") and not value.startswith("[[")


def literal_text(value: str) -> str:
    """A template string that is not an expression, as the value it stands for."""
    return value[1:] if value.startswith("[[") else value


# -- evaluation --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scope:
    """What the scope functions answer: the target subscription and resource group."""

    subscription: str
    resource_group: str
    location: str | None  # the resource group's location (--location), when given


@dataclass
class Context:
    """What an expression can see. `parameter` and `variable` look a name up (case-insensitive,
    evaluating on first use); `loops` holds the copy indexes, innermost last."""

    scope: Scope
    parameter: Callable[[str], Any]
    variable: Callable[[str], Any]
    now: datetime
    loops: list[tuple[str, int]] = field(default_factory=list)
    in_parameter_default: bool = False

    def inside(self, loop: str, index: int) -> Context:
        return Context(
            self.scope,
            self.parameter,
            self.variable,
            self.now,
            [*self.loops, (loop, index)],
            self.in_parameter_default,
        )


def evaluate_text(text: str, context: Context) -> Any:
    """A template string's value: the expression's result, or the literal text."""
    if not is_expression(text):
        return literal_text(text)
    return evaluate(parse(text[1:-1]), context)


def evaluate(node: Node, context: Context) -> Any:
    if isinstance(node, Literal):
        return node.value
    if isinstance(node, Member):
        return _member(evaluate(node.target, context), node.name)
    if isinstance(node, Index):
        return _index(evaluate(node.target, context), evaluate(node.key, context))
    name = node.name.lower()
    if name == "if":  # only the branch taken is evaluated
        _arity(node, 3, 3)
        condition = evaluate(node.args[0], context)
        if isinstance(condition, Unseen):
            return condition
        return evaluate(node.args[1 if _truth(condition, "if") else 2], context)
    function = FUNCTIONS.get(name)
    if function is None:
        raise ExpressionError(f"{node.name}() is not supported (see docs/migrating.md)")
    low, high = ARITY[name]
    _arity(node, low, high)
    args = [evaluate(arg, context) for arg in node.args]
    unseen = next((a for a in args if isinstance(a, Unseen)), None)
    if unseen is not None:
        return unseen
    return function(context, *args)


def _arity(node: Call, low: int, high: int | None) -> None:
    given = len(node.args)
    if given < low or (high is not None and given > high):
        wanted = f"{low}" if low == high else f"{low} or more" if high is None else f"{low}-{high}"
        raise ExpressionError(f"{node.name}() takes {wanted} arguments, not {given}")


def _member(value: Any, name: str) -> Any:
    if isinstance(value, Unseen):
        return value
    if isinstance(value, Mapping):
        for key in value:
            if key.lower() == name.lower():
                return value[key]
        if isinstance(value, _ResourceGroup) and name.lower() == "location":
            raise ExpressionError(value.hint)
        raise ExpressionError(f"the object has no property {name!r}")
    raise ExpressionError(f"property {name!r} of a {_kind(value)}, which has no properties")


def _index(value: Any, key: Any) -> Any:
    if isinstance(value, Unseen) or isinstance(key, Unseen):
        return value if isinstance(value, Unseen) else key
    if isinstance(key, str):
        return _member(value, key)
    if isinstance(value, list) and isinstance(key, int) and not isinstance(key, bool):
        if not 0 <= key < len(value):
            raise ExpressionError(f"index {key} is outside the array of {len(value)}")
        return value[key]
    raise ExpressionError(f"cannot index a {_kind(value)} with a {_kind(key)}")


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return "null"


def _bounded(text: str) -> str:
    if len(text) > MAX_VALUE_CHARS:
        raise ExpressionError(f"a value of more than {MAX_VALUE_CHARS} characters (the limit)")
    return text


def _truth(value: Any, function: str) -> bool:
    if not isinstance(value, bool):
        raise ExpressionError(f"{function}() needs a bool condition, not a {_kind(value)}")
    return value


def _text(value: Any, function: str) -> str:
    if not isinstance(value, str):
        raise ExpressionError(f"{function}() needs a string, not a {_kind(value)}")
    return value


# -- functions ---------------------------------------------------------------------------------


def as_string(value: Any) -> str:
    """A value as ARM's `string()` writes it: JSON for objects and arrays, `True`/`False`."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if value is None:
        return ""
    return _bounded(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def _parameters(context: Context, name: Any) -> Any:
    return context.parameter(_text(name, "parameters"))


def _variables(context: Context, name: Any) -> Any:
    return context.variable(_text(name, "variables"))


def _concat(context: Context, *values: Any) -> Any:
    if values and all(isinstance(v, list) for v in values):
        return [item for value in values for item in value]
    if any(isinstance(v, list | Mapping) for v in values):
        raise ExpressionError("concat() joins strings (or arrays), not a mix with objects")
    return _bounded("".join(as_string(v) for v in values))


_PLACE = re.compile(r"\{\{|\}\}|\{(\d+)(?::([^}]*))?\}")


def _format(context: Context, template: Any, *values: Any) -> str:
    text = _text(template, "format")

    def place(match: re.Match[str]) -> str:
        if match.group(0) in ("{{", "}}"):
            return match.group(0)[0]
        position, spec = int(match.group(1)), match.group(2)
        if position >= len(values):
            raise ExpressionError(f"format() has no argument {{{position}}}")
        return _formatted(values[position], spec)

    return _bounded(_PLACE.sub(place, text))


def _formatted(value: Any, spec: str | None) -> str:
    """One `{n:spec}` of format(): .NET's `D<digits>` for integers, else the plain value."""
    if not spec:
        return as_string(value)
    match = re.fullmatch(r"[Dd](\d{0,2})", spec)
    if match and isinstance(value, int) and not isinstance(value, bool):
        return str(value).zfill(int(match.group(1) or 0))
    raise ExpressionError(f"format() does not support the format {spec!r} here")


def _string(context: Context, value: Any) -> str:
    return as_string(value)


def _int(context: Context, value: Any) -> int:
    if isinstance(value, bool):
        raise ExpressionError("int() of a bool is not allowed")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        return int(value)
    raise ExpressionError(f"int() cannot read {as_string(value)!r} as an integer")


def _bool(context: Context, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ExpressionError(f"bool() cannot read {as_string(value)!r} as a bool")


def _to_lower(context: Context, value: Any) -> str:
    return _text(value, "toLower").lower()


def _to_upper(context: Context, value: Any) -> str:
    return _text(value, "toUpper").upper()


def _equals(context: Context, first: Any, second: Any) -> bool:
    return bool(_kind(first) == _kind(second) and first == second)


def _copy_index(context: Context, *args: Any) -> int:
    loop: str | None = None
    offset = 0
    if len(args) == 2:
        loop, offset = _text(args[0], "copyIndex"), args[1]
    elif len(args) == 1 and isinstance(args[0], str):
        loop = args[0]
    elif len(args) == 1:
        offset = args[0]
    if not isinstance(offset, int) or isinstance(offset, bool):
        raise ExpressionError("copyIndex() takes an integer offset")
    if not context.loops:
        raise ExpressionError("copyIndex() outside a copy loop")
    if loop is None:
        return context.loops[-1][1] + offset
    for name, index in reversed(context.loops):
        if name.lower() == loop.lower():
            return index + offset
    raise ExpressionError(f"copyIndex() names the loop {loop!r}, which is not around it")


def _resource_group(context: Context) -> dict[str, Any]:
    scope = context.scope
    group: dict[str, Any] = {
        "id": f"/subscriptions/{scope.subscription}/resourceGroups/{scope.resource_group}",
        "name": scope.resource_group,
        "type": "Microsoft.Resources/resourceGroups",
        "properties": {"provisioningState": "Succeeded"},
    }
    if scope.location is not None:
        group["location"] = scope.location
    return _ResourceGroup(group)


class _ResourceGroup(dict[str, Any]):
    """resourceGroup()'s object, whose missing `location` names the option that gives it."""

    hint = "resourceGroup().location needs --location (the resource group's location)"


def _subscription(context: Context) -> dict[str, Any]:
    subscription = context.scope.subscription
    return {
        "id": f"/subscriptions/{subscription}",
        "subscriptionId": subscription,
        "displayName": subscription,
    }


def _resource_id(context: Context, *args: Any) -> str:
    """`resourceId([subscriptionId], [resourceGroupName], type, name, …)`."""
    texts = [_text(a, "resourceId") for a in args]
    at = next((i for i, t in enumerate(texts) if "/" in t and "." in t.split("/")[0]), None)
    if at is None or at > 2:
        raise ExpressionError("resourceId() needs a resource type such as Microsoft.X/y")
    before, resource_type, names = texts[:at], texts[at].strip("/"), texts[at + 1 :]
    subscription = before[0] if len(before) == 2 else context.scope.subscription
    group = before[-1] if before else context.scope.resource_group
    parts = resource_type.split("/")
    if len(names) != len(parts) - 1:
        raise ExpressionError(
            f"resourceId() of {resource_type} takes {len(parts) - 1} names, not {len(names)}"
        )
    path = f"{parts[0]}/" + "/".join(f"{t}/{n}" for t, n in zip(parts[1:], names, strict=True))
    return f"/subscriptions/{subscription}/resourceGroups/{group}/providers/{path}"


def _unique_string(context: Context, *values: Any) -> str:
    return unique_string(*(_text(v, "uniqueString") for v in values))


def _utc_now(context: Context, *args: Any) -> str:
    if not context.in_parameter_default:
        raise ExpressionError("utcNow() may only be used in a parameter's defaultValue")
    pattern = _text(args[0], "utcNow") if args else "yyyyMMddTHHmmssZ"
    return dotnet_format(context.now, pattern)


def _date_time_add(context: Context, base: Any, duration: Any, *args: Any) -> str:
    start = _instant(_text(base, "dateTimeAdd"))
    try:
        step = isodate.parse_duration(_text(duration, "dateTimeAdd"))
    except (isodate.ISO8601Error, ValueError):
        raise ExpressionError(f"dateTimeAdd() cannot read the duration {duration!r}") from None
    result: datetime = start + step
    if args:
        return dotnet_format(result, _text(args[0], "dateTimeAdd"))
    return result.strftime("%Y-%m-%dT%H:%M:%SZ")


def _instant(text: str) -> datetime:
    """An ISO 8601 date-time (ARM's `u` form `2020-01-01 10:00:00Z` too; a date alone is its
    midnight), as aware UTC."""
    given = text.strip().replace(" ", "T", 1)
    try:
        if "T" in given:
            found: datetime = isodate.parse_datetime(given)
        else:
            day = isodate.parse_date(given)
            found = datetime(day.year, day.month, day.day, tzinfo=UTC)
    except (isodate.ISO8601Error, ValueError):
        raise ExpressionError(f"cannot read {text!r} as a date-time") from None
    if found.tzinfo is None:
        found = found.replace(tzinfo=UTC)
    return found.astimezone(UTC)


_DOTNET = re.compile(r"yyyy|MM|dd|HH|mm|ss|fff|[TZ\-:. /]|'[^']*'")
_STANDARD = {"u": "yyyy-MM-dd HH:mm:ssZ", "s": "yyyy-MM-ddTHH:mm:ss", "o": "yyyy-MM-ddTHH:mm:ssZ"}


def dotnet_format(instant: datetime, pattern: str) -> str:
    """A UTC instant in a .NET date format: the standard `u`, `s`, `o`, or a custom pattern of
    `yyyy MM dd HH mm ss fff`, `T`, `Z`, `-`, `:`, `.`, `/`, spaces and quoted text."""
    pattern = _STANDARD.get(pattern, pattern)
    utc = instant.astimezone(UTC)
    parts = {
        "yyyy": f"{utc.year:04d}",
        "MM": f"{utc.month:02d}",
        "dd": f"{utc.day:02d}",
        "HH": f"{utc.hour:02d}",
        "mm": f"{utc.minute:02d}",
        "ss": f"{utc.second:02d}",
        "fff": f"{utc.microsecond // 1000:03d}",
    }
    out, at = [], 0
    while at < len(pattern):
        match = _DOTNET.match(pattern, at)
        if match is None:
            raise ExpressionError(f"the date format {pattern!r} is not supported here")
        piece = match.group(0)
        out.append(parts.get(piece, piece.strip("'") if piece.startswith("'") else piece))
        at = match.end()
    return "".join(out)


Function = Callable[..., Any]

FUNCTIONS: dict[str, Function] = {
    "parameters": _parameters,
    "variables": _variables,
    "concat": _concat,
    "format": _format,
    "string": _string,
    "int": _int,
    "bool": _bool,
    "tolower": _to_lower,
    "toupper": _to_upper,
    "equals": _equals,
    "copyindex": _copy_index,
    "resourcegroup": _resource_group,
    "subscription": _subscription,
    "resourceid": _resource_id,
    "uniquestring": _unique_string,
    "utcnow": _utc_now,
    "datetimeadd": _date_time_add,
}

ARITY: dict[str, tuple[int, int | None]] = {
    "parameters": (1, 1),
    "variables": (1, 1),
    "concat": (1, None),
    "format": (1, None),
    "string": (1, 1),
    "int": (1, 1),
    "bool": (1, 1),
    "tolower": (1, 1),
    "toupper": (1, 1),
    "equals": (2, 2),
    "copyindex": (0, 2),
    "resourcegroup": (0, 0),
    "subscription": (0, 0),
    "resourceid": (2, None),
    "uniquestring": (1, None),
    "utcnow": (0, 1),
    "datetimeadd": (2, 3),
}
