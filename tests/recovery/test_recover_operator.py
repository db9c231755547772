"""Issue 20, the operator's part of ``klogspec recover``: names and a ``.lock`` a broker never
makes are refused before anything changes (RECOV-23); the records a recovery removes are stated,
and asked for (RECOV-24); a failed run says what it did and leaves no partial piece or
preallocated index (RECOV-25); damage below the recovery point is named with the command that
handles it (RECOV-26); the plan and dump tell the truth about what they show."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import klogspec.recover.cli as recover_cli
from klogspec.recover.cli import recover as recover_command
from klogspec.recover.journal import MANIFEST
from klogspec.recover.naming import stored_piece
from klogspec.recover.quarantine import QUARANTINE_DIR
from klogspec.verify.run import verify_paths
from reference_impl.records import iter_file_batches

from .support import files_of
from .test_recover_cli import build, flip, serious

BASE = ["--index-interval-bytes", "100", "--segment-index-bytes", "1024"]


def run(*args, expect: int | None = None, input: str | None = None):
    result = CliRunner().invoke(
        recover_command, [*map(str, args), *BASE], input=input, catch_exceptions=False
    )
    if expect is not None:
        assert result.exit_code == expect, result.output
    assert "Traceback" not in result.output
    return result


def damaged(root: Path, close: bool = False) -> Path:
    """30 one-record batches, 5 a segment; a byte of offset 22's batch flipped (segment 20)."""
    dir = build(root, close=close)
    flip(sorted(dir.glob("*.log"))[-2], 200)
    return dir


def batch_at(path: Path, position: int):
    with open(path, "rb") as handle:
        for batch in iter_file_batches(handle):
            if batch.position <= position < batch.position + batch.size_in_bytes:
                return batch
    raise AssertionError(f"no batch at {position} of {path}")


# --- RECOV-23: refused before anything changes ------------------------------------------------


@pytest.mark.req("RECOV-23", "RECOV-17")
@pytest.mark.parametrize("name", [b"t\xff\xfe-0", b"a b-0", "t\u00f6-0".encode()])
def test_a_partition_name_no_broker_makes_is_refused(tmp_path, name):
    """t\\xff\\xfe-0 used to end in UnicodeEncodeError in write_checkpoint, leaving an
    in-progress journal every rerun tripped over; now it is refused, the other partition of
    the log directory is recovered, and the checkpoints stay UTF-8 text."""
    logs = tmp_path / "logs"
    good = build(logs, close=False)
    bad = Path(os.fsdecode(os.fsencode(logs) + b"/" + name))
    shutil.copytree(good, bad)
    for partition in (good, bad):
        last = sorted(partition.glob("*.log"))[-1]
        last.write_bytes(last.read_bytes() + bytes(40))  # something to do in both
    before = files_of(bad)
    result = run(logs, "--yes", expect=2)
    shown = os.fsencode(bad.name).decode("utf-8", "backslashreplace")
    assert f"{shown}: could not recover" in result.output
    assert "is not a Kafka topic name" in result.output and "nothing changed" in result.output
    assert f"{good}: recovered" in result.output
    assert files_of(bad) == before and not (bad / QUARANTINE_DIR).exists()
    text = (logs / "recovery-point-offset-checkpoint").read_text(encoding="utf-8")
    assert text.splitlines()[2:] == ["topic 0 30"]
    again = json.loads(run(bad, "--json", expect=2).output)
    assert again["partition"].endswith(shown) and again["mode"] == "failed"


