"""Test-wide setup: the helper modules of tests/ are importable, and the network rule holds
(tests connect only to loopback: tests/loopback_only.py)."""

import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import loopback_only
import pytest

loopback_only.install()


@pytest.fixture(autouse=True)
def _only_loopback_traffic() -> Iterator[None]:
    """Fails the test that tried to connect off loopback, even when its code caught the error."""
    before = len(loopback_only.refused)
    yield
    tried = loopback_only.refused[before:]
    assert not tried, f"this test tried to connect off loopback: {tried}"
