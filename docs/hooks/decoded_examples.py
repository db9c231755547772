"""The CLI page's decoded dumps, one per internal topic: a record of each topic written with
reference_impl/messages/message_writer.py into a partition directory of its own, then dumped by
``klogspec dump --decode auto --json`` when the site is built, so the page shows what the
command prints today."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from click.testing import CliRunner

TOPIC_ID = "0CM0rYlfQiqSTCH-x54Zhw"


def _records():
    """(partition directory, key, value) of one record per internal topic."""
    from reference_impl.messages import (
        cluster_metadata,
        consumer_offsets,
        remote_log_metadata,
        share_group_state,
        transaction_state,
    )
    from reference_impl.messages.message_writer import coordinator_record, metadata_value

    commit = {"offset": 42, "leaderEpoch": 7, "metadata": "", "commitTimestamp": 1767225600000}
    txn = {"ProducerId": 1000, "ProducerEpoch": 3, "TransactionTimeoutMs": 60000,
           "TransactionStatus": 1, "TransactionPartitions": [{"Topic": "orders", "PartitionIds": [0, 1]}],
           "TransactionLastUpdateTimestampMs": 1767225600000,
           "TransactionStartTimestampMs": 1767225600000}  # fmt: skip
    share = {"SnapshotEpoch": 3, "LeaderEpoch": 5, "StartOffset": 100,
             "StateBatches": [{"FirstOffset": 100, "LastOffset": 109, "DeliveryState": 2,
                               "DeliveryCount": 1}]}  # fmt: skip
    remote = {"TopicIdPartition": {"Name": "orders", "Id": TOPIC_ID, "Partition": 0},
              "BrokerId": 1, "EventTimestampMs": 1767225600000, "RemotePartitionDeleteState": 0}  # fmt: skip
    return [
        ("__consumer_offsets-13", *coordinator_record(
            consumer_offsets.TABLE, 1, {"group": "billing", "topic": "orders", "partition": 0}, 3, commit)),
        ("__transaction_state-7", *coordinator_record(
            transaction_state.TABLE, 0, {"TransactionalId": "payments-1"}, 0, txn)),
        ("__cluster_metadata-0", None, metadata_value(
            cluster_metadata.TABLE, 2, 0, {"Name": "orders", "TopicId": TOPIC_ID})),
        ("__remote_log_metadata-3", None, metadata_value(remote_log_metadata.TABLE, 2, 0, remote)),
        ("__share_group_state-11", *coordinator_record(
            share_group_state.TABLE, 1, {"GroupId": "g", "TopicId": TOPIC_ID, "Partition": 0}, 0, share)),
    ]  # fmt: skip


def decoded_dumps_section() -> list[str]:
    from klogspec import cli
    from reference_impl.records import SimpleRecord, build_record_batch

    out = [
        "## Decoded dumps, one per internal topic",
        "",
        "`klogspec dump --decode auto --json` on a one-record segment of each internal topic "
        "(written when this page was built); each record's `key_decoded` and `value_decoded`, "
        "as the command prints them. The guide [Decoding internal topics](internal-topics.md) "
        "has dumps of real brokers' files.",
        "",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for directory, key, value in _records():
            log = Path(tmp) / directory / "00000000000000000000.log"
            log.parent.mkdir()
            log.write_bytes(build_record_batch([SimpleRecord(value, key, 1767225600000)]))
            result = CliRunner().invoke(cli.main, ["dump", "--decode", "auto", "--json", str(log)])
            record = json.loads(result.stdout.splitlines()[0])["records"][0]
            sides = [f'"{k}": {json.dumps(record[k])}' for k in ("key_decoded", "value_decoded")]
            out += [f"`{directory}/00000000000000000000.log`:", "", "```text", *sides, "```", ""]
    return out