@pytest.mark.req("RECOV-23")
@pytest.mark.parametrize("kind", ["dangling link", "link to a file", "fifo"])
def test_a_lock_that_is_no_regular_file_is_refused(tmp_path, kind):
    """A dangling .lock link made recover create its target outside the log directory."""
    dir = damaged(tmp_path / "logs")
    lock, outside = tmp_path / "logs" / ".lock", tmp_path / "outside"
    if kind == "fifo":
        os.mkfifo(lock)
    else:
        if kind == "link to a file":
            outside.write_bytes(b"")
        lock.symlink_to(outside)
    before = files_of(dir)
    dry = run(dir, "--dry-run", "--from-offset", 0, expect=1)
    assert ("a real run refuses it" in dry.output) == ("link" in kind)
    result = run(dir, "--yes", "--from-offset", 0, expect=2)
    assert ("symbolic link" if "link" in kind else "not a regular file (a FIFO)") in result.output
    assert files_of(dir) == before
    assert outside.exists() == (kind == "link to a file")
    if outside.exists():
        assert outside.read_bytes() == b""


# --- RECOV-24: the loss, stated and asked for -------------------------------------------------


def _removed_offsets(dir: Path) -> tuple[int, int]:
    """What RECOV-3 and RECOV-5 remove, read from the files: from the flipped batch to the LEO."""
    flipped = batch_at(sorted(dir.glob("*.log"))[-2], 200)
    return flipped.base_offset, 30


@pytest.mark.req("RECOV-24", "RECOV-17")
def test_without_a_terminal_or_yes_nothing_changes(tmp_path):
    dir = damaged(tmp_path)
    first, end = _removed_offsets(dir)
    before = files_of(tmp_path)
    result = run(dir, "--from-offset", 0, expect=2)
    assert files_of(tmp_path) == {**before, ".lock": b""}  # locked as a broker would, only
    assert "not recovered (nothing changed)" in result.output and "--yes" in result.output
    intact = end - first - 1  # the flipped batch holds one record, the others are intact
    assert f"removes {intact} intact records and " in result.output
    assert f"offsets [{first}, {end})" in result.output
    assert (
        "00000000000000000025.log: the whole segment, offsets [25, 30): 5 intact records (every batch intact)"
        in result.output
    )
    assert "1 intact segment is deleted only because it follows the damage" in result.output
    report = json.loads(run(dir, "--from-offset", 0, "--json", expect=2).output)
    assert report["loss"]["records"] == intact
    assert report["loss"]["intactSegments"] == ["00000000000000000025.log"]
    assert files_of(tmp_path) == {**before, ".lock": b""}


@pytest.mark.req("RECOV-24")
@pytest.mark.parametrize("answer, status", [("n\n", 2), ("y\n", 1)])
def test_a_terminal_is_asked(tmp_path, monkeypatch, answer, status):
    monkeypatch.setattr(recover_cli, "stdin_is_terminal", lambda: True)
    dir = damaged(tmp_path)
    before = files_of(dir)
    result = run(dir, "--from-offset", 0, input=answer, expect=status)
    assert "Remove these records from the partition? [y/N]" in result.output
    assert result.output.index("intact records") < result.output.index("[y/N]")
    if status == 2:
        assert "declined" in result.output and files_of(dir) == before
    else:
        assert "recovered" in result.output and serious(tmp_path) == []


@pytest.mark.req("RECOV-24")
def test_a_torn_tail_is_recovered_unasked(tmp_path):
    """What every crash leaves (a partial last batch, zeros) removes no intact record."""
    dir = build(tmp_path, close=False)
    last = sorted(dir.glob("*.log"))[-1]
    data = last.read_bytes()
    last.write_bytes(data + data[:40] + bytes(30))
    result = run(dir, expect=1)
    assert "recovered" in result.output and "intact record" not in result.output


# --- RECOV-25: a failed run ---------------------------------------------------------------------


