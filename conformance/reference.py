"""The reference implementation (reference_impl.Log) behind the in-process contract.

``klogspec conformance --impl reference`` drives this object directly; ``klogspec
testee`` serves it over the JSON-lines protocol (testee.py). It holds at most one open
log; operations with none open are ``LOG_CLOSED`` (MODEL-12), as after ``close``.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from reference_impl.errors import KafkaLogError
from reference_impl.log.clock import ManualClock
from reference_impl.log.config import LogConfig
from reference_impl.log.fetch import FetchIsolation
from reference_impl.log.log_cleaner import DEDUPE_BUFFER_SIZE, IO_BUFFER_SIZE, Cleaner
from reference_impl.log.log_cleaner_manager import clean_once
from reference_impl.log.log_validator import AppendOrigin
from reference_impl.log.unified_log import Log

from .adapter import OperationError

FEATURES = [
    "compaction",
    "compression.gzip",
    "compression.lz4",
    "compression.snappy",
    "compression.zstd",
    "crash_recovery",
    "idempotence",
    "leader_epoch_checkpoint",
    "legacy_formats",
    "log_append_time",
    "preallocate",
    "producer_snapshots",
    "transaction_index",
]
ORIGINS = {"client": AppendOrigin.CLIENT, "coordinator": AppendOrigin.COORDINATOR}
ISOLATIONS = {
    "high_watermark": FetchIsolation.HIGH_WATERMARK,
    "txn_committed": FetchIsolation.TXN_COMMITTED,
}


def package_version() -> str:
    try:
        return version("kafka-log-spec")
    except PackageNotFoundError:  # pragma: no cover - a source checkout never installed
        return "0+unknown"


class _Errors:
    """Reference errors become protocol error codes: the upper-case category."""

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if isinstance(exc, KafkaLogError):
            raise OperationError(exc.category.value.upper(), exc.message) from exc
        return False


class ReferenceAdapter:
    name = "kafka-log-spec reference"

    def __init__(self) -> None:
        self.clock = ManualClock(0)
        self.log: Log | None = None
        self.cleaner: Cleaner | None = None  # lives as long as the testee, as a cleaner thread's

    # --- plumbing ---
    def _tick(self, now_ms: int) -> None:
        self.clock.set(now_ms)

    def _log(self) -> Log:
        if self.log is None:
            raise OperationError("LOG_CLOSED", "no log is open")
        return self.log

    def _state(self) -> dict:
        state = self._log().state()
        return {
            "log_start_offset": state.log_start_offset,
            "log_end_offset": state.log_end_offset,
            "recovery_point": state.recovery_point,
            "segments": [
                {"base_offset": s.base_offset, "size_bytes": s.size_bytes} for s in state.segments
            ],
            "last_stable_offset": state.last_stable_offset,
        }

    # --- the contract ---
    def hello(self, *, now_ms: int, **_: object) -> dict:
        return {
            "name": self.name,
            "version": package_version(),
            "language": "python",
            "features": list(FEATURES),
        }

    def open(self, dir: str, config: dict, *, now_ms: int, topic_id: str | None = None) -> dict:
        self._tick(now_ms)
        if self.log is not None and not self.log.closed:
            self._drop_handles(self.log)
        self.log = None
        try:
            log_config = LogConfig.from_dict(config)
        except (TypeError, ValueError) as exc:  # MODEL-8
            raise OperationError("INVALID_ARGUMENT", str(exc)) from exc
        with _Errors():
            self.log = Log.open(Path(dir), log_config, self.clock, topic_id=topic_id)
        return self._state()

    def append(
        self,
        batches: list[bytes],
        assign_offsets: bool,
        leader_epoch: int,
        *,
        now_ms: int,
        origin: str = "client",
    ) -> dict:
        self._tick(now_ms)
        log = self._log()
        data = b"".join(batches)
        if origin not in ORIGINS or (origin != "client" and not assign_offsets):
            raise OperationError("INVALID_ARGUMENT", f"origin {origin} of a follower append")
        with _Errors():
            if assign_offsets:
                info = log.append_as_leader(data, leader_epoch, ORIGINS[origin])
            else:
                info = log.append_as_follower(data)
        appended = info.valid_bytes > 0
        return {
            "first_offset": info.first_offset if appended else -1,
            "last_offset": info.last_offset if appended else -1,
            "max_timestamp": info.max_timestamp,
            "offset_of_max_timestamp": info.shallow_offset_of_max_timestamp,
            "log_append_time": info.log_append_time,
        }

    def read(
        self,
        start_offset: int,
        max_bytes: int,
        max_offset: int | None = None,
        min_one_message: bool = False,
        *,
        now_ms: int,
        isolation: str = "high_watermark",
    ) -> dict:
        self._tick(now_ms)
        if isolation not in ISOLATIONS:
            raise OperationError("INVALID_ARGUMENT", f"isolation {isolation}")
        with _Errors():
            fetch = self._log().read(
                start_offset, max_bytes, max_offset, min_one_message, ISOLATIONS[isolation]
            )
        meta = fetch.fetch_offset_metadata
        result = {
            "data": fetch.data(),
            "fetch_offset_metadata": {
                "message_offset": meta.message_offset,
                "segment_base_offset": meta.segment_base_offset,
                "relative_position_in_segment": meta.relative_position_in_segment,
            },
            "first_entry_incomplete": fetch.first_entry_incomplete,
        }
        if fetch.aborted_transactions is not None:
            result["aborted_transactions"] = [
                {"producer_id": t.producer_id, "first_offset": t.first_offset}
                for t in fetch.aborted_transactions
            ]
        return result

    def roll(self, expected_next_offset: int | None = None, *, now_ms: int) -> dict:
        self._tick(now_ms)
        with _Errors():
            segment = self._log().roll(expected_next_offset)
        return {"base_offset": segment.base_offset}

    def flush(self, *, now_ms: int) -> dict:
        self._tick(now_ms)
        with _Errors():
            self._log().flush()
        return {}

    def truncate_to(self, offset: int, *, now_ms: int) -> dict:
        self._tick(now_ms)
        with _Errors():
            return {"truncated": bool(self._log().truncate_to(offset))}

    def truncate_fully_and_start_at(
        self, offset: int, log_start_offset: int | None = None, *, now_ms: int
    ) -> dict:
        self._tick(now_ms)
        with _Errors():
            self._log().truncate_fully_and_start_at(offset, log_start_offset)
        return {}

    def delete_segments_before(self, offset: int, *, now_ms: int) -> dict:
        self._tick(now_ms)
        with _Errors():
            return {"deleted_segments": self._log().delete_segments_before(offset)}

    def delete_old_segments(self, *, now_ms: int) -> dict:
        self._tick(now_ms)
        with _Errors():
            return {"deleted_segments": self._log().delete_old_segments()}

    def fetch_offset_by_timestamp(self, timestamp: int, *, now_ms: int) -> dict:
        self._tick(now_ms)
        with _Errors():
            found = self._log().fetch_offset_by_timestamp(timestamp)
        if found is None:
            return {"found": False}
        return {
            "found": True,
            "timestamp": found.timestamp,
            "offset": found.offset,
            "leader_epoch": found.leader_epoch,
        }

    def clean(
        self,
        first_dirty_offset: int | None = None,
        dedupe_buffer_size: int = DEDUPE_BUFFER_SIZE,
        io_buffer_size: int = IO_BUFFER_SIZE,
        *,
        now_ms: int,
    ) -> dict:
        """One pass of the log cleaner thread over the open log (compaction.md)."""
        self._tick(now_ms)
        log = self._log()
        sizes = (dedupe_buffer_size, io_buffer_size)
        if self.cleaner is None or self._cleaner_sizes != sizes:
            try:
                self.cleaner = Cleaner(dedupe_buffer_size, io_buffer_size)
            except ValueError as exc:
                raise OperationError("INVALID_ARGUMENT", str(exc)) from exc
            self._cleaner_sizes = sizes
        with _Errors():
            log.begin_operation()
            out = clean_once(log, self.cleaner, first_dirty_offset)
        stats = out.stats
        return {
            "cleaned": out.cleaned,
            "first_dirty_offset": out.first_dirty_offset,
            "first_uncleanable_dirty_offset": out.first_uncleanable_dirty_offset,
            "first_uncleanable_offset": out.first_uncleanable_offset,
            "end_offset": out.end_offset,
            "cleanable_ratio": out.cleanable_ratio,
            "compaction_delay_ms": out.compaction_delay_ms,
            "checkpoint_reset": out.checkpoint_reset,
            "messages_read": stats.messages_read,
            "messages_written": stats.messages_written,
            "bytes_read": stats.bytes_read,
            "bytes_written": stats.bytes_written,
            "invalid_messages_read": stats.invalid_messages_read,
            "map_messages_read": stats.map_messages_read,
            "map_bytes_read": stats.map_bytes_read,
        }

    def state(self, *, now_ms: int) -> dict:
        self._tick(now_ms)
        with _Errors():
            return self._state()

    def close(self, *, now_ms: int) -> dict:
        self._tick(now_ms)
        with _Errors():
            self._log().close()
        return {}

    def crash(self, *, now_ms: int) -> None:
        """Stop at once: drop every file handle without flushing, trimming or writing a
        checkpoint (Log.crash when the reference has one, else its close_handlers)."""
        if self.log is not None:
            self._drop_handles(self.log)
        self.log = None

    @staticmethod
    def _drop_handles(log: Log) -> None:
        crash = getattr(log, "crash", None)
        if callable(crash):
            crash()
        elif not log.closed:
            log.close_handlers()


def factory() -> ReferenceAdapter:
    return ReferenceAdapter()
