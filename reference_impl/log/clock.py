"""The injected clock (spec/behaviour/model.md, MODEL-5: every time-dependent rule reads it).

Kafka reads time through its ``Time`` interface [clients/.../common/utils/Time.java]; the reference does the same
through ``Clock``, so a test or the conformance harness (its ``now_ms``) decides
what "now" is. Segment creation times, time-based rolls without record
timestamps, retention by time, delayed file deletion and the mtimes the reference
stamps on ``.log`` files all come from here. This module is the only place that
reads the wall clock.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    """MODEL-5: Kafka's ``Time.milliseconds()``, epoch milliseconds."""

    def milliseconds(self) -> int: ...


class SystemClock:
    """The wall clock, for interactive use; tests and goldens use ``ManualClock``."""

    def milliseconds(self) -> int:
        return time.time_ns() // 1_000_000


class ManualClock:
    """A clock that only moves when told to (Kafka's ``MockTime``)."""

    def __init__(self, now_ms: int = 0) -> None:
        self.now_ms = now_ms

    def milliseconds(self) -> int:
        return self.now_ms

    def sleep(self, ms: int) -> None:
        """Advance by ``ms`` milliseconds (MockTime.sleep)."""
        if ms < 0:
            raise ValueError(f"cannot move a clock backwards by {ms} ms")
        self.now_ms += ms

    def set(self, now_ms: int) -> None:
        """Jump to ``now_ms``: the conformance harness sends an absolute time per request.
        Going back is allowed, as a wall clock may be set back."""
        self.now_ms = now_ms
