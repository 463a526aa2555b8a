"""`horarium keys`: create, list and revoke the API keys callers authenticate with."""

from __future__ import annotations

import click


@click.group()
def keys() -> None:
    """Manage API keys (stored as hashes in the database)."""