class FullDisk:
    """ENOSPC at the os layer: writes to files whose name ``matches`` fail once ``free`` bytes
    of them are written (a short write first, as a file system gives)."""

    def __init__(self, matches, free: int) -> None:
        self.matches, self.free = matches, free

    def __enter__(self):
        import errno

        self.real = real = {name: getattr(os, name) for name in ("write", "pwrite")}

        def limited(call):
            def write(fd, data, *position):
                if not self.matches(os.readlink(f"/proc/self/fd/{fd}")):
                    return real[call](fd, data, *position)
                if self.free <= 0:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                n = min(len(data), self.free)
                self.free -= n
                return real[call](fd, bytes(data[:n]), *position)

            return write

        for name in self.real:
            setattr(os, name, limited(name))
        return self

    def __exit__(self, *exc_info):
        for name, call in self.real.items():
            setattr(os, name, call)


def _indexes(dir: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in dir.iterdir() if p.suffix in (".index", ".timeindex")}


@pytest.mark.req("RECOV-25", "RECOV-21")
def test_a_full_disk_while_keeping_a_cut_range(tmp_path):
    """The piece being copied when the disk filled is removed (its name claimed the whole
    range), nothing of the .log is cut, the report lists what was and was not done, the
    indexes the load preallocated go back, and the next run finishes the recovery."""
    dir = damaged(tmp_path)
    logs = {p.name: p.read_bytes() for p in dir.glob("*.log")}
    indexes = _indexes(dir)
    with FullDisk(lambda path: ".log." in Path(path).name, free=100):
        result = run(dir, "--yes", "--from-offset", 0, expect=2)
    out = result.output
    assert "could not recover" in out and "No space left on device" in out
    assert "done before the failure: no .log byte was cut or deleted" in out
    assert "not done:\n    truncate 00000000000000000020.log" in out
    assert "removed the partial piece 00000000000000000020.log." in out
    assert "(100 of " in out
    assert "removed bytes kept" not in out and "bytes of .log files removed" not in out
    assert "the quarantine still needs" in out
    assert {p.name: p.read_bytes() for p in dir.glob("*.log")} == logs
    # no index left preallocated (1024 bytes) by the failed load: segment 20's was rebuilt, at
    # that size, before the cut failed; the active segment's the load trimmed (RECOV-4)
    after = _indexes(dir)
    assert set(after) == set(indexes)
    assert all(after[name] <= indexes[name] for name in after), (after, indexes)
    assert after["00000000000000000020.index"] < 1024
    folder = next((dir / QUARANTINE_DIR).iterdir())
    for piece in folder.iterdir():
        kept = stored_piece(piece.name)
        if kept is not None and kept.end is not None:
            assert piece.stat().st_size == kept.end - kept.start, piece.name
    assert json.loads((folder / MANIFEST).read_text())["state"] == "in-progress"
    report = json.loads(run(dir, "--yes", "--from-offset", 0, "--json", expect=1).output)
    assert report["resumed"]["mode"] == "resumed" and serious(tmp_path) == []
    whole = json.loads((folder / MANIFEST).read_text())["entries"][0]
    assert (folder / whole["stored"]).stat().st_size == whole["bytes"]


@pytest.mark.req("RECOV-25")
def test_a_full_disk_while_the_load_writes_an_index(tmp_path):
    """A closed log: its indexes are trimmed, so the rebuild's preallocation is the load's."""
    dir = damaged(tmp_path, close=True)
    indexes = _indexes(dir)
    with FullDisk(lambda path: path.endswith(".index"), free=0):
        report = json.loads(run(dir, "--yes", "--from-offset", 0, "--json", expect=2).output)
    assert report["error"].startswith("the load failed: No space left on device")
    failure = report["failure"]
    assert failure["done"] == [] and failure["notDone"]
    assert {a["action"] for a in failure["notDone"]} == {"truncate", "delete"}
    after = _indexes(dir)
    assert set(after) == set(indexes)
    assert all(after[name] <= indexes[name] for name in after), (after, indexes)
    assert any("preallocated by the failed load" in note for note in failure["cleanup"])
    run(dir, "--yes", "--from-offset", 0, expect=1)
    assert serious(tmp_path) == []


# --- RECOV-26: below the recovery point ---------------------------------------------------------


