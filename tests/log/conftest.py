"""Fixtures for the reference-log tests."""

from __future__ import annotations

import pytest

from reference_impl.log.clock import ManualClock

from .support import MOCK_TIME_START


@pytest.fixture
def clock() -> ManualClock:
    """Kafka's MockTime."""
    return ManualClock(MOCK_TIME_START)
