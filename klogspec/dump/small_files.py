"""``klogspec dump`` of the small files: producer ``.snapshot`` files, the text checkpoints,
``partition.metadata``, ``meta.properties``, ``.kafka_cleanshutdown`` and KRaft's
``quorum-state`` (spec/formats/producer-snapshot.md, checkpoint-files.md,
internal-topics/cluster-metadata.md)."""

from __future__ import annotations

from collections.abc import Iterator

from reference_impl.errors import CorruptCheckpointError, CorruptSnapshotError, KafkaLogError
from reference_impl.formats import checkpoints
from reference_impl.formats.producer_snapshot import read_snapshot, snapshot_trailing_bytes
from reference_impl.messages import MessageDecodeError
from reference_impl.messages.quorum_state import read_quorum_state

from .file_dump import FileDump, event_fields


def dump_producer_snapshot(dump: FileDump) -> Iterator[dict]:
    data = dump.read_bytes()
    try:
        entries = read_snapshot(data, file=dump.file)
    except KafkaLogError as exc:
        dump.error(exc)
        return
    trailing = snapshot_trailing_bytes(data)
    dump.summary.update(validBytes=len(data) - trailing, trailingBytes=trailing)
    if trailing:  # Kafka reads past them (the CRC covers them), but never writes any (SNAP-8)
        dump.error(CorruptSnapshotError(f"{trailing} bytes after the last entry", position=0))
    for entry in entries:
        yield {"type": "producer_snapshot_entry", **event_fields(entry),
               "firstSequence": entry.first_sequence}  # fmt: skip


def text_dumper(read, event_type: str, many: bool = True):
    def dumper(dump: FileDump) -> Iterator[dict]:
        try:
            content = read(dump.read_bytes(), file=dump.file)
        except KafkaLogError as exc:
            dump.error(exc)
            return
        for item in content if many else [content]:
            yield {"type": event_type, **event_fields(item)}

    return dumper


def dump_properties(dump: FileDump) -> Iterator[dict]:
    try:
        properties = checkpoints.read_meta_properties(dump.read_bytes(), file=dump.file)
    except KafkaLogError as exc:
        dump.error(exc)
        return
    for key, value in properties.items():
        yield {"type": "property", "key": key, "value": value}


def dump_quorum_state(dump: FileDump) -> Iterator[dict]:
    """A KRaft ``quorum-state`` file (KRAFT-5 to KRAFT-7): its election state as one event."""
    try:
        state = read_quorum_state(dump.path.read_text(encoding="utf-8", errors="replace"))
    except MessageDecodeError as exc:
        dump.error(CorruptCheckpointError(f"{exc.reason} ({exc.rule})", position=0))
        return
    yield {"type": "quorum_state", **state}
