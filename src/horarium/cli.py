"""`horarium` command line: serve, worker, preview, keys, secrets.

Every option of `serve` / `worker` also reads HORARIUM_<OPTION> (dashes become underscores).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from horarium.config import Settings
from horarium.keys_cli import keys
from horarium.secrets_cli import secrets

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


def _settings_options(*, api: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Every `Settings` field as an option; `api=False` leaves out those only `serve` takes."""
    hints = typing.get_type_hints(Settings)

    def apply(f: Callable[..., Any]) -> Callable[..., Any]:
        for settings_field in reversed(dataclasses.fields(Settings)):
            if settings_field.metadata.get("api") and not api:
                continue
            f = _option(settings_field, hints[settings_field.name])(f)
        return f

    return apply


def _settings(**values: Any) -> Settings:
    """Settings from parsed options; a repeatable option's items may also be comma-separated
    (`--outbound-deny a,b` is `--outbound-deny a --outbound-deny b`). A malformed outbound
    item is a usage error naming it."""
    from horarium.actions.outbound import OutboundPolicy, OutboundPolicyError

    given: dict[str, Any] = {
        k: _items(v) if isinstance(v, tuple | list) else v for k, v in values.items()
    }
    settings = Settings(**given)
    try:
        OutboundPolicy.parse(settings.outbound_deny, settings.outbound_allow)
    except OutboundPolicyError as exc:
        raise click.UsageError(str(exc)) from None
    return settings


def _items(given: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return tuple(item.strip() for value in given for item in value.split(",") if item.strip())


@click.group()
@click.version_option(package_name="horarium")
def main() -> None:
    """Horarium: a self-hosted job scheduler that speaks the Azure Scheduler REST API."""


@main.command()
@_settings_options(api=True)
def serve(**values: Any) -> None:
    """Run the management API (and, by default, the scheduler)."""
    from horarium.server import serve as run

    run(_settings(**values))


@main.command()
@_settings_options(api=False)
def worker(**values: Any) -> None:
    """Run only the scheduler against the database (for scaled deployments)."""
    from horarium.engine.service import run_worker

    run_worker(_settings(run_engine=True, **values))


@main.command()
@click.argument("file", type=click.File("r"))
@click.option("--now", default=None, help="Creation instant (ISO 8601); default: now.")
@click.option("--count", default=10, show_default=True, type=click.IntRange(min=1))
def preview(file: Any, now: str | None, count: int) -> None:
    """Print the next executions of a job (JSON file, or - for stdin)."""
    from horarium.preview_cli import run

    raise SystemExit(run(file.read(), now=now, count=count))


main.add_command(keys)
main.add_command(secrets)


if __name__ == "__main__":
    main()
