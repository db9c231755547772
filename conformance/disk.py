"""What the harness reads on disk, with the reference decoders (never the testee's).

* ``snapshot``: every file under a log directory, as bytes.
* ``decode``: the decoded JSON view of one file (the goldens' manifest stores it).
* ``invariants``: the rules every segment satisfies between operations (index.md §4,
  INDEX-13 to INDEX-17), checked on the testee's files.
* ``check_files``: a scenario's ``files`` expectations.

Some files belong to an optional feature (``FEATURE_FILES``): a testee that does not
claim it may write them or not, so ``visible`` hides them from every comparison.
"""

from __future__ import annotations

import re
from pathlib import Path

from reference_impl.errors import KafkaLogError
from reference_impl.formats.checkpoints import read_leader_epoch_checkpoint, read_offset_checkpoint
from reference_impl.formats.index_entries import (
    OffsetPosition,
    TimestampOffset,
    lookup_offset,
    lookup_timestamp,
    read_offset_index,
    read_time_index,
    read_txn_index,
    until_stop,
)
from reference_impl.formats.producer_snapshot import read_snapshot
from reference_impl.records import iter_batches

INT32_MAX = 2**31 - 1
_SEGMENT_NAME = re.compile(
    r"^(\d+)\.(log|index|timeindex|txnindex|snapshot)((?:\.deleted|\.cleaned|\.swap)?)$"
)
FEATURE_FILES = {"snapshot": "producer_snapshots"}  # file kind -> the feature it belongs to
SNAPSHOT_FIELDS = (
    "producer_id",
    "producer_epoch",
    "last_sequence",
    "last_offset",
    "offset_delta",
    "timestamp",
    "coordinator_epoch",
    "current_txn_first_offset",
)
TEXT_FILES = {
    ".kafka_cleanshutdown",
    "leader-epoch-checkpoint",
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "partition.metadata",
    "replication-offset-checkpoint",
    "cleaner-offset-checkpoint",
}


