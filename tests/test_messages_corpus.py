"""Every record of the real-broker corpus's internal-topic partitions, KRaft snapshots and
bootstrap snapshots decodes with a known type (issue 23's measure): __consumer_offsets from
Kafka 0.10.1 to 4.0, __transaction_state, and __cluster_metadata from 3.4 to 4.0."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from reference_impl.messages import decode_record, decoder_for
from reference_impl.records import iter_file_batches

# records per corpus set, as counted when the decoders were written (a set that grows or
# shrinks should be looked at, not silently accepted)
EXPECTED = {
    "kafka-0.10.1-magic1": 860,
    "kafka-2.7-compacted-offsets": 16,
    "kafka-2018-offsets-index": 8202,
    "kraft-3.5.0-and-ksql-txn": 45350,
    "kraft-ksql-transactional": 597,
    "kraft-metadata-multiseg": 55988,
    "kraft-snapshots-idempotent": 475,
    "snappy-kraft-nonzero-base": 7325,
    "snappy-v2": 69,
}


def internal_files(root: Path):
    """(set, topic, file) of each batch file of an internal topic's partition directory, each
    KRaft snapshot and each bootstrap snapshot."""
    for path in sorted(root.rglob("*")):
        if path.name == "bootstrap.checkpoint":
            yield path.relative_to(root).parts[0], "__cluster_metadata", path
        elif path.suffix in (".log", ".checkpoint") and path.parent.name.startswith("__"):
            topic = path.parent.name.rsplit("-", 1)[0]
            if decoder_for("auto", topic) is not None:
                yield path.relative_to(root).parts[0], topic, path


@pytest.mark.req("MSG-8", "MSG-9", "MSG-10", "MSG-11")
def test_every_corpus_record_of_an_internal_topic_decodes(corpus):
    counts, types, failures = Counter(), Counter(), []
    for corpus_set, topic, path in internal_files(corpus):
        decoder = decoder_for("auto", topic)
        with open(path, "rb") as handle:
            for batch in iter_file_batches(handle):
                for record in batch.records():
                    sides = decode_record(
                        decoder, record.key, record.value, control=batch.is_control
                    )
                    counts[corpus_set] += 1
                    for side in sides:
                        if side is not None and "decode_error" in side:
                            failures.append((str(path), record.offset, side["decode_error"]))
                        elif side is not None:
                            types[side["type"]] += 1
    assert failures == []
    assert dict(counts) == EXPECTED
    # the record types the corpus holds, old protocol and KRaft alike
    assert {"OffsetCommitValue", "GroupMetadataValue", "TransactionLogValue", "TopicRecord",
            "PartitionRecord", "PartitionChangeRecord", "RegisterBrokerRecord",
            "FeatureLevelRecord", "LeaderChangeMessage", "SnapshotHeaderRecord",
            "SnapshotFooterRecord"} <= set(types)  # fmt: skip
