"""``klogspec dump --decode``: each record's key and value as the Kafka message it holds, when
the file belongs to an internal topic (reference_impl/messages;
spec/formats/internal-topics/message-encoding.md §4). The superset of kafka-dump-log's
``--offsets-decoder``, ``--transaction-log-decoder``, ``--cluster-metadata-decoder``,
``--remote-log-metadata-decoder`` and ``--share-group-state-decoder``."""

from __future__ import annotations

from pathlib import Path

from reference_impl.errors import KafkaLogError
from reference_impl.formats.file_naming import FileKind, parse_partition_dir_name
from reference_impl.formats.kraft_snapshots import METADATA_TOPIC
from reference_impl.messages import RecordDecoder, decode_record, decoder_for

from .file_dump import FileDump

# kept in the summary, so that a file of errors does not make it huge
_ERROR_EXAMPLES = 10


def file_topic(dump: FileDump) -> str | None:
    """The topic a file's records belong to: a KRaft snapshot's and the bootstrap
    snapshot's are ``__cluster_metadata``'s; a segment's, its partition directory's (the
    nearest parent whose name is one, so that a quarantined piece keeps its partition)."""
    if dump.info.kind in (FileKind.KRAFT_SNAPSHOT, FileKind.BOOTSTRAP_SNAPSHOT):
        return METADATA_TOPIC
    for parent in Path(dump.path).resolve().parents:
        try:
            return parse_partition_dir_name(parent.name).topic
        except KafkaLogError:
            continue
    return None


def record_decoder(dump: FileDump) -> RecordDecoder | None:
    """The decoder ``--decode`` names (``auto``: by the file's topic), None when there is none;
    the summary says which, so that a reader knows why records were or were not decoded."""
    name = dump.options.decode
    if name == "none":
        return None
    decoder = decoder_for(name, file_topic(dump))
    dump.summary["decoded"] = {
        "decoder": None if decoder is None else decoder.name,
        "records": 0,
        "errors": 0,
        "errorExamples": [],
    }
    return decoder


def add_decoded(dump: FileDump, decoder: RecordDecoder, record, control: bool, item: dict) -> None:
    """MSG-12: ``key_decoded`` and ``value_decoded`` on a record's dict; a side that does not
    decode keeps its bytes in base64 with ``decode_error``, and counts as an error of the file."""
    key, value = decode_record(decoder, record.key, record.value, control=control)
    item["key_decoded"], item["value_decoded"] = key, value
    decoded = dump.summary["decoded"]
    decoded["records"] += 1
    failed = [side for side in (key, value) if side is not None and "decode_error" in side]
    if failed:
        decoded["errors"] += 1
        if len(decoded["errorExamples"]) < _ERROR_EXAMPLES:
            decoded["errorExamples"].append({"offset": record.offset, **failed[0]["decode_error"]})