def expand_name(name: str) -> str:
    """``5.log`` -> ``00000000000000000005.log``; other names unchanged."""
    head, _, tail = name.rpartition("/")
    match = _SEGMENT_NAME.match(tail)
    if match and len(match.group(1)) < 20:
        tail = f"{int(match.group(1)):020d}.{match.group(2)}{match.group(3)}"
    return f"{head}/{tail}" if head else tail


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root``: relative POSIX path -> bytes."""
    if not root.exists():
        return {}
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def segment_file(name: str) -> tuple[int | None, str | None, str]:
    """(base offset, kind, marker) of a segment file name; (None, None, '') otherwise."""
    match = _SEGMENT_NAME.match(name.rpartition("/")[2])
    if not match:
        return None, None, ""
    return int(match.group(1)), match.group(2), match.group(3)


def feature_of(name: str) -> str | None:
    """The optional feature a file belongs to (``.snapshot`` and ``.snapshot.deleted``:
    producer_snapshots), or None for files every implementation is judged on."""
    return FEATURE_FILES.get(segment_file(name)[1])


def is_visible(name: str, features: set[str] | frozenset[str] | None) -> bool:
    """Whether a file counts for a testee claiming ``features`` (None: every file counts)."""
    feature = feature_of(name)
    return features is None or feature is None or feature in features


def visible(files: dict[str, bytes], features: set[str] | frozenset[str] | None) -> dict:
    return {name: data for name, data in files.items() if is_visible(name, features)}


def snapshot_entries(data: bytes) -> list[dict]:
    """The entries of a producer snapshot as dicts (SNAPSHOT_FIELDS); raises
    KafkaLogError (corrupt_snapshot) for one that does not read."""
    return [
        {field: getattr(entry, field) for field in SNAPSHOT_FIELDS} for entry in read_snapshot(data)
    ]


def decode_log(data: bytes) -> dict:
    batches, error = [], None
    scanner = iter_batches(data)
    try:
        for b in scanner:
            entry = {
                "position": b.position,
                "base_offset": b.base_offset,
                "last_offset": b.last_offset,
                "magic": b.magic,
                "size": b.size_in_bytes,
                "crc": b.crc,
                "crc_valid": b.is_valid,
            }
            if b.magic == 2:
                entry.update(
                    partition_leader_epoch=b.partition_leader_epoch,
                    attributes=b.attributes,
                    max_timestamp=b.max_timestamp,
                    records=b.records_count,
                )
            else:
                entry.update(attributes=b.attributes, max_timestamp=b.max_timestamp)
            batches.append(entry)
    except KafkaLogError as exc:
        error = {"category": exc.category.value, "position": exc.position}
    valid = scanner.valid_bytes
    view = {
        "kind": "log",
        "batches": batches,
        "valid_bytes": valid,
        "tail_bytes": len(data) - valid,
        "tail_zero": not any(data[valid:]),
    }
    if error:
        view["error"] = error
    return view


def real_offset_entries(data: bytes, base: int) -> list[list[int]]:
    """The real entries of an index image: up to the first zero-filled slot (OIDX-10: a
    later slot whose relative offset is 0; slot 0 when it is all zero, which no real
    entry is, since the first append of a segment is never indexed, INDEX-7)."""
    if data[:8] == bytes(8):
        return []
    return [[e.offset, e.position] for e in until_stop(read_offset_index(data, base), base)]


def real_time_entries(data: bytes, base: int) -> list[list[int]]:
    """As real_offset_entries (TIDX-12); scenarios never use timestamp 0."""
    if data[:12] == bytes(12):
        return []
    return [[e.timestamp, e.offset] for e in until_stop(read_time_index(data, base), base)]


def decode(name: str, data: bytes) -> dict:
    """The decoded JSON view of one file of a log directory."""
    base, kind, marker = segment_file(name)
    view: dict
    if kind == "log":
        view = decode_log(data)
    elif kind in ("index", "timeindex"):
        size = 8 if kind == "index" else 12
        entries = (real_offset_entries if kind == "index" else real_time_entries)(data, base)
        used = len(entries) * size
        view = {
            "kind": "offset_index" if kind == "index" else "time_index",
            "entries": entries,
            "slots": len(data) // size,
            "remainder": len(data) % size,
            "tail_zero": not any(data[used:]),
        }
    elif kind == "txnindex":
        try:
            txns = read_txn_index(data)
            view = {
                "kind": "txn_index",
                "entries": [
                    [t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset]
                    for t in txns
                ],
            }
        except KafkaLogError as exc:
            view = {"kind": "txn_index", "error": exc.category.value}
    elif kind == "snapshot":
        try:
            view = {
                "kind": "producer_snapshot",
                "entries": [
                    [e[field] for field in SNAPSHOT_FIELDS] for e in snapshot_entries(data)
                ],
            }
        except KafkaLogError as exc:
            view = {"kind": "producer_snapshot", "error": exc.category.value}
    elif name.rpartition("/")[2] in TEXT_FILES:
        view = {"kind": "text", "lines": data.decode("utf-8", "replace").splitlines()}
    else:
        view = {"kind": "bytes"}
    view["size"] = len(data)
    if marker:
        view["marker"] = marker.lstrip(".")
    return view


# --- invariants (index.md §4) ------------------------------------------------------------


def live_segments(partition_files: dict[str, bytes]) -> dict[int, dict[str, bytes]]:
    """base offset -> {kind: bytes} for the segments of a partition directory (no marker)."""
    segments: dict[int, dict[str, bytes]] = {}
    for name, data in partition_files.items():
        base, kind, marker = segment_file(name)
        if kind in ("log", "index", "timeindex") and not marker:
            segments.setdefault(base, {})[kind] = data
    return {b: s for b, s in segments.items() if "log" in s}


def invariants(
    partition_files: dict[str, bytes], config: dict, closed: bool
) -> list[tuple[list[str], str]]:
    """INDEX-13 to INDEX-17 on every segment (FLUSH-9 too once closed): a list of
    (requirement IDs, what is wrong)."""
    problems: list[tuple[list[str], str]] = []
    segments = live_segments(partition_files)
    index_bytes = config.get("segment_index_bytes", 10 * 1024 * 1024)
    active = max(segments) if segments else None
    for base in sorted(segments):
        files = segments[base]
        log = decode_log(files["log"])
        name = f"{base:020d}"
        if "error" in log:
            problems.append((["APPEND-22"], f"{name}.log: unreadable at {log['error']}"))
            continue
        batches = log["batches"]
        for b in batches:
            if not b["crc_valid"]:
                problems.append(
                    (
                        ["APPEND-7", "APPEND-17"],
                        f"{name}.log: the batch at {b['position']} has a wrong CRC",
                    )
                )
        if base == active and not closed:
            # an open active index's entries live in memory: past them the file may hold
            # zeros or stale entries a truncation left (abstract_index.py); only its
            # trimmed form, at roll or close, is fixed by the spec
            continue
        if "index" in files:
            problems += _offset_index_problems(
                name, base, files["index"], batches, index_bytes, closed
            )
        if "timeindex" in files:
            problems += _time_index_problems(
                name, base, files["timeindex"], batches, index_bytes, closed
            )
    return problems


def _size_problems(name, data, entries, size, index_bytes, closed) -> list:
    """A trimmed index (a segment that is not active, or any after close) is exactly its
    entries, at most its capacity."""
    problems = []
    capacity = index_bytes // size
    if len(entries) > capacity:
        problems.append(
            (["INDEX-17"], f"{name}: {len(entries)} entries, above its capacity {capacity}")
        )
    if len(data) != len(entries) * size:
        reqs = ["FLUSH-9", "INDEX-4"] if closed else ["INDEX-17", "INDEX-4"]
        problems.append(
            (
                reqs,
                f"{name}: {len(data)} bytes for {len(entries)} entries; a trimmed index holds exactly {len(entries) * size}",
            )
        )
    return problems


def _offset_index_problems(name, base, data, batches, index_bytes, closed):
    entries = real_offset_entries(data, base)
    label = f"{name}.index"
    problems = _size_problems(label, data, entries, 8, index_bytes, closed)
    starts = {b["position"]: i for i, b in enumerate(batches)}
    previous = None
    for offset, position in entries:
        if not base <= offset <= base + INT32_MAX or (previous is not None and offset <= previous):
            problems.append(
                (["INDEX-13"], f"{label}: entry ({offset}, {position}) out of order or range")
            )
        previous = offset
        at = starts.get(position)
        if at is None:
            problems.append(
                (
                    ["INDEX-14"],
                    f"{label}: entry ({offset}, {position}): no batch starts at {position}",
                )
            )
            continue
        if not any(b["last_offset"] == offset for b in batches[at:]):
            problems.append(
                (
                    ["INDEX-14"],
                    f"{label}: entry ({offset}, {position}): no batch from {position} on ends at offset {offset}",
                )
            )
        if any(b["last_offset"] >= offset for b in batches[:at]):
            problems.append(
                (
                    ["INDEX-14"],
                    f"{label}: entry ({offset}, {position}): a batch before {position} reaches offset {offset}",
                )
            )
    return problems


def _time_index_problems(name, base, data, batches, index_bytes, closed):
    entries = real_time_entries(data, base)
    label = f"{name}.timeindex"
    problems = _size_problems(label, data, entries, 12, index_bytes, closed)
    previous = None
    for timestamp, offset in entries:
        if timestamp < 0 or (
            previous is not None and (timestamp <= previous[0] or offset < previous[1])
        ):
            problems.append(
                (["INDEX-15"], f"{label}: entry ({timestamp}, {offset}) does not increase")
            )
        previous = (timestamp, offset)
        first = next((b for b in batches if b.get("max_timestamp", -1) == timestamp), None)
        if first is None or first["last_offset"] != offset:
            problems.append(
                (
                    ["INDEX-16"],
                    f"{label}: entry ({timestamp}, {offset}): the first batch with maxTimestamp {timestamp} does not end at {offset}",
                )
            )
        elif any(
            b["last_offset"] <= offset and b.get("max_timestamp", -1) > timestamp for b in batches
        ):
            problems.append(
                (
                    ["INDEX-16"],
                    f"{label}: entry ({timestamp}, {offset}): an earlier batch has a larger timestamp",
                )
            )
    return problems


# --- scenario expectations on files -------------------------------------------------------


def check_files(
    spec: dict,
    root: Path,
    partition: str,
    topic: str,
    partition_number: int,
    features: set[str] | frozenset[str] | None = None,
) -> list[str]:
    """A scenario's ``files`` step against the directory; a list of mismatches.
    ``exactly`` leaves out, on both sides, the files of features not in ``features``
    (the other keys name files the scenario's own features imply)."""
    pdir = root / partition
    problems: list[str] = []

    def path(name: str) -> Path:
        return (
            (pdir / expand_name(name)).resolve()
            if not name.startswith("../")
            else (root / name[3:])
        )

    def read(name: str) -> bytes | None:
        p = path(name)
        return p.read_bytes() if p.is_file() else None

    if "exactly" in spec:
        want = sorted(expand_name(n) for n in spec["exactly"] if is_visible(n, features))
        have = sorted(
            p.name for p in (pdir.iterdir() if pdir.exists() else ()) if p.is_file()
            if is_visible(p.name, features)
        )  # fmt: skip
        if want != have:
            extra, missing = sorted(set(have) - set(want)), sorted(set(want) - set(have))
            problems.append(f"files: unexpected {extra}, missing {missing}")
    for name in spec.get("exist", ()):
        if read(name) is None:
            problems.append(f"{expand_name(name)}: missing")
    for name in spec.get("absent", ()):
        if path(name).exists():
            problems.append(f"{expand_name(name)}: should not exist")
    for name, size in (spec.get("size") or {}).items():
        data = read(name)
        if data is None or len(data) != size:
            problems.append(
                f"{expand_name(name)}: {None if data is None else len(data)} bytes, expected {size}"
            )
    for name, text in (spec.get("text") or {}).items():
        data = read(name)
        if data is None or data.decode("utf-8", "replace") != text:
            problems.append(
                f"{expand_name(name)}: holds {None if data is None else data.decode('utf-8', 'replace')!r}, expected {text!r}"
            )
    for name, want in (spec.get("log") or {}).items():
        data = read(name)
        have = (
            None
            if data is None
            else [[b["base_offset"], b["last_offset"]] for b in decode_log(data)["batches"]]
        )
        if have != want:
            problems.append(f"{expand_name(name)}: batches {have}, expected {want}")
    for name, want in (spec.get("log_tail") or {}).items():
        data = read(name)
        have = None if data is None else decode_log(data)["tail_bytes"]
        if have != want:
            problems.append(
                f"{expand_name(name)}: {have} bytes after the last whole batch, expected {want}"
            )
    for key, decoder in (("offset_index", real_offset_entries), ("time_index", real_time_entries)):
        for name, want in (spec.get(key) or {}).items():
            data = read(name)
            base = segment_file(expand_name(name))[0]
            have = None if data is None else decoder(data, base)
            if have != want:
                problems.append(f"{expand_name(name)}: entries {have}, expected {want}")
    for lookup in spec.get("offset_lookup", ()):
        data = read(lookup["file"])
        base = segment_file(expand_name(lookup["file"]))[0]
        if data is None:
            problems.append(f"{expand_name(lookup['file'])}: missing")
            continue
        entries = [OffsetPosition(o, p) for o, p in real_offset_entries(data, base)]
        found = lookup_offset(entries, lookup["target"], base)
        if [found.offset, found.position] != lookup["expect"]:
            problems.append(
                f"{expand_name(lookup['file'])}: lookup({lookup['target']}) = {[found.offset, found.position]}, expected {lookup['expect']}"
            )
    for lookup in spec.get("time_lookup", ()):
        data = read(lookup["file"])
        base = segment_file(expand_name(lookup["file"]))[0]
        if data is None:
            problems.append(f"{expand_name(lookup['file'])}: missing")
            continue
        entries = [TimestampOffset(t, o) for t, o in real_time_entries(data, base)]
        found = lookup_timestamp(entries, lookup["target"], base)
        if [found.timestamp, found.offset] != lookup["expect"]:
            problems.append(
                f"{expand_name(lookup['file'])}: lookup({lookup['target']}) = {[found.timestamp, found.offset]}, expected {lookup['expect']}"
            )
    if "snapshots" in spec:
        have = sorted(
            base
            for base, kind, marker in (
                segment_file(p.name) for p in (pdir.iterdir() if pdir.exists() else ())
            )
            if kind == "snapshot" and not marker
        )
        if have != sorted(spec["snapshots"]):
            problems.append(f"snapshots at {have}, expected {sorted(spec['snapshots'])}")
    for name, want in (spec.get("producer_snapshot") or {}).items():
        problems += _snapshot_problems(expand_name(name), read(name), want)
    for name, want in (spec.get("txn_index") or {}).items():
        data = read(name)
        try:
            have = (
                None
                if data is None
                else [
                    [t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset]
                    for t in read_txn_index(data)
                ]
            )
        except KafkaLogError as exc:
            have = f"unreadable ({exc.category.value})"
        if have != want:
            problems.append(f"{expand_name(name)}: entries {have}, expected {want}")
    if "epochs" in spec:
        data = read("leader-epoch-checkpoint")
        try:
            have = (
                None
                if data is None
                else [[e.epoch, e.start_offset] for e in read_leader_epoch_checkpoint(data)]
            )
        except (KafkaLogError, ValueError) as exc:
            have = f"unreadable ({exc})"
        if have != spec["epochs"]:
            problems.append(f"leader-epoch-checkpoint: entries {have}, expected {spec['epochs']}")
    optional = {name: want for name, want in (spec.get("checkpoint_if_present") or {}).items()}
    for name, want in {**(spec.get("checkpoint") or {}), **optional}.items():
        data = read(f"../{name}")
        if data is None and name in optional:
            continue
        try:
            entries = [] if data is None else read_offset_checkpoint(data)
        except (KafkaLogError, ValueError) as exc:
            problems.append(f"{name}: unreadable ({exc})")
            continue
        have = next(
            (e.offset for e in entries if (e.topic, e.partition) == (topic, partition_number)), None
        )
        if data is None and want is not None:
            problems.append(f"{name}: missing")
        elif have != want:
            problems.append(
                f"{name}: entry for {topic}-{partition_number} is {have}, expected {want}"
            )
    return problems


def _snapshot_problems(name: str, data: bytes | None, want: list[dict]) -> list[str]:
    """A producer snapshot holds exactly the listed producers (in any order: SNAP-8 leaves
    the order open), each with the listed fields."""
    if data is None:
        return [f"{name}: missing"]
    try:
        have = {e["producer_id"]: e for e in snapshot_entries(data)}
    except KafkaLogError as exc:
        return [f"{name}: unreadable ({exc.category.value})"]
    problems = []
    wanted = {e["producer_id"]: e for e in want}
    if sorted(have) != sorted(wanted):
        problems.append(f"{name}: producers {sorted(have)}, expected {sorted(wanted)}")
    for pid in sorted(set(have) & set(wanted)):
        wrong = {k: (have[pid][k], v) for k, v in wanted[pid].items() if have[pid][k] != v}
        if wrong:
            shown = ", ".join(f"{k} {a} (expected {b})" for k, (a, b) in wrong.items())
            problems.append(f"{name}: producer {pid}: {shown}")
    return problems
