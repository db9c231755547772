"""``klogspec recover``: exit statuses, the dry run, the quarantine folder and its manifest, the
JSON report, log directories of several partitions, and ``klogspec verify`` after it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from klogspec.recover.cli import recover as recover_command
from klogspec.recover.journal import MANIFEST
from klogspec.recover.quarantine import QUARANTINE_DIR
from klogspec.verify.findings import Severity
from klogspec.verify.run import verify_paths
from reference_impl.log.clock import ManualClock
from reference_impl.log.config import LogConfig
from reference_impl.records import SimpleRecord, build_record_batch

from .support import MOCK_TIME_START, files_of, open_log, partition_dir, record

CONFIG = LogConfig(segment_bytes=400, index_interval_bytes=100, segment_index_bytes=1024)
TOOL = ["--index-interval-bytes", "100", "--segment-index-bytes", "1024", "--yes"]


def run(*args, expect: int | None = None):
    result = CliRunner().invoke(recover_command, [*map(str, args), *TOOL], catch_exceptions=False)
    if expect is not None:
        assert result.exit_code == expect, result.output
    return result


def build(root: Path, n: int = 30, close: bool = True) -> Path:
    """A log of ``n`` one-record batches, flushed at 20, closed or crashed."""
    clock = ManualClock(MOCK_TIME_START)
    log = open_log(root, clock, CONFIG, clean=None, recovery_point=None)
    for i in range(n):
        log.append_as_leader(record(b"order-%d" % i, clock.milliseconds()), i // 10)
        clock.sleep(5)
        if i == 20:
            log.flush()
    if close:
        log.close()
    else:
        log.crash()
    return partition_dir(root)


def serious(root: Path) -> list:
    return [f for f in verify_paths([root]) if f.severity is not Severity.INFO]


def flip(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0x10
    path.write_bytes(bytes(data))


@pytest.mark.req("RECOV-17")
def test_a_clean_directory_needs_nothing(tmp_path):
    dir = build(tmp_path)
    before = files_of(tmp_path)
    result = run(dir, expect=0)
    assert "nothing to do" in result.output
    run(dir, "--dry-run", expect=0)
    run(dir, "--from-offset", 0, expect=0)
    # only the log directory's lock file is new: a real run locks it, creating it as a broker
    # would (RECOV-22)
    assert files_of(tmp_path) == {**before, ".lock": b""}


@pytest.mark.req("RECOV-14", "RECOV-15", "RECOV-16", "RECOV-17", "RECOV-13")
def test_dry_run_then_recover_then_verify(tmp_path):
    dir = build(tmp_path, close=False)
    segments = sorted(dir.glob("*.log"))
    flip(segments[-2], 200)
    segments[-1].write_bytes(segments[-1].read_bytes() + bytes(64))
    (dir / "00000000000000000003.log.deleted").write_bytes(b"stale")
    before = files_of(tmp_path)
    dry = run(dir, "--from-offset", 0, "--dry-run", "--json", expect=1)
    assert files_of(tmp_path) == before  # RECOV-16: a dry run changes nothing
    planned = json.loads(dry.output)
    real = run(dir, "--from-offset", 0, "--json", expect=1)
    report = json.loads(real.output)
    assert report["mode"] == "recovered" and planned["mode"] == "dry-run"
    assert report["actions"] == planned["actions"]
    kinds = [
        (a["action"], a["file"]) for a in report["actions"] if a["action"] in ("truncate", "delete")
    ]
    # the stale file first (LOAD-6); the active segment's untrimmed time index fails LOAD-16, so
    # it is recovered (its zeros cut) while loading; then the flipped batch ends the log
    assert kinds[:3] == [
        ("delete", "00000000000000000003.log.deleted"),
        ("truncate", segments[-1].name),
        ("truncate", segments[-2].name),
    ]
    assert ("delete", segments[-1].name) in kinds
    folder = Path(report["quarantine"])
    assert folder.parent == dir / QUARANTINE_DIR
    manifest = json.loads((folder / MANIFEST).read_text())
    kept = [(e["action"], e["file"]) for e in manifest["entries"] if e["action"] != "snapshot"]
    assert kept == kinds
    cut = manifest["entries"][2]
    assert (folder / cut["stored"]).read_bytes() == before[f"topic-0/{segments[-2].name}"][
        cut["position"] :
    ]
    assert cut["error"] == "crc_mismatch" and cut["offsets"][0] < cut["offsets"][1]
    assert serious(tmp_path) == []
    run(dir, "--from-offset", 0, expect=0)  # done: a second run has nothing to do
    log = open_log(tmp_path, ManualClock(MOCK_TIME_START), CONFIG, clean=False, recovery_point=None)
    assert log.log_end_offset == report["logEndOffset"]  # LOAD-25: the quarantine is no segment
    log.close()


@pytest.mark.req("RECOV-20")
def test_snapshots_the_load_deletes_or_rewrites_are_kept(tmp_path):
    """The flipped batch ends the log early: every producer snapshot above the new end goes
    (SNAP-B-5), and each is in the quarantine folder as it was."""
    clock = ManualClock(MOCK_TIME_START)
    log = open_log(tmp_path, clock, CONFIG, clean=None, recovery_point=None)
    for i in range(30):
        batch = build_record_batch(
            [SimpleRecord(value=b"order-%d" % i, timestamp=clock.milliseconds())],
            producer_id=7, producer_epoch=0, base_sequence=i, partition_leader_epoch=0,
        )  # fmt: skip
        log.append_as_leader(batch, 0)
    log.crash()
    dir = partition_dir(tmp_path)
    before = {p.name: p.read_bytes() for p in dir.glob("*.snapshot")}
    assert len(before) >= 2
    flip(sorted(dir.glob("*.log"))[1], 100)
    report = json.loads(run(dir, "--from-offset", 0, "--json", expect=1).output)
    folder = Path(report["quarantine"])
    entries = json.loads((folder / MANIFEST).read_text())["entries"]
    kept = {e["file"]: e for e in entries if e["action"] == "snapshot"}
    gone = {name for name in before if not (dir / name).exists()}
    assert gone and gone <= set(kept)
    for name in gone:
        assert kept[name]["reason"] == "deleted"
        assert (folder / kept[name]["stored"]).read_bytes() == before[name]


@pytest.mark.req("RECOV-14", "RECOV-1")
def test_the_default_starts_at_the_recovery_point(tmp_path):
    """A bit flip below the recovery point is Kafka's blind spot: the default run, as a broker,
    does not see it (and says so); --from-offset 0 does."""
    dir = build(tmp_path)
    first = sorted(dir.glob("*.log"))[0]
    flip(first, 100)
    result = run(dir, expect=0)  # the recovery point is the LEO: only the active segment
    assert "were not checked" in result.output
    assert [f.rule for f in serious(tmp_path)] == ["BATCH-4"]
    run(dir, "--from-offset", 0, expect=1)
    assert serious(tmp_path) == []


@pytest.mark.req("RECOV-14")
def test_discard_keeps_nothing(tmp_path):
    dir = build(tmp_path, close=False)
    last = sorted(dir.glob("*.log"))[-1]
    last.write_bytes(last.read_bytes() + b"garbage after the last batch")
    result = run(dir, "--discard", "--json", expect=1)
    assert json.loads(result.output)["quarantine"] is None
    assert not (dir / QUARANTINE_DIR).exists()
    assert serious(tmp_path) == []


@pytest.mark.req("RECOV-18")
@pytest.mark.parametrize("close", [True, False])
def test_the_clean_shutdown_marker_is_left_alone(tmp_path, close):
    dir = build(tmp_path, close=close)
    last = sorted(dir.glob("*.log"))[-1]
    last.write_bytes(last.read_bytes() + bytes(100))
    marker = tmp_path / ".kafka_cleanshutdown"
    assert marker.exists() == close
    run(dir, expect=1)
    assert marker.exists() == close


@pytest.mark.req("RECOV-17")
def test_a_log_directory_recovers_each_partition(tmp_path):
    build(tmp_path)
    other = tmp_path / "other-1"
    clock = ManualClock(MOCK_TIME_START)
    from reference_impl.log.loader import LoadOptions
    from reference_impl.log.unified_log import Log

    log = Log.open(other, CONFIG, clock, load=LoadOptions(had_clean_shutdown=False))
    for i in range(5):
        log.append_as_leader(record(b"x%d" % i, clock.milliseconds()), 0)
    log.crash()
    active = sorted(other.glob("*.log"))[-1]
    active.write_bytes(active.read_bytes()[:-7])  # a torn last batch
    (tmp_path / "__cluster_metadata-0").mkdir()
    result = run(tmp_path, "--json", expect=1)
    reports = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
    assert "skipping" in result.output  # the KRaft metadata log is not the log manager's
    assert [(Path(r["partition"]).name, r["exitStatus"]) for r in reports] == [
        ("other-1", 1),
        ("topic-0", 0),
    ]
    assert reports[0]["logEndOffset"] == 4


@pytest.mark.req("RECOV-17", "LOAD-23")
def test_could_not_run(tmp_path):
    assert run(tmp_path, expect=2).exit_code == 2  # no partition
    dir = build(tmp_path / "a")
    (dir / "bogus.log").write_bytes(b"")
    result = run(dir, expect=2)
    assert "no base offset" in result.output
    doomed = tmp_path / "b" / "topic-0.0123456789abcdef0123456789abcdef-delete"
    doomed.mkdir(parents=True)
    assert "queued for deletion" in run(doomed, expect=2).output


class FakeBar:
    """ByteProgress's interface, recording what the command tells it."""

    made: list[FakeBar] = []

    def __init__(self, label, total, console) -> None:
        self.total, self.completed, self.labels = total, 0, [label]
        FakeBar.made.append(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        pass

    def advance(self, amount):
        self.completed += amount

    def update(self, completed):
        self.completed = completed

    def add_total(self, amount):
        self.total += amount

    def describe(self, label):
        self.labels.append(label)


def test_progress_counts_the_bytes_read(tmp_path, monkeypatch):
    """Issue 16: progress on long recoveries. The bar's total is the .log bytes the plan may
    read, grown by what the load reads again; it ends full."""
    import klogspec.recover.cli as cli

    dir = build(tmp_path, close=False)
    flip(sorted(dir.glob("*.log"))[-2], 200)
    logs = sum(p.stat().st_size for p in dir.glob("*.log"))
    monkeypatch.setattr(cli, "ByteProgress", FakeBar)
    FakeBar.made.clear()
    run(dir, "--from-offset", 0, expect=1)
    bar = FakeBar.made[-1]
    assert bar.labels == ["recover", "recover topic-0"]
    assert bar.total > logs  # the plan's pass, then the load's
    assert bar.completed >= bar.total
    run(dir, "--no-progress", expect=0)
    assert FakeBar.made[-1].total == 0  # off: ByteProgress draws nothing for a total of 0


def test_progress_is_drawn_on_a_terminal_only(tmp_path, monkeypatch):
    import io

    from rich.console import Console

    import klogspec.progress
    import klogspec.recover.cli as cli

    dir = build(tmp_path, close=False)
    monkeypatch.setattr(klogspec.progress, "PROGRESS_THRESHOLD", 0)
    terminal = io.StringIO()
    monkeypatch.setattr(
        cli, "stderr_console", lambda: Console(file=terminal, force_terminal=True, width=100)
    )
    run(dir, "--from-offset", 0, expect=1)
    assert "recover topic-0" in terminal.getvalue()
    terminal.truncate(0)
    run(dir, "--from-offset", 0, "--no-progress", expect=0)
    assert "recover" not in terminal.getvalue()
    pipe = io.StringIO()
    monkeypatch.setattr(cli, "stderr_console", lambda: Console(file=pipe))  # not a terminal
    run(dir, "--from-offset", 0, expect=0)
    assert pipe.getvalue() == ""


def dump(*args, expect: int):
    from klogspec.cli import main

    result = CliRunner().invoke(main, ["dump", *map(str, args)], catch_exceptions=False)
    assert result.exit_code == expect, result.output
    return result


def test_the_quarantine_is_inspectable(tmp_path):
    """Issue 16: dump decodes a kept slice (by its name, or with --type log) at the positions
    of the file it was cut from; dump DIR and verify DIR skip the quarantine unless asked;
    the report, the manifest and dump give ranges alike ([from, to), to exclusive)."""
    dir = build(tmp_path, close=False)
    segments = sorted(dir.glob("*.log"))
    flip(segments[-2], 200)
    text = run(dir, "--from-offset", 0, expect=1).output
    folder = next((dir / QUARANTINE_DIR).iterdir())
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["state"] == "complete" and "to exclusive" in manifest["ranges"]
    cut = next(e for e in manifest["entries"] if e["action"] == "truncate")
    start, end = cut["position"], cut["position"] + cut["bytes"]
    first, after = cut["offsets"]
    assert cut["stored"] == f"{cut['file']}.{start}-{end}"
    assert f"truncate {cut['file']}: bytes [{start}, {end}) ({cut['bytes']} bytes, " in text
    assert f"offsets [{first}, {after})" in text
    assert "None" not in text and "[]" not in text
    # the slice, dumped: its own name says what it is and whose positions it has
    piece = folder / cut["stored"]
    events = [json.loads(line) for line in dump("--json", piece, expect=1).stdout.splitlines()]
    batches = [e for e in events if e["type"] == "batch"]
    assert batches[0]["position"] == start and batches[0]["baseOffset"] == first
    assert batches[-1]["lastOffset"] == after - 1
    assert events[-1]["quarantined"] == {"file": cut["file"], "from": start}
    assert events[-1]["errors"][0]["position"] == start  # the flipped batch: where it was
    shown = dump(piece, expect=1).output
    assert f"quarantined bytes [{start}, {end}) of {cut['file']}" in shown
    renamed = tmp_path / "slice.bin"
    renamed.write_bytes(piece.read_bytes())
    dump(renamed, expect=2)  # an unknown name: say what it holds
    typed = dump("--json", "--type", "log", renamed, expect=1).stdout.splitlines()
    typed = [json.loads(line) for line in typed]
    assert [e["lastOffset"] for e in typed if e["type"] == "batch"] == [
        b["lastOffset"] for b in batches
    ]
    # walks skip the quarantine unless asked
    assert QUARANTINE_DIR not in dump(tmp_path, expect=0).output
    assert str(piece) in dump("--include-quarantine", tmp_path, expect=1).output
    assert serious(tmp_path) == []
    from klogspec.verify.run import verify_paths as verify

    with_pieces = [
        f for f in verify([tmp_path], include_quarantine=True) if f.severity is Severity.ERROR
    ]
    assert [(f.rule, f.file, f.position) for f in with_pieces] == [("BATCH-4", str(piece), start)]
    named = [f for f in verify([folder]) if f.severity is not Severity.INFO]
    assert [(f.rule, f.position) for f in named] == [("BATCH-4", start)]  # no DIR-3
