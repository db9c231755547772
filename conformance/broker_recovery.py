"""``klogspec recover --dry-run`` against what a real broker's restart does (issue 21 item 5).

``compare_with_restart(version, home)`` takes a broker's home (``home/logs`` its log
directory, left by kafka_broker.py), copies it twice, plans recovery on one copy with
``klogspec recover --dry-run --json``, restarts Kafka of ``version`` on the other (until it has
loaded every log, then a clean stop) and compares, partition by partition:

* the segments recovered: Kafka's LogLoader says so in its INFO/WARN lines ("Recovering
  unflushed segment B", "Found a corrupted index file corresponding to log file ...B.log",
  "Could not find offset index file corresponding to log file ...B.log"); ours are the
  segments whose indexes the plan rebuilds;
* the bytes of each ``.log`` after: Kafka's files after the restart, against the files before
  less the plan's truncations and deletions (a .log Kafka appended to after loading, such as
  __consumer_offsets', is compared on the bytes it had);
* the recovery point Kafka checkpoints at its clean stop, against the plan's log end offset.

Allowed: a segment below the recovery point that the plan recovers for a corrupt index and
Kafka does not (LOAD-16's Version note: Kafka stopped checking indexes at load in 2.3); after
a clean shutdown, segments the plan recovers without changing them (a recovery tool loads as
after an unclean shutdown, spec/behaviour/recovery.md §7, where Kafka recovers nothing by
LOAD-17: the files agree).
``__cluster_metadata`` is KRaft's log, loaded by the raft client and not the log manager:
``klogspec recover`` skips it, and it is left out here.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from reference_impl.formats.checkpoints import read_offset_checkpoint

from . import kafka_broker

KRAFT_LOG = "__cluster_metadata-0"
_LOADER = re.compile(r"\[LogLoader partition=(?P<partition>\S+), dir=[^\]]*\] (?P<message>.*)")
_RECOVERING = re.compile(r"Recovering unflushed segment (\d+)\b")
_BY_FILE = re.compile(r"(?:corrupted index file|Could not find offset index file) "
                      r"corresponding to log file \S*/(\d{20})\.log")  # fmt: skip
_CLI = "import sys; from klogspec.cli import main; sys.argv[0] = 'klogspec'; main()"


def kafka_recovered(server_log: str) -> dict[str, set[int]]:
    """Partition -> base offsets of the segments Kafka's LogLoader recovered."""
    out: dict[str, set[int]] = {}
    for line in server_log.splitlines():
        found = _LOADER.search(line)
        if found is None:
            continue
        message = found["message"]
        segment = _RECOVERING.search(message) or _BY_FILE.search(message)
        if segment is not None:
            out.setdefault(found["partition"], set()).add(int(segment[1]))
    return out


def log_sizes(log_dir: Path) -> dict[str, dict[int, int]]:
    """Partition -> {base offset: bytes of its .log}."""
    return {
        partition.name: {int(log.name[:20]): log.stat().st_size for log in partition.glob("*.log")}
        for partition in log_dir.iterdir()
        if partition.is_dir() and partition.name != KRAFT_LOG
    }


def plan(log_dir: Path) -> dict[str, dict]:
    """``klogspec recover --dry-run --json``'s plan of each partition (by directory name)."""
    argv = ["recover", "--dry-run", "--json", "--no-progress", str(log_dir)]
    done = subprocess.run([sys.executable, "-c", _CLI, *argv], capture_output=True, text=True)
    if done.returncode == 2:
        raise RuntimeError(f"klogspec recover could not run: {done.stderr[-2000:]}")
    plans = [json.loads(line) for line in done.stdout.splitlines()]
    return {Path(p["partition"]).name: p for p in plans if p.get("type") == "partition"}


def planned_recovered(partition_plan: dict) -> dict[int, tuple[str, bool]]:
    """Base offset -> (reason, changed), of the segments whose offset index the plan
    rebuilds."""
    return {
        int(action["file"][:20]): (action["reason"], action["changed"])
        for action in partition_plan["actions"]
        if action["action"] == "rebuild" and action["file"].endswith(".index")
    }


