"""Command-line options built from `horarium.config.Settings`: each field a `--option` that also
reads HORARIUM_<OPTION> (dashes become underscores). Commands choose which fields they take."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import click

from horarium.config import Settings

_DEFAULTS = Settings()


class _ListItem(click.types.StringParamType):
    """An item of a repeatable option; its environment variable holds a comma-separated list."""

    envvar_list_splitter = ","


_LIST_ITEM = _ListItem()


def _click_type(hint: Any, choices: tuple[str, ...] | None) -> Any:
    """The click type of a settings field's type hint (`X | None` is X)."""
    if choices:
        return click.Choice(choices)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    if typing.get_origin(hint) is tuple:
        return _LIST_ITEM
    if hint is Path:
        return click.Path(path_type=Path)
    return hint


def _option(settings_field: dataclasses.Field[Any], hint: Any) -> Callable[..., Any]:
    """The click option of one `Settings` field (see `horarium.config.option`)."""
    meta = settings_field.metadata
    name = settings_field.name
    default = getattr(_DEFAULTS, name)
    many = isinstance(default, tuple)
    spelling = meta.get("flag") or "--" + name.replace("_", "-")
    env_name = spelling.split("/")[0].removeprefix("--").replace("-", "_").upper()
    return click.option(
        spelling,
        name,
        default=list(default) if many else default,
        show_default=default is not None and default != (),
        type=None if hint is bool else _click_type(hint, meta.get("choices")),
        multiple=many,
        envvar=f"HORARIUM_{env_name}",
        show_envvar=True,
        help=meta["help"],
    )


def settings_options(
    *, api: bool = True, only: Collection[str] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`Settings` fields as options: every one, or without those only `serve` takes
    (`api=False`), or just the fields named in `only`."""
    hints = typing.get_type_hints(Settings)

    def wanted(settings_field: dataclasses.Field[Any]) -> bool:
        if only is not None:
            return settings_field.name in only
        return api or not settings_field.metadata.get("api")

    def apply(f: Callable[..., Any]) -> Callable[..., Any]:
        for settings_field in reversed(dataclasses.fields(Settings)):
            if wanted(settings_field):
                f = _option(settings_field, hints[settings_field.name])(f)
        return f

    return apply


def settings_from(**values: Any) -> Settings:
    """Settings from parsed options; a repeatable option's items may also be comma-separated
    (`--outbound-deny a,b` is `--outbound-deny a --outbound-deny b`). A malformed outbound
    policy item is a one-line error naming it."""
    from horarium.actions.outbound import OutboundPolicy, OutboundPolicyError

    given: dict[str, Any] = {
        k: _items(v) if isinstance(v, tuple | list) else v for k, v in values.items()
    }
    settings = Settings(**given)
    if "outbound_deny" in given or "outbound_allow" in given:
        try:
            OutboundPolicy.parse(settings.outbound_deny, settings.outbound_allow)
        except OutboundPolicyError as exc:
            raise OneLineError(str(exc)) from None
    return settings


def _items(given: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return tuple(item.strip() for value in given for item in value.split(",") if item.strip())


class OneLineError(click.ClickException):
    """A usage mistake told in one line on stderr (`Error: …`, without click's usage text),
    exit code 2."""

    exit_code = 2
