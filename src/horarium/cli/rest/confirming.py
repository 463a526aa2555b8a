"""Asking before a delete: `--yes` skips the question; without it the command asks on the
terminal, and a refusal or no answer (standard input closed, as in a script that did not pass
`--yes`) deletes nothing: one line, exit code 1."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


class NotConfirmed(click.ClickException):
    exit_code = 1


def yes_option(command: F) -> F:
    """The `--yes` / `-y` flag of a command that deletes."""
    flag = click.option("--yes", "-y", "yes", is_flag=True, help="Delete without asking.")
    return flag(command)


def confirm_delete(what: str, yes: bool) -> None:
    """Go on only if the user agrees to delete `what` (or passed --yes)."""
    if yes:
        return
    try:
        agreed = click.confirm(f"Delete {what}?", default=False, err=True)
    except click.Abort:  # no answer: end the question's line
        click.echo(err=True)
        agreed = False
    if not agreed:
        raise NotConfirmed("nothing was deleted: answer y to the question, or pass --yes")
