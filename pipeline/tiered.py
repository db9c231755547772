"""Segments copied to tiered storage (KIP-405) by Aiven's RemoteStorageManager.

Aiven-Open/tiered-storage-for-apache-kafka stores each segment as objects keyed
[ObjectKeyFactory.java]::

    <prefix><topic>-<topicId>/<partition>/<20-digit start offset>-<segmentUuid>.<suffix>

with suffixes ``log`` (the segment), ``indexes`` (all its indexes in one object; older
versions wrote ``index``, ``timeindex``... separately) and ``rsm-manifest``, a JSON
``SegmentManifestV1``: ``chunkIndex``, ``segmentIndexes``, ``compression`` (bool) and an
optional ``encryption``. The ``.log`` object is the segment's bytes unchanged only when
``compression`` is false and there is no ``encryption``; otherwise it is a sequence of
transformed (zstd-compressed and/or AES-GCM-encrypted) chunks, which this pipeline does not
decode: such a segment is reported as unreadable, never misread.
"""

from __future__ import annotations

import json
import re

SEGMENT_OBJECT = re.compile(r"^(\d{20})-([A-Za-z0-9_-]{22})\.log$")
TOPIC_DIR = re.compile(r"^(.+)-([A-Za-z0-9_-]{22})$")  # <topic>-<topicId>
MANIFEST_SUFFIX = ".rsm-manifest"


def parse_segment_key(parts: list[str]) -> tuple[str, int, int] | None:
    """(topic, partition, start offset) of an Aiven ``.log`` object from the last three
    components of its key, or None when the key is not in that layout."""
    if len(parts) < 3:
        return None
    topic_dir, partition, name = parts[-3:]
    segment, topic = SEGMENT_OBJECT.match(name), TOPIC_DIR.match(topic_dir)
    if segment is None or topic is None or not partition.isdigit():
        return None
    return topic.group(1), int(partition), int(segment.group(1))


def manifest_path(log_path: str) -> str:
    return log_path.removesuffix(".log") + MANIFEST_SUFFIX


def transform_problem(manifest: bytes) -> str | None:
    """Why the ``.log`` object next to this manifest is not the raw segment, or None."""
    try:
        data = json.loads(manifest)
    except ValueError as exc:
        return f"the .rsm-manifest is not JSON ({exc})"
    if not isinstance(data, dict):
        return "the .rsm-manifest is not a JSON object"
    if data.get("encryption"):
        return "the segment object is encrypted (AES-GCM chunks): not supported"
    if data.get("compression"):
        return "the segment object is zstd-compressed per chunk: not supported"
    return None
