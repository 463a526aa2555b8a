"""`horarium secrets`: maintenance of the secrets stored encrypted in the database."""

from __future__ import annotations

import click


@click.group()
def secrets() -> None:
    """Manage the encryption of stored secrets."""
