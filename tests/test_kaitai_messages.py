"""The Kaitai descriptions of offset commits and KRaft control records
(kaitai/kafka_offset_commit.ksy, kafka_kraft_control.ksy) and the
table-driven decoder (reference_impl/messages) read every offset commit and every KRaft control
record of the corpus alike: two independent readings of spec/formats/internal-topics/."""

from __future__ import annotations

import struct
from io import BytesIO

import pytest
from kaitaistruct import KaitaiStream, ValidationNotAnyOfError

from kaitai.generated.kafka_kraft_control import KafkaKraftControl
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


def kaitai_control(control_type: str, value: bytes) -> dict:
    stream = KaitaiStream(BytesIO(value))
    if control_type == "LEADER_CHANGE":
        v = KafkaKraftControl(stream)
        voters = [
            [{"VoterId": x.voter_id} for x in vs.voters] for vs in (v.voters, v.granting_voters)
        ]
        return {"Version": v.version, "LeaderId": v.leader_id, "Voters": voters[0],
                "GrantingVoters": voters[1]}  # fmt: skip
    if control_type == "SNAPSHOT_HEADER":
        v = KafkaKraftControl.SnapshotHeader(stream)
        return {"Version": v.version, "LastContainedLogTimestamp": v.last_contained_log_timestamp}
    if control_type == "SNAPSHOT_FOOTER":
        return {"Version": KafkaKraftControl.SnapshotFooter(stream).version}
    v = KafkaKraftControl.KraftVersion(stream)
    return {"Version": v.version, "KRaftVersion": v.kraft_version}


@pytest.mark.req("MSG-11", "META-2")
def test_every_corpus_kraft_control_record_reads_alike(corpus):
    metadata, seen = decoder_for("metadata", None), set()
    files = [*corpus.rglob("__cluster_metadata-0/*.log"), *corpus.rglob("*.checkpoint")]
    for path in sorted(files):
        with open(path, "rb") as handle:
            for batch in iter_file_batches(handle):
                if not batch.is_control:
                    continue
                for record in batch.records():
                    key, value = decode_record(metadata, record.key, record.value, control=True)
                    fields = {k: v for k, v in value.items() if k not in ("type", "version")}
                    assert kaitai_control(key["controlType"], record.value) == fields, path
                    seen.add(key["controlType"])
    assert seen == {"LEADER_CHANGE", "SNAPSHOT_HEADER", "SNAPSHOT_FOOTER"}


def test_a_kraft_version_record_reads_alike():
    value = struct.pack(">hh", 0, 1) + b"\x00"
    key, decoded = decode_record(
        decoder_for("metadata", None), struct.pack(">hh", 0, 5), value, control=True
    )
    assert kaitai_control("KRAFT_VERSION", value) == {"Version": 0, "KRaftVersion": 1}
    assert decoded == {"type": "KRaftVersionRecord", "version": 0, "Version": 0, "KRaftVersion": 1}
