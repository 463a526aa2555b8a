"""The migrations this version knows, read from the names of their files: each file in
`migrations/versions` is `NNNN_what.py`, revision "NNNN", and revises the one numbered before it
(tests/test_store_migrations.py holds this to Alembic's own reading). Knowing them without
Alembic lets a process whose database is up to date start without loading it."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from sqlalchemy import text

VERSIONS = Path(__file__).with_name("migrations") / "versions"


@cache
def known_revisions() -> tuple[str, ...]:
    """Every migration this version knows, oldest first (a revision not among them is a newer
    version's)."""
    return tuple(sorted(path.name[:4] for path in VERSIONS.glob("[0-9][0-9][0-9][0-9]_*.py")))


def head_revision() -> str:
    """The newest migration this version knows."""
    return known_revisions()[-1]


# The migration the database is at (Alembic's one-row table).
REVISION = text("SELECT version_num FROM alembic_version")
