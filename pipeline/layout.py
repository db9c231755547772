"""Finding the segments under some paths, on the driver, by file name alone.

Two layouts are recognised (names: spec/formats/file-naming.md):

* a broker's log directories: ``<topic>-<partition>/<20-digit base offset>.log`` with its
  ``.index`` beside it. Directories named ``-delete``, ``-future`` or ``-stray`` are left
  out (their data is a copy of, or was removed from, a live partition), as are
  ``.deleted``/``.cleaned``/``.swap`` files, KRaft ``.checkpoint`` snapshots and the
  ``remote-log-index-cache``. A ``.log`` in a directory whose name is not a partition's is
  read with a null topic and partition.
* a tiered-storage bucket written by Aiven's plugin (tiered.py):
  ``<topic>-<topicId>/<partition>/<offset>-<uuid>.log`` with its ``.rsm-manifest``.

A path may be a file, a partition directory, a log directory or any tree holding them,
locally or behind a URL (storage.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from klogspec.verify import REMOTE_INDEX_CACHE
from reference_impl.errors import KafkaLogError
from reference_impl.formats.file_naming import DirKind, FileKind, classify, parse_partition_dir_name

from . import tiered
from .storage import Listed, list_files


@dataclass(frozen=True)
class Segment:
    """One ``.log`` to read: where it is, what it belongs to, and its offset index.

    ``manifest`` is where the ``.rsm-manifest`` of a tiered-storage object is (None on a
    broker); the object is read only when the manifest says it is the raw segment."""

    log: str
    size: int
    topic: str | None
    partition: int | None
    base_offset: int
    offset_index: str | None = None
    manifest: str | None = None


def _split(path: str) -> list[str]:
    return path.rstrip("/").split("/")


def discover_segments(paths: Iterable[str]) -> list[Segment]:
    """Every segment under ``paths``, by (topic, partition, base offset); a file listed
    twice (overlapping paths) is read once."""
    listed: dict[str, Listed] = {}
    for path in paths:
        for file in list_files(path):
            listed.setdefault(file.path, file)
    segments = [s for file in listed.values() if (s := _segment(file, listed)) is not None]
    return sorted(segments, key=lambda s: (s.topic or "", s.partition or 0, s.base_offset, s.log))


def _segment(file: Listed, listed: dict[str, Listed]) -> Segment | None:
    parts = _split(file.path)
    name, directory = parts[-1], parts[-2] if len(parts) > 1 else ""
    if REMOTE_INDEX_CACHE in parts[:-1]:
        return None
    info = classify(name)
    if info.kind is FileKind.LOG and info.marker is None and info.base_offset is not None:
        try:
            owner = parse_partition_dir_name(directory)
        except KafkaLogError:
            owner = None
        if owner is not None and owner.kind is not DirKind.NORMAL:
            return None
        index = file.path.removesuffix(".log") + ".index"
        return Segment(
            file.path, file.size, owner.topic if owner else None,
            owner.partition if owner else None, info.base_offset,
            offset_index=index if index in listed else None,
        )  # fmt: skip
    remote = tiered.parse_segment_key(parts)
    if remote is not None:
        topic, partition, base_offset = remote
        manifest = tiered.manifest_path(file.path)  # read (or found missing) by the reader
        return Segment(file.path, file.size, topic, partition, base_offset, manifest=manifest)
    return None
