"""The database work of a command (`keys`, `secrets rotate`): a database that cannot be reached
or opened is one line and exit code 2, as `serve` says it (`store.core.open_errors`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from sqlalchemy.engine import make_url

from horarium.cli.options import OneLineError

T = TypeVar("T")


def run_on(url: str, work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """`asyncio.run(work())`, its failure to open the database at `url` told in one line."""
    from horarium.store.core.open_errors import check_url, explain

    problem = check_url(url)
    if problem is not None:
        raise OneLineError(problem)
    try:
        return asyncio.run(work())
    except Exception as exc:
        said = explain(exc, make_url(url).render_as_string(hide_password=True))
        if said is None:
            raise
        raise OneLineError(said) from None
