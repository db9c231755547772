"""The in-process contract (DESIGN.md §2) and the wire form both transports share.

An in-process implementation is a factory, named ``module:attr`` or registered under
the entry-point group ``klogspec.implementations``, that returns an object with one
method per operation. Each method takes the operation's arguments (snake_case, as in
the JSON protocol, but with ``bytes`` for byte strings) and the keyword ``now_ms``,
and returns the result as a ``dict`` (``bytes`` again for ``read``'s ``data``)::

    hello(*, now_ms) -> {"name", "version", "features": [...]}
    open(dir, config, *, now_ms, topic_id=None) -> state
    append(batches: list[bytes], assign_offsets, leader_epoch, *, now_ms, origin="client")
        -> {"first_offset", "last_offset", ...}
    read(start_offset, max_bytes, max_offset=None, min_one_message=False, *, now_ms,
         isolation="high_watermark")
        -> {"data": bytes, "fetch_offset_metadata": {...}, "first_entry_incomplete",
            "aborted_transactions"?: [{"producer_id", "first_offset"}]}
    roll(expected_next_offset=None, *, now_ms) -> {"base_offset"}
    flush(*, now_ms) -> {}
    truncate_to(offset, *, now_ms) -> {"truncated"}
    truncate_fully_and_start_at(offset, log_start_offset=None, *, now_ms) -> {}
    delete_segments_before(offset, *, now_ms) -> {"deleted_segments"}
    delete_old_segments(*, now_ms) -> {"deleted_segments"}
    fetch_offset_by_timestamp(timestamp, *, now_ms) -> {"found", "timestamp", "offset", "leader_epoch"}
    state(*, now_ms) -> {"log_start_offset", "log_end_offset", "recovery_point", "segments",
                         "last_stable_offset"?}
    close(*, now_ms) -> {}
    crash(*, now_ms) -> None   # drop every handle without flushing or closing
    clean(first_dirty_offset=None, dedupe_buffer_size=4194304, io_buffer_size=524288, *, now_ms)
        -> {"cleaned", "first_dirty_offset", "end_offset", ...}   # feature compaction

``origin`` and ``isolation`` are passed only when a scenario needs them (``origin``
"coordinator": the transaction coordinator writing a COMMIT or ABORT marker through the
leader; ``isolation`` "txn_committed": a read_committed fetch), and only scenarios of
the features ``transaction_index`` and ``idempotence`` send them or look at
``aborted_transactions`` and ``last_stable_offset``: an implementation without those
features need not accept them.

A refused operation raises ``OperationError(code)`` (or any exception with a string
``code`` attribute), ``code`` being one of spec/behaviour/model.md Table 2. Any other
exception is a crash of the testee: the test fails, the run goes on.
"""

from __future__ import annotations

import base64
from typing import Any, Protocol


class OperationError(Exception):
    """An operation refused with an error code (RECORD_TOO_LARGE, ...)."""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code
        self.message = message


class Implementation(Protocol):
    def hello(self, *, now_ms: int) -> dict: ...
    def open(self, dir: str, config: dict, *, now_ms: int, topic_id: str | None = None) -> dict: ...
    def append(
        self,
        batches: list[bytes],
        assign_offsets: bool,
        leader_epoch: int,
        *,
        now_ms: int,
        origin: str = "client",
    ) -> dict: ...
    def read(
        self,
        start_offset: int,
        max_bytes: int,
        max_offset: int | None = None,
        min_one_message: bool = False,
        *,
        now_ms: int,
        isolation: str = "high_watermark",
    ) -> dict: ...
    def roll(self, expected_next_offset: int | None = None, *, now_ms: int) -> dict: ...
    def flush(self, *, now_ms: int) -> dict: ...
    def truncate_to(self, offset: int, *, now_ms: int) -> dict: ...
    def truncate_fully_and_start_at(
        self, offset: int, log_start_offset: int | None = None, *, now_ms: int
    ) -> dict: ...
    def delete_segments_before(self, offset: int, *, now_ms: int) -> dict: ...
    def delete_old_segments(self, *, now_ms: int) -> dict: ...
    def fetch_offset_by_timestamp(self, timestamp: int, *, now_ms: int) -> dict: ...
    def state(self, *, now_ms: int) -> dict: ...
    def close(self, *, now_ms: int) -> dict: ...
    def crash(self, *, now_ms: int) -> None: ...
    def clean(
        self,
        first_dirty_offset: int | None = None,
        dedupe_buffer_size: int = 4194304,
        io_buffer_size: int = 524288,
        *,
        now_ms: int,
    ) -> dict: ...


def error_code(exc: BaseException) -> str | None:
    """The protocol error code an exception stands for, or None for a crash."""
    code = getattr(exc, "code", None)
    return code if isinstance(code, str) and code else None


def call(adapter: Any, op: str, args: dict, now_ms: int) -> dict:
    """Run one operation given in wire form (base64 bytes) and return its result in
    wire form. Raises what the adapter raises."""
    if op == "append":
        args = {**args, "batches": [base64.b64decode(b) for b in args["batches"]]}
    result = getattr(adapter, op)(**args, now_ms=now_ms)
    result = {} if result is None else dict(result)
    if op == "read":
        result["data"] = base64.b64encode(bytes(result["data"])).decode("ascii")
    return result