@pytest.mark.req("RECOV-26", "RECOV-1")
def test_damage_below_the_recovery_point_is_named_with_its_command(tmp_path):
    """A crash, and damage in the first segment: a plain recover (as a broker's start) does
    not see it; both recover and verify say so and name what handles it."""
    dir = build(tmp_path, close=False)
    first = sorted(dir.glob("*.log"))[0]
    flip(first, 100)
    result = run(dir, expect=1)
    assert "a broker's start does not check them either" in result.output
    assert f"`klogspec recover --from-offset 0 {dir}`" in result.output
    findings = verify_paths([tmp_path])
    assert [f.rule for f in serious(tmp_path)] == ["BATCH-4"]
    unseen = [f for f in findings if f.rule == "RECOV-1"]
    assert len(unseen) == 1 and first.name in unseen[0].message
    assert "will not notice it" in unseen[0].message
    assert f"klogspec recover --from-offset 0 {dir}" in unseen[0].message


# --- the plan and dump tell the truth -----------------------------------------------------------


def test_an_index_the_load_makes_then_deletes_says_so(tmp_path):
    """Issue 20: 'rebuild X.index' followed by 'delete X.index' in the dry-run plan."""
    dir = damaged(tmp_path)
    (dir / "00000000000000000025.index").unlink()  # LOAD-13: the load rebuilds it
    out = run(dir, "--from-offset", 0, "--dry-run", expect=1).output
    assert (
        "rebuild 00000000000000000025.index (missing_offset_index), then deleted below with its "
        "segment" in out
    )
    assert "delete 00000000000000000025.index: 16 bytes as rebuilt above (after_truncation)" in out
    assert "delete 00000000000000000025.timeindex: 24 bytes as rebuilt above" in out


def test_a_dumped_slice_does_not_call_a_failed_batch_valid(tmp_path):
    from klogspec.cli import main

    dir = damaged(tmp_path)
    report = json.loads(run(dir, "--from-offset", 0, "--yes", "--json", expect=1).output)
    cut = next(a for a in report["actions"] if a.get("error") == "crc_mismatch")
    piece = (
        Path(report["quarantine"])
        / f"{cut['file']}.{cut['position']}-{cut['position'] + cut['bytes']}"
    )
    out = CliRunner().invoke(main, ["dump", str(piece)]).output
    summary = next(line for line in out.splitlines() if line.startswith("  3 batches"))
    assert "valid bytes" not in summary
    assert f"1 batch failing the CRC check, the first at position {cut['position']}" in summary
    assert f"{cut['bytes']} bytes in whole batches" in summary


# --- RECOV-25 on a real full file system ------------------------------------------------------

ON_TMPFS = """
import json, sys
from pathlib import Path
from click.testing import CliRunner
from klogspec.recover.cli import recover
from reference_impl.log.clock import ManualClock
from reference_impl.log.config import LogConfig
from reference_impl.log.loader import LoadOptions
from reference_impl.log.unified_log import Log
from reference_impl.records import SimpleRecord, build_record_batch

root = Path(sys.argv[1])
clock = ManualClock(1_700_000_000_000)
config = LogConfig(segment_bytes=1_000_000)
log = Log.open(root / "topic-0", config, clock, load=LoadOptions(had_clean_shutdown=False))
for i in range(1500):  # 1.6 MB in two segments, on a 2 MiB tmpfs
    record = SimpleRecord(key=b"k%d" % i, value=b"x" * 1000, timestamp=clock.milliseconds())
    log.append_as_leader(build_record_batch([record]), 0)
log.close()
with open(root / "topic-0" / "00000000000000000000.log", "r+b") as f:
    f.seek(3000)
    byte = f.read(1)[0]
    f.seek(3000)
    f.write(bytes([byte ^ 0xFF]))

def listing():
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}

runs = []
for extra in ([], ["--discard"]):
    args = [str(root / "topic-0"), "--yes", "--from-offset", "0", *extra]
    result = CliRunner().invoke(recover, args)
    runs.append({"status": result.exit_code, "output": result.output, "files": listing()})
print(json.dumps(runs))
"""


