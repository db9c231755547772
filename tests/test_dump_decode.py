"""``klogspec dump --decode``: internal topics' keys and values as Kafka's messages, in JSON
and in text, and a record that does not decode kept in base64 with the reason
(spec/formats/internal-topics/message-encoding.md §4)."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from klogspec import cli
from reference_impl.records import SimpleRecord, build_record_batch


def run(*args, expect: int):
    result = CliRunner().invoke(cli.main, ["dump", *map(str, args)], catch_exceptions=False)
    assert result.exit_code == expect, result.output
    return result


def records_of(output: str) -> list[dict]:
    events = [json.loads(line) for line in output.splitlines()]
    return [r for e in events if e["type"] == "batch" for r in e["records"]]


def s16(text: str) -> bytes:
    return struct.pack(">h", len(text)) + text.encode()


KEY = struct.pack(">h", 1) + s16("g1") + s16("orders") + struct.pack(">i", 0)
VALUE = struct.pack(">hqi", 3, 42, 7) + s16("") + struct.pack(">q", 1_700_000_000_000)
BAD_VALUE = struct.pack(">h", 7) + b"\x00" * 4  # OffsetCommitValue has no version 7


@pytest.fixture
def offsets_dir(tmp_path: Path) -> Path:
    partition = tmp_path / "__consumer_offsets-7"
    partition.mkdir()
    records = [
        SimpleRecord(VALUE, KEY, 1),
        SimpleRecord(None, KEY, 2),
        SimpleRecord(BAD_VALUE, KEY, 3),
    ]
    (partition / "00000000000000000000.log").write_bytes(build_record_batch(records))
    return partition


@pytest.mark.req("MSG-12", "MSG-13")
def test_json_carries_key_decoded_and_value_decoded(offsets_dir):
    result = run("--json", "--decode", "auto", offsets_dir / "00000000000000000000.log", expect=1)
    good, tombstone, bad = records_of(result.stdout)
    assert good["key_decoded"] == {"type": "OffsetCommitKey", "version": 1, "group": "g1",
                                   "topic": "orders", "partition": 0}  # fmt: skip
    assert good["value_decoded"]["type"] == "OffsetCommitValue"
    assert good["value_decoded"]["version"] == 3 and good["value_decoded"]["offset"] == 42
    assert tombstone["value_decoded"] is None
    error = bad["value_decoded"]["decode_error"]
    assert error["rule"] == "MSG-7" and "no version 7" in error["reason"]
    assert base64.b64decode(bad["value_decoded"]["base64"]) == BAD_VALUE
    summary = json.loads(result.stdout.splitlines()[-1])
    assert summary["decoded"]["decoder"] == "offsets"
    assert summary["decoded"]["records"] == 3 and summary["decoded"]["errors"] == 1
    assert summary["decoded"]["errorExamples"][0]["offset"] == 2
    assert summary["ok"] is False


@pytest.mark.req("MSG-12")
def test_text_prints_the_messages_and_says_what_did_not_decode(offsets_dir):
    out = run("--decode", "auto", "--no-progress", offsets_dir, expect=1).stdout
    assert 'key_decoded: {"type":"OffsetCommitKey","version":1,"group":"g1"' in out
    assert "value_decoded: null" in out
    assert "3 records decoded (offsets), 1 did not decode (first at offset 2" in out


def test_without_decode_nothing_changes(offsets_dir):
    result = run("--json", "--deep", offsets_dir / "00000000000000000000.log", expect=0)
    assert all("key_decoded" not in r for r in records_of(result.stdout))
    assert "decoded" not in json.loads(result.stdout.splitlines()[-1])


def test_a_named_decoder_reads_any_topic_and_auto_leaves_other_topics(tmp_path):
    partition = tmp_path / "orders-0"
    partition.mkdir()
    log = partition / "00000000000000000000.log"
    log.write_bytes(build_record_batch([SimpleRecord(VALUE, KEY, 1)]))
    result = run("--json", "--decode", "offsets", log, expect=0)
    assert records_of(result.stdout)[0]["key_decoded"]["type"] == "OffsetCommitKey"
    result = run("--json", "--decode", "auto", log, expect=0)
    assert "key_decoded" not in records_of(result.stdout)[0]
    assert json.loads(result.stdout.splitlines()[-1])["decoded"]["decoder"] is None


def test_the_cli_page_shows_a_decoded_dump_per_internal_topic():
    """docs/hooks/decoded_examples.py runs the command on a record of each topic at build time."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "hooks"))
    from decoded_examples import decoded_dumps_section

    page = "\n".join(decoded_dumps_section())
    for message in ("OffsetCommitValue", "TransactionLogValue", "TopicRecord",
                    "RemotePartitionDeleteMetadataRecord", "ShareUpdateValue"):  # fmt: skip
        assert f'"type": "{message}"' in page
    assert "decode_error" not in page


@pytest.mark.req("MSG-7", "MSG-12")
def test_verify_deep_reports_a_record_that_is_not_its_topics_message(offsets_dir):
    result = CliRunner().invoke(cli.main, ["verify", "--deep", "--json", str(offsets_dir)])
    findings = [json.loads(line) for line in result.stdout.splitlines()][:-1]
    bad = [f for f in findings if f["rule"].startswith("MSG-")]
    assert [(f["rule"], f["offset"], f["severity"]) for f in bad] == [("MSG-7", 2, "error")]
    assert (
        "is not a __consumer_offsets message: OffsetCommitValue has no version 7"
        in bad[0]["message"]
    )
    assert result.exit_code == 1
    shallow = CliRunner().invoke(cli.main, ["verify", "--json", str(offsets_dir)])
    assert "MSG-" not in shallow.stdout
