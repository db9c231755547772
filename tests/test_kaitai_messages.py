"""The Kaitai description of offset commits (kaitai/kafka_offset_commit.ksy) and the
table-driven decoder (reference_impl/messages) read every offset commit alike: two
independent readings of spec/formats/internal-topics/consumer-offsets.md."""

from __future__ import annotations

import struct
from io import BytesIO

import pytest
from kaitaistruct import KaitaiStream, ValidationNotAnyOfError

from kaitai.generated.kafka_offset_commit import KafkaOffsetCommit
from reference_impl.messages import decode_record, decoder_for
from reference_impl.records import iter_file_batches

OFFSETS = decoder_for("offsets", None)


def kaitai_fields(key: bytes, value: bytes | None) -> dict:
    parsed = KafkaOffsetCommit.from_bytes(key)
    out = {"group": parsed.group.value, "topic": parsed.topic.value, "partition": parsed.partition}
    if value is None:
        return out
    v = KafkaOffsetCommit.Value(KaitaiStream(BytesIO(value)))
    metadata = v.metadata16 if v.version < 4 else v.metadata_compact
    out |= {"version": v.version, "offset": v.offset, "metadata": metadata.value,
            "commitTimestamp": v.commit_timestamp}  # fmt: skip
    if v.version >= 3:
        out["leaderEpoch"] = v.leader_epoch
    if v.version == 1:
        out["expireTimestamp"] = v.expire_timestamp
    return out


def reference_fields(key: bytes, value: bytes | None) -> dict:
    k, v = decode_record(OFFSETS, key, value)
    out = {name: k[name] for name in ("group", "topic", "partition")}
    if v is not None:
        out |= {name: val for name, val in v.items() if name not in ("type", "topicId")}
    return out


def s16(text: str) -> bytes:
    return struct.pack(">h", len(text)) + text.encode()


@pytest.mark.req("COFF-1", "MSG-5")
def test_a_flexible_value_with_a_tagged_topic_id():
    key = struct.pack(">h", 1) + s16("g") + s16("t") + struct.pack(">i", 3)
    value = (
        struct.pack(">hqi", 4, 9, 2) + b"\x02m" + struct.pack(">q", 5) + b"\x01\x00\x10" + bytes(16)
    )
    assert kaitai_fields(key, value) == reference_fields(key, value)
    with pytest.raises(ValidationNotAnyOfError):
        KafkaOffsetCommit.from_bytes(struct.pack(">h", 2) + s16("g"))


@pytest.mark.req("COFF-1", "COFF-2")
def test_every_corpus_offset_commit_reads_alike(corpus):
    compared = 0
    for path in sorted(corpus.rglob("__consumer_offsets-*/*.log")):
        with open(path, "rb") as handle:
            for batch in iter_file_batches(handle):
                if batch.is_control:
                    continue
                for record in batch.records():
                    if record.key is None or record.key[:2] not in (b"\x00\x00", b"\x00\x01"):
                        continue
                    assert kaitai_fields(record.key, record.value) == reference_fields(
                        record.key, record.value
                    ), (path, record.offset)
                    compared += 1
    assert compared == 9111  # every offset commit of the corpus (tests/test_messages_corpus.py)
