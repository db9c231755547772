"""``klogspec verify`` on a compacted log's leftovers (spec/behaviour/compaction.md): a
cleaner checkpoint past the log end offset, and the temporary files of a pass."""

from __future__ import annotations

import pytest

from klogspec.verify.run import verify_paths
from reference_impl.log.clock import ManualClock
from reference_impl.log.config import LogConfig
from reference_impl.log.unified_log import Log
from reference_impl.records import SimpleRecord, build_record_batch

NOW = 1_700_000_000_000


def compacted_log(root):
    log = Log.open(root / "t-0", LogConfig(cleanup_policy="compact"), ManualClock(NOW))
    for _ in range(3):
        record = SimpleRecord(value=b"v", key=b"a", timestamp=NOW)
        log.append_as_leader(build_record_batch([record]), 0)
    log.close()


def findings(root) -> dict[str, list]:
    found: dict[str, list] = {}
    for finding in verify_paths([root], warn=lambda message: None):
        found.setdefault(finding.rule, []).append(finding)
    return found


@pytest.mark.req("COMPACT-4", "COMPACT-27")
def test_cleaner_checkpoint_past_the_log_end_is_reported(tmp_path):
    compacted_log(tmp_path)
    (tmp_path / "cleaner-offset-checkpoint").write_text("0\n1\nt 0 3\n")
    assert "COMPACT-4" not in findings(tmp_path)  # at the log end: the next pass's start
    (tmp_path / "cleaner-offset-checkpoint").write_text("0\n1\nt 0 99\n")
    (reported,) = findings(tmp_path)["COMPACT-4"]
    assert (reported.offset, reported.position) == (99, 4)
    assert "above the log end offset 3" in reported.message


@pytest.mark.req("COMPACT-23", "COMPACT-24")
def test_cleaned_and_swap_files_are_reported(tmp_path):
    compacted_log(tmp_path)
    for name in ("00000000000000000000.log.cleaned", "00000000000000000000.log.swap"):
        (tmp_path / "t-0" / name).write_bytes(b"")
    leftovers = findings(tmp_path)["PART-4"]
    assert sorted(f.file.rsplit(".", 1)[-1] for f in leftovers) == ["cleaned", "swap"]
    assert all("segment replacement" in f.message for f in leftovers)
