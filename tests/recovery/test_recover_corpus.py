"""``klogspec recover`` on copies of real broker directories (the corpus), damaged on purpose."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from klogspec.recover.cli import recover as recover_command
from klogspec.verify.findings import Severity
from klogspec.verify.run import verify_paths

MULTISEG = "kafka-3.x-3brokers-multiseg/tmp/kafka-logs"
FLIPPED = "00000000000000060611.log"
FLIP_AT = 490950 + 100  # inside the batch at 490950 (offsets 75491...)


def copy_log_dir(corpus: Path, relative: str, to: Path) -> Path:
    """A writable copy of a corpus log directory (the corpus itself is never changed)."""
    target = to / Path(relative).name
    shutil.copytree(corpus / relative, target)
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target


def flip(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0xFF
    path.write_bytes(bytes(data))


def run(*args, expect: int):
    result = CliRunner().invoke(recover_command, [*map(str, args), "--yes"], catch_exceptions=False)
    assert result.exit_code == expect, result.output
    return result


@pytest.mark.corpus
@pytest.mark.req("RECOV-16", "LOAD-13", "LOAD-14")
@pytest.mark.parametrize(
    "flipped, position, removed, deleted_indexes",
    [
        # issue 16: segment 90867 has no .index (the corpus lacks its 10 MiB file): its load
        # rebuilds one (LOAD-13), which the cut in 60611 then deletes, trimmed (RECOV-4)
        (FLIPPED, FLIP_AT, [], {"00000000000000090867.index": 152}),
        # 60611 without its .timeindex: the load creates it, empty (LOAD-14), and the cut in
        # 30626 deletes it
        ("00000000000000030626.log", 5000, ["00000000000000060611.timeindex"],
         {"00000000000000060611.timeindex": 0, "00000000000000090867.index": 152}),
    ],
)  # fmt: skip
def test_later_segments_with_indexes_the_load_makes(
    corpus, tmp_path, flipped, position, removed, deleted_indexes
):
    """The plan used to stat, on disk, an index only its own load makes, and exited 2
    ("No such file or directory"), with and without --dry-run."""
    logs = copy_log_dir(corpus, MULTISEG, tmp_path)
    partition = logs / "invoice-0"
    assert not (partition / "00000000000000090867.index").exists()
    for name in removed:
        (partition / name).unlink()
    flip(partition / flipped, position)
    dry = json.loads(run(partition, "--dry-run", "--from-offset", 0, "--json", expect=1).output)
    real = json.loads(run(partition, "--from-offset", 0, "--json", expect=1).output)
    assert real["mode"] == "recovered" and real["actions"] == dry["actions"]
    deleted = {a["file"]: a["bytes"] for a in real["actions"] if a["action"] == "delete"}
    assert deleted.items() >= deleted_indexes.items()
    manifest = json.loads((Path(real["quarantine"]) / "manifest.json").read_text())
    stored = {e["file"]: e["bytes"] for e in manifest["entries"] if e["action"] == "delete"}
    assert stored == deleted  # the sizes planned are the sizes the loader deleted
    assert [f for f in verify_paths([logs]) if f.severity is not Severity.INFO] == []


SECOND = "00000000000000030626.log"


@pytest.mark.corpus
@pytest.mark.req("RECOV-24", "RECOV-27")
def test_one_flipped_byte_in_the_second_segment(corpus, tmp_path):
    """Issue 20's case: a byte flipped in the batch holding offset 45235 of invoice-0's second
    segment. Kafka's recovery (RECOV-3, RECOV-5) removes offsets [45235, 100294): 55,059
    records, the two later segments intact among them. recover states it and, without a
    terminal or --yes, changes nothing; with --yes it recovers, and salvage gives back every
    intact record, as the original files hold it."""
    import base64

    from klogspec.recover.salvage_cli import salvage as salvage_command
    from reference_impl.records import iter_file_batches

    logs = copy_log_dir(corpus, MULTISEG, tmp_path)
    partition = logs / "invoice-0"
    originals = {}  # offset -> (key, value, timestamp) of the records after the flip
    for name in sorted(p.name for p in partition.glob("*.log")):
        with open(partition / name, "rb") as handle:
            for batch in iter_file_batches(handle):
                if batch.last_offset >= 45235:
                    if batch.base_offset <= 45235:
                        damaged = (name, batch.position, batch.records_count)
                    for r in batch.records():
                        originals[r.offset] = (r.key, r.value, r.timestamp)
    assert damaged[0] == SECOND and len(originals) == 55059
    flip(partition / SECOND, damaged[1] + 100)
    refused = CliRunner().invoke(recover_command, [str(partition), "--from-offset", "0"])
    assert refused.exit_code == 2 and "nothing changed" in refused.output
    intact = 55059 - damaged[2]
    assert (
        f"removes {intact} intact records and 16365 damaged bytes, offsets [45235, 100294)"
        in refused.output
    )
    assert "2 intact segments are deleted only because they follow the damage" in refused.output
    report = json.loads(run(partition, "--from-offset", 0, "--json", expect=1).output)
    assert report["logEndOffset"] == 45235
    assert report["loss"]["intactSegments"] == [
        "00000000000000060611.log", "00000000000000090867.log",
    ]  # fmt: skip
    out = tmp_path / "invoice-0.jsonl"
    salvaged = CliRunner().invoke(salvage_command, [str(partition), "--out", str(out)])
    assert salvaged.exit_code == 1, salvaged.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == intact
    assert [line["offset"] for line in lines] == sorted(
        o for o in originals if o >= 45235 + damaged[2]
    )
    for line in lines[::997]:  # a sample across all three files
        key, value, timestamp = originals[line["offset"]]
        assert base64.b64decode(line["key"]) == key and base64.b64decode(line["value"]) == value
        assert line["timestamp"] == timestamp
