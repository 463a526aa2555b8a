"""How commands name what they act on, as the SDK does: `--subscription S --resource-group G
--collection C` (each also HORARIUM_SUBSCRIPTION, HORARIUM_RESOURCE_GROUP, HORARIUM_COLLECTION)
and a job (or an exclusion calendar) by `--job J` (`--calendar NAME`) or a positional name."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from horarium.cli.options import OneLineError
from horarium.client import CollectionRef, check_segment

_SUBSCRIPTION = click.option(
    "--subscription",
    envvar="HORARIUM_SUBSCRIPTION",
    show_envvar=True,
    default=None,
    help="Subscription id.",
)
_RESOURCE_GROUP = click.option(
    "--resource-group",
    envvar="HORARIUM_RESOURCE_GROUP",
    show_envvar=True,
    default=None,
    help="Resource group name.",
)
_COLLECTION = click.option(
    "--collection",
    envvar="HORARIUM_COLLECTION",
    show_envvar=True,
    default=None,
    help="Job collection name.",
)


def _named(value: str | None, what: str, spelled: str) -> str:
    if not value:
        raise OneLineError(f"name the {what}: {spelled}")
    try:
        return check_segment(value, what)
    except ValueError as e:
        raise OneLineError(str(e)) from None


def _one_of(positional: str | None, option: str | None, what: str, flag: str) -> str | None:
    """The name given as an argument or by its option: both on the command line must agree;
    an argument wins over the option's environment variable (a default set once)."""
    if positional and option and positional != option:
        source = click.get_current_context().get_parameter_source(flag.removeprefix("--"))
        if source is not click.core.ParameterSource.ENVIRONMENT:
            raise OneLineError(f"two {what} names: {positional!r} and {flag} {option!r}; give one")
    return positional or option


def subscription_of(value: str | None) -> str:
    return _named(value, "subscription", "--subscription S or HORARIUM_SUBSCRIPTION")


def optional_group(value: str | None) -> str | None:
    return None if value is None else _named(value, "resource group", "--resource-group G")


Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def scope_options(*, collection: bool = False) -> Decorator:
    """`--subscription` (required) and `--resource-group` (optional), passed on as
    `subscription` and `resource_group`; with `collection`, also `--collection` (optional, needs
    a resource group), passed on as `collection`."""

    def apply(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def run(*args: Any, subscription: str | None, resource_group: str | None, **kw: Any) -> Any:
            group = optional_group(resource_group)
            if collection:
                name = kw.pop("collection")
                if name and group is None:
                    raise OneLineError(
                        "--collection needs --resource-group G (or HORARIUM_RESOURCE_GROUP)"
                    )
                kw["collection"] = _named(name, "collection", "--collection C") if name else None
            return command(
                *args, subscription=subscription_of(subscription), resource_group=group, **kw
            )

        decorated = _COLLECTION(run) if collection else run
        return _SUBSCRIPTION(_RESOURCE_GROUP(decorated))

    return apply


_COLLECTION_SPELLED = "--collection C or HORARIUM_COLLECTION"


def collection_options(*, positional: bool) -> Decorator:
    """The collection a command acts on, passed on as `collection` (a `CollectionRef`);
    `positional`: the command also takes its name as an argument."""

    def apply(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def run(
            *args: Any,
            subscription: str | None,
            resource_group: str | None,
            collection: str | None,
            collection_name: str | None = None,
            **kw: Any,
        ) -> Any:
            name = _one_of(collection_name, collection, "collection", "--collection")
            spelled = f"COLLECTION, {_COLLECTION_SPELLED}" if positional else _COLLECTION_SPELLED
            ref = CollectionRef(
                subscription_of(subscription),
                _named(
                    resource_group,
                    "resource group",
                    "--resource-group G or HORARIUM_RESOURCE_GROUP",
                ),
                _named(name, "collection", spelled),
            )
            return command(*args, collection=ref, **kw)

        decorated = _SUBSCRIPTION(_RESOURCE_GROUP(_COLLECTION(run)))
        if positional:
            argument = click.argument("collection_name", required=False, metavar="[COLLECTION]")
            decorated = argument(decorated)
        return decorated

    return apply


def job_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The job a command acts on, passed on as `job` (a `JobRef`): its collection's options, and
    its name as an argument or by `--job J`."""

    @functools.wraps(command)
    def run(
        *args: Any, collection: CollectionRef, job: str | None, job_name: str | None, **kw: Any
    ) -> Any:
        name = _one_of(job_name, job, "job", "--job")
        return command(*args, job=collection.job(job_named(name)), **kw)

    decorated = click.option("--job", default=None, help="Job name.")(run)
    decorated = click.argument("job_name", required=False, metavar="[JOB]")(decorated)
    return collection_options(positional=False)(decorated)


def job_named(name: str | None, spelled: str = "JOB or --job J") -> str:
    """A job name given on the command line (a one-line usage error when there is none)."""
    return _named(name, "job", spelled)


def _member_options(
    kind: str, make: Callable[[CollectionRef, str], Any]
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A collection member's options (a calendar, a monitor: `kind`): its collection's options,
    and its name as an argument or by `--<kind> NAME`, passed on as `<kind>` (`make`'s ref)."""
    upper = kind.upper()

    def apply(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def run(*args: Any, collection: CollectionRef, **kw: Any) -> Any:
            name = _one_of(kw.pop(f"{kind}_name"), kw.pop(kind), kind, f"--{kind}")
            spelled = f"{upper} or --{kind} NAME"
            return command(*args, **{kind: make(collection, _named(name, kind, spelled))}, **kw)

        decorated = click.option(f"--{kind}", default=None, help=f"{kind.title()} name.")(run)
        argument = click.argument(f"{kind}_name", required=False, metavar=f"[{upper}]")
        return collection_options(positional=False)(argument(decorated))

    return apply


calendar_options = _member_options("calendar", lambda c, name: c.calendar(name))
calendar_options.__doc__ = "The exclusion calendar a command acts on (a `CalendarRef`)."
monitor_options = _member_options("monitor", lambda c, name: c.monitor(name))
monitor_options.__doc__ = "The check-in monitor a command acts on (a `MonitorRef`)."


def monitor_named(name: str | None, spelled: str = "MONITOR or --monitor NAME") -> str:
    """A monitor name given on the command line (a one-line usage error when there is none)."""
    return _named(name, "monitor", spelled)


def calendar_named(name: str | None, spelled: str = "CALENDAR or --calendar NAME") -> str:
    """A calendar name given on the command line (a one-line usage error when there is none)."""
    return _named(name, "calendar", spelled)
