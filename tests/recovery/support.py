"""Builders shared by the loading and recovery tests: Kafka's LogLoaderTest helpers, restated."""

from __future__ import annotations

import os
from pathlib import Path

from reference_impl.log import checkpoint_files as ckpt
from reference_impl.log.clock import ManualClock
from reference_impl.log.config import LogConfig
from reference_impl.log.load_events import LoadObserver, Reason
from reference_impl.log.loader import LoadOptions
from reference_impl.log.unified_log import Log
from reference_impl.records import SimpleRecord, build_record_batch

MOCK_TIME_START = 1_700_000_000_000
TOPIC, PARTITION = "topic", 0


def small_config(**config) -> LogConfig:
    """Kafka's configs, with index files of 4 KiB: the reference reads an untrimmed index
    entry by entry, and 10 MiB ones make each reopen after a crash slow."""
    return LogConfig(**{"segment_index_bytes": 4096, **config})


def recovered(observer: LoadObserver, reason: Reason = Reason.UNFLUSHED) -> list[str]:
    """The .log names of the segments a load recovered for ``reason``."""
    return [e.file.name for e in observer.events if e.action == "recover" and e.reason is reason]


def partition_dir(root: Path) -> Path:
    return root / f"{TOPIC}-{PARTITION}"


def open_log(
    root: Path,
    clock: ManualClock,
    config: LogConfig | None = None,
    *,
    clean: bool | None = True,
    recovery_point: int | None = 0,
    log_start_offset: int | None = None,
    index_sanity_check: bool = False,
    observer: LoadObserver | None = None,
) -> Log:
    """LogLoaderTest.createLog: ``clean`` and ``recovery_point`` are passed to the loader as
    Kafka's test passes them (defaults: a clean shutdown, recovery point 0); ``clean=None``
    lets the clean-shutdown marker decide and ``recovery_point=None`` the checkpoint.
    ``log_start_offset`` is written to the log-start-offset checkpoint first."""
    if log_start_offset is not None:
        root.mkdir(parents=True, exist_ok=True)
        ckpt.update_offset(
            root / ckpt.LOG_START_OFFSET_CHECKPOINT, TOPIC, PARTITION, log_start_offset
        )
    options = LoadOptions(
        had_clean_shutdown=clean,
        recovery_point=recovery_point,
        index_sanity_check=index_sanity_check,
        observer=observer,
    )
    config = config or small_config()
    return Log.open(partition_dir(root), config, clock, load=options)


def record(value: bytes, timestamp: int = -1, key: bytes | None = None) -> bytes:
    """TestUtils.singletonRecords: one record in one v2 batch."""
    return build_record_batch([SimpleRecord(value=value, key=key, timestamp=timestamp)])


def keyed_batch(offset: int, *keys: int, epoch: int = 0) -> bytes:
    """A batch of records whose keys and values are their decimal numbers."""
    records = [SimpleRecord(key=str(k).encode(), value=str(k).encode()) for k in keys]
    return build_record_batch(records, base_offset=offset, partition_leader_epoch=epoch)


def keys_in_log(log: Log) -> list[int]:
    """LogTestUtils.keysInLog."""
    return [
        int(r.key)
        for segment in log.log_segments()
        for b in segment.log.batches()
        for r in b.records()
        if r.key is not None
    ]


def append_nonsense(path: Path, size: int, seed: int) -> None:
    """TestUtils.appendNonsenseToFile, with a fixed seed."""
    import random

    rng = random.Random(seed)
    with open(path, "ab") as out:
        out.write(bytes(rng.randrange(256) for _ in range(size)))


def files_of(dir: Path) -> dict[str, bytes]:
    """Every regular file of a directory tree by relative path, for byte comparisons."""
    return {
        str(p.relative_to(dir)): p.read_bytes()
        for p in sorted(dir.rglob("*"))
        if p.is_file() and not os.path.islink(p)
    }