def planned_sizes(before: dict[int, int], partition_plan: dict) -> dict[int, int]:
    """The .log sizes the plan leaves: truncations cut, deletions gone."""
    sizes = dict(before)
    for action in partition_plan["actions"]:
        if not action["file"].endswith(".log"):
            continue
        base = int(action["file"][:20])
        if action["action"] == "truncate":
            sizes[base] = action["position"]
        elif action["action"] == "delete":
            sizes.pop(base, None)
    return sizes


def compare_with_restart(version: str, home: Path, scratch: Path) -> tuple[list[str], dict]:
    """The differences between our plan and Kafka's restart of ``home``'s log directory, and
    the plan (partition directory name -> its plan)."""
    ours, kafkas = scratch / "planned", scratch / "restarted"
    for copy in (ours, kafkas):
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(home, copy, symlinks=True)
    before = log_sizes(kafkas / "logs")
    plans = plan(ours / "logs")
    recovered = kafka_recovered(kafka_broker.restart(version, kafkas))
    after = log_sizes(kafkas / "logs")
    points = dict(_recovery_points(kafkas / "logs"))
    clean = (home / "logs" / ".kafka_cleanshutdown").exists()
    differences = []
    for partition, partition_plan in sorted(plans.items()):
        differences += [
            f"{partition}: {difference}"
            for difference in _compare_partition(
                partition_plan, before[partition], after.get(partition, {}),
                recovered.get(partition, set()), points.get(partition), clean,
            )
        ]  # fmt: skip
    return differences, plans


def _compare_partition(partition_plan, before, after, kafka_segments, kafka_point, clean):
    out = []
    ours = planned_recovered(partition_plan)
    for base in sorted(kafka_segments - set(ours)):
        out.append(f"Kafka recovered segment {base}, the plan does not")
    for base in sorted(set(ours) - kafka_segments):
        reason, changed = ours[base]
        if reason != "corrupt_index" and (changed or not clean):  # see the module's docstring
            out.append(f"the plan recovers segment {base} ({reason}), Kafka does not")
    expected = planned_sizes(before, partition_plan)
    for base in sorted(set(expected) | set(before)):
        kafka_size = after.get(base)
        if kafka_size is not None and kafka_size > before.get(base, 0):
            kafka_size = before.get(base)  # appended after loading: compare what was there
        if kafka_size != expected.get(base):
            out.append(f"segment {base}: Kafka leaves {kafka_size} bytes, "
                       f"the plan {expected.get(base)}")  # fmt: skip
    if kafka_point is not None and kafka_point < partition_plan["logEndOffset"]:
        out.append(f"recovery point: Kafka {kafka_point}, plan's log end offset "
                   f"{partition_plan['logEndOffset']}")  # fmt: skip
    return out


def _recovery_points(log_dir: Path):
    """(partition directory name, recovery point) from Kafka's checkpoint after its stop."""
    data = (log_dir / "recovery-point-offset-checkpoint").read_bytes()
    for entry in read_offset_checkpoint(data):
        yield f"{entry.topic}-{entry.partition}", entry.offset


def tear(home: Path, into: Path) -> Path:
    """A copy of ``home`` with what a power loss can leave on top of a SIGKILL: the last batch
    of flood-0's last .log cut short by 100 bytes (a torn write), and 64 bytes of 0xFF after
    the last batch of rolling-0's last .log (garbage where a batch header should be)."""
    shutil.rmtree(into, ignore_errors=True)
    shutil.copytree(home, into, symlinks=True)
    flood = max((into / "logs" / "flood-0").glob("*.log"))
    with open(flood, "r+b") as handle:
        handle.truncate(flood.stat().st_size - 100)
    rolling = max((into / "logs" / "rolling-0").glob("*.log"))
    with open(rolling, "ab") as handle:
        handle.write(b"\xff" * 64)
    return into
