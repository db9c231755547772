"""``klogspec verify --deep`` on internal topics: each record of ``__consumer_offsets``,
``__transaction_state``, ``__cluster_metadata`` (log and snapshots), ``__remote_log_metadata``
and ``__share_group_state`` must be the message its framing announces
(spec/formats/internal-topics/message-encoding.md, MSG-1 to MSG-11; a coordinator loading
the partition fails on a record it cannot read, as GroupCoordinatorRecordSerde.java and
MetadataRecordSerde.java throw)."""

from __future__ import annotations

from pathlib import PurePosixPath

from reference_impl.errors import KafkaLogError
from reference_impl.formats.file_naming import parse_partition_dir_name
from reference_impl.formats.kraft_snapshots import METADATA_TOPIC
from reference_impl.messages import RecordDecoder, decode_record, decoder_for

from .findings import Findings, Severity


def internal_topic_decoder(log: str) -> RecordDecoder | None:
    """The decoder of the internal topic a batch file (a path or URL) belongs to: KRaft and
    bootstrap snapshots are ``__cluster_metadata``'s, a segment its partition directory's."""
    path = PurePosixPath(log)
    if path.name.endswith(".checkpoint"):
        return decoder_for("auto", METADATA_TOPIC)
    try:
        return decoder_for("auto", parse_partition_dir_name(path.parent.name).topic)
    except KafkaLogError:
        return None


def check_record_meanings(decoder: RecordDecoder, batch, records, findings: Findings) -> None:
    """MSG-12's reasons as findings: one per record whose key or value does not decode."""
    for record in records:
        sides = decode_record(decoder, record.key, record.value, control=batch.is_control)
        for side, name in zip(sides, ("key", "value"), strict=True):
            if side is not None and "decode_error" in side:
                error = side["decode_error"]
                findings.add(
                    error["rule"], Severity.ERROR, batch.file,
                    f"the record's {name} is not a {decoder.topic} message: {error['reason']}",
                    position=batch.position, offset=record.offset,
                )  # fmt: skip
                break
