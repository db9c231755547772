"""Deleting segment files (spec/behaviour/retention.md): rename now, delete later.

Kafka never deletes a segment's files at once while the log is live
[core/.../log/LocalLog.scala deleteSegmentFiles]: step 1 renames all four files to
``<name>.deleted`` (synchronously; files never created are skipped), step 2
deletes them ``file.delete.delay.ms`` later, so a reader still holding the old
segment can finish. The caller has already removed the segments from the log.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..formats.file_naming import (
    DELETED_FILE_SUFFIX,
    log_file_name,
    offset_index_file_name,
    time_index_file_name,
    txn_index_file_name,
)
from .scheduler import Scheduler
from .segment import LogSegment
from .storage import storage


def delete_segment_files(
    segments: Iterable[LogSegment],
    *,
    async_delete: bool,
    scheduler: Scheduler,
    file_delete_delay_ms: int,
) -> None:
    """RET-13, RET-14: rename every file of ``segments`` to ``.deleted`` (unless already so named),
    then delete them after ``file_delete_delay_ms`` on the injected clock (``async_delete``)
    or at once."""
    segments = list(segments)
    for segment in segments:
        if not segment.has_suffix(DELETED_FILE_SUFFIX):
            segment.change_file_suffixes("", DELETED_FILE_SUFFIX)

    def delete_segments() -> None:
        for segment in segments:
            segment.delete_if_exists()

    if async_delete:
        scheduler.schedule_once("delete-file", delete_segments, file_delete_delay_ms)
    else:
        delete_segments()


def delete_segment_files_if_exist(dir: Path, base_offset: int, suffix: str = "") -> None:
    """LogSegment.deleteIfExists(dir, baseOffset, suffix): remove stale files where a new
    segment is about to be created."""
    for name in (
        offset_index_file_name(base_offset, suffix),
        time_index_file_name(base_offset, suffix),
        txn_index_file_name(base_offset, suffix),
        log_file_name(base_offset, suffix),
    ):
        storage().unlink(dir / name, missing_ok=True)