def _unshare_mount() -> list[str] | None:
    """A command prefix that runs in a private mount namespace where we may mount, or None."""
    import subprocess

    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    command = [unshare, "--mount", "--map-root-user"]
    probe = subprocess.run([*command, "true"], capture_output=True)
    return command if probe.returncode == 0 else None


@pytest.mark.req("RECOV-25")
def test_a_full_tmpfs(tmp_path):
    """The issue's case on a real file system: a 2 MiB tmpfs, a flip near the start of the
    first of two segments, and the default 10 MiB indexes. ENOSPC while keeping the cut
    range: no partial piece, no preallocated index, the report says nothing was cut; then
    --discard finishes the recovery without needing the space (the whole later segment
    stays in the quarantine, a hard link costs nothing)."""
    import subprocess
    import sys

    prefix = _unshare_mount()
    if prefix is None:
        pytest.skip("cannot mount a tmpfs here (no unshare, or user namespaces are off)")
    mount = tmp_path / "mnt"
    mount.mkdir()
    shell = 'mount -t tmpfs -o size=2m tmpfs "$1" && exec "$2" -c "$3" "$1"'
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [*prefix, "sh", "-c", shell, "sh", str(mount), sys.executable, ON_TMPFS],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    failed, finished = json.loads(done.stdout)
    out = failed["output"]
    assert failed["status"] == 2 and "No space left on device" in out and "Traceback" not in out
    assert "done before the failure: no .log byte was cut or deleted" in out
    assert "removed the partial piece 00000000000000000000.log." in out
    assert "bytes of .log files removed" not in out and "removed bytes kept" not in out
    files = failed["files"]
    assert files["topic-0/00000000000000000000.log"] == 999_784  # not cut
    quarantined = [name for name in files if QUARANTINE_DIR in name]
    assert not [name for name in quarantined if ".log." in name]  # no partial piece
    assert all(size < 10 << 20 for size in files.values())  # no 10 MiB index left
    assert finished["status"] == 1, finished["output"]
    assert finished["files"]["topic-0/00000000000000000000.log"] < 3000
    kept = [name for name in finished["files"] if name.endswith("00000000000000000931.log")]
    assert len(kept) == 1 and QUARANTINE_DIR in kept[0]  # the intact segment, kept


@pytest.mark.req("RECOV-25", "RECOV-17")
def test_a_segment_over_2_gib_is_refused_before_the_journal(tmp_path):
    """An 8 GiB .log (sparse here) failed in the load, after the journal was started, and the
    report still said what it would have removed; the plan now refuses it, as a broker's load
    fails on it (FileRecords' int positions), and nothing changes."""
    dir = build(tmp_path, close=False)
    last = sorted(dir.glob("*.log"))[-1]
    os.truncate(last, 8 << 30)
    before = {p.name: p.stat().st_size for p in dir.iterdir()}
    out = run(dir, "--yes", "--from-offset", 0, expect=2).output
    assert f"{last.name} is {8 << 30} bytes, larger than the 2147483647" in out
    assert {p.name: p.stat().st_size for p in dir.iterdir()} == before  # no quarantine either


@pytest.mark.req("RECOV-25")
def test_a_full_disk_before_the_journal_changes_nothing(tmp_path):
    """The first manifest cannot be written: no folder without a manifest is left behind."""
    dir = damaged(tmp_path)
    before = files_of(dir)
    with FullDisk(lambda path: path.endswith(MANIFEST + ".tmp"), free=0):
        out = run(dir, "--yes", "--from-offset", 0, expect=2).output
    assert "cannot start the journal" in out and "nothing was changed" in out
    assert files_of(dir) == before and not (dir / QUARANTINE_DIR).exists()
