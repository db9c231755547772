"""What the harness reads on disk, with the reference decoders (never the testee's).

* ``snapshot``: every file under a log directory, as bytes.
* ``decode``: the decoded JSON view of one file (the goldens' manifest stores it).
* ``invariants``: the rules every segment satisfies between operations (index.md §4,
  INDEX-13 to INDEX-17), checked on the testee's files.
* ``check_files``: a scenario's ``files`` expectations.

Some files belong to an optional feature (``FEATURE_FILES``, ``FEATURE_NAMES``): a testee
that does not claim it may write them or not, so ``visible`` hides them from every comparison
and ``check_files`` from every check that names them.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

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

from . import scratch
from .diagnostics import names, show
from .file_names import expand_name, segment_file

INT32_MAX = 2**31 - 1
FEATURE_FILES = {"snapshot": "producer_snapshots"}  # file kind -> the feature it belongs to
FEATURE_NAMES = {"leader-epoch-checkpoint": "leader_epoch_checkpoint"}  # file name -> feature
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


def snapshot(root: Path, anchor: Path | None = None) -> dict[str, bytes]:
    """Every file under ``root``: relative POSIX path -> bytes. Only regular files inside
    ``anchor`` (the scenario's directory, by default ``root``'s parent) are read, never
    through a link (scratch.py); anything else raises scratch.UnsafeFile."""
    return scratch.snapshot(root, root.parent if anchor is None else anchor)


def feature_of(name: str) -> str | None:
    """The optional feature a file belongs to (``.snapshot`` and ``.snapshot.deleted``:
    producer_snapshots; ``leader-epoch-checkpoint``: leader_epoch_checkpoint), or None for
    files every implementation is judged on."""
    feature = FEATURE_NAMES.get(name.rpartition("/")[2])
    return feature if feature is not None else FEATURE_FILES.get(segment_file(name)[1])


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
    partition_files: dict[str, bytes],
    config: dict,
    closed: bool,
    reloaded: bool = False,
    *,
    pristine: bool = False,
    forgetful: bool = False,
) -> list[tuple[list[str], str]]:
    """INDEX-13 to INDEX-17 on every segment (FLUSH-9 too once closed): a list of
    (requirement IDs, what is wrong).

    ``pristine``: no truncation, crash or damage came before. Then an open active index
    holds only its entries before its zeros (no truncation left stale ones), so INDEX-13
    to INDEX-16 apply to it too; and every trimmed time index ends with the entry of its
    segment's largest timestamp (INDEX-9: ROLL-17 at a roll, FLUSH-8 at close), which a
    load that recovered nothing could not know (FLUSH-8 "known in memory").

    ``reloaded``: the log was loaded after a crash or damage, so an index file may have
    been opened untrimmed. Its zero-filled slots then count as entries (INDEX-5: Kafka's
    AbstractIndex sets the position of a pre-existing file at its end), and a trim keeps
    them (INDEX-4): a zero tail after the real entries (OIDX-10) is allowed.

    ``forgetful``: a truncation after a reload may have left a segment's largest timestamp at
    -1 (TRUNC-9), so a later, lower timestamp is indexed (INDEX-16's exception) and close
    need not index the true largest one."""
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
        open_active = base == active and not closed
        if open_active and not pristine:
            # an open active index's entries live in memory: past them the file may hold
            # zeros or stale entries a truncation or a rebuild left (abstract_index.py);
            # only its trimmed form, at roll or close, is fixed by the spec
            continue
        if "index" in files:
            problems += _offset_index_problems(
                name, base, files["index"], batches, index_bytes, closed, not open_active, reloaded
            )
        if "timeindex" in files:
            problems += _time_index_problems(
                name,
                base,
                files["timeindex"],
                batches,
                index_bytes,
                closed,
                not open_active,
                reloaded,
                forgetful,
            )
            if forgetful:
                continue
            if pristine and not open_active:
                final = "FLUSH-8" if closed and base == active else "ROLL-17"
                problems += _final_time_entry(name, base, files["timeindex"], batches, final)
            elif closed and not reloaded:
                problems += _final_time_entry_problems(name, base, files["timeindex"], batches)
    return problems


def _final_time_entry(name, base, data, batches, rule) -> list:
    """A trimmed time index ends with (largest timestamp, the last offset of the first
    batch that has it) when a batch of its segment has a timestamp (INDEX-9, INDEX-11)."""
    stamped = [b for b in batches if b.get("max_timestamp", -1) >= 0]
    if not stamped:
        return []
    largest = max(b["max_timestamp"] for b in stamped)
    first = next(b for b in stamped if b["max_timestamp"] == largest)
    entries = real_time_entries(data, base)
    want = [largest, first["last_offset"]]
    if entries and entries[-1] == want:
        return []
    last = f"ends with {show(entries[-1])}" if entries else "is empty"
    return [
        (
            ["INDEX-9", rule],
            f"{name}.timeindex: {last}; a trimmed time index ends with {show(want)}, the segment's largest timestamp and its offset",
        )
    ]


def _final_time_entry_problems(name, base, data, batches) -> list:
    """FLUSH-8 (and ROLL-17 at roll): once closed, a segment's time index ends with its
    largest timestamp. Only for a log never loaded after a crash or damage: a segment the
    load did not recover keeps the time index it had (LOAD-14, LOAD-17), final entry or not."""
    largest = max((b.get("max_timestamp", -1) for b in batches), default=-1)
    if largest <= 0:  # no timestamp (-1), or 0, which an entry cannot be told from a zero slot
        return []
    entries = real_time_entries(data, base)
    if entries and entries[-1][0] >= largest:
        return []
    last = entries[-1] if entries else "none"
    return [
        (
            ["FLUSH-8"],
            f"{name}.timeindex: the segment's largest timestamp {largest} has no entry after close (last entry {last})",
        )
    ]


def _size_problems(name, data, entries, size, index_bytes, closed, reloaded=False) -> list:
    """A trimmed index (a segment that is not active, or any after close) is exactly its
    entries, at most its capacity; after a reload, zero slots may count as entries."""
    problems = []
    capacity = index_bytes // size
    if len(entries) > capacity:
        problems.append(
            (["INDEX-17"], f"{name}: {len(entries)} entries, above its capacity {capacity}")
        )
    used = len(entries) * size
    zero_slots = reloaded and len(data) % size == 0 and not any(data[used:])
    # INDEX-23 (MAY, Kafka 4.4.0): a close may leave a loaded index's part slot, no entry
    part_slot = closed and len(data) % size and len(data) // size * size == used
    if len(data) != used and not zero_slots and not part_slot:
        reqs = ["FLUSH-9", "INDEX-4"] if closed else ["INDEX-17", "INDEX-4"]
        problems.append(
            (
                reqs,
                f"{name}: {len(data)} bytes for {len(entries)} entries; a trimmed index holds exactly {len(entries) * size}",
            )
        )
    return problems


def trimmed_offset_entries(data: bytes, base: int) -> list[list[int]]:
    """The entries of a trimmed offset index, where every slot is an entry (INDEX-5): an
    all-zero first slot is the entry (base offset, 0), which a log that indexes its first
    append (against the SHOULD of INDEX-7) writes; later ones end the entries as in
    real_offset_entries."""
    if len(data) >= 8 and data[:8] == bytes(8):
        return [[base, 0], *real_offset_entries(data[8:], base)]
    return real_offset_entries(data, base)


def _offset_index_problems(
    name, base, data, batches, index_bytes, closed, trimmed=True, reloaded=False
):
    entries = trimmed_offset_entries(data, base) if trimmed else real_offset_entries(data, base)
    label = f"{name}.index"
    problems = (
        _size_problems(label, data, entries, 8, index_bytes, closed, reloaded) if trimmed else []
    )
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


def _time_index_problems(
    name, base, data, batches, index_bytes, closed, trimmed=True, reloaded=False, forgetful=False
):
    entries = real_time_entries(data, base)
    label = f"{name}.timeindex"
    problems = (
        _size_problems(label, data, entries, 12, index_bytes, closed, reloaded) if trimmed else []
    )
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
        elif not forgetful and any(
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


class FileProblem(NamedTuple):
    """One failed expectation of a ``files`` step: the check (``key``: a key of the step,
    or ``exactly-missing`` / ``exactly-extra``), the file it is about (its name in the
    partition directory, ``../<name>`` for the log directory's, None for the directory),
    and what is wrong."""

    key: str
    file: str | None
    message: str


def check_files(
    spec: dict,
    root: Path,
    partition: str,
    topic: str,
    partition_number: int,
    features: set[str] | frozenset[str] | None = None,
) -> list[FileProblem]:
    """A scenario's ``files`` step against the directory; a list of mismatches.
    ``exactly`` leaves out, on both sides, the files of features not in ``features``, and
    ``exist``, ``absent``, ``size`` and ``text`` skip the names of such files (the other keys
    name files the scenario's own features imply). A ``checkpoint_if_present`` value may be
    a list: any of its values passes (CKPT-B-7: the file holds what was right when the log
    chose to write it)."""
    pdir = root / partition
    problems: list[FileProblem] = []

    def path(name: str) -> Path:
        return pdir / expand_name(name) if not name.startswith("../") else root / name[3:]

    def read(name: str) -> bytes | None:  # regular files only, never through a link
        return scratch.read_if_file(path(name), root.parent)

    def problem(key: str, name: str | None, message: str) -> None:
        shown = None if name is None else (name if name.startswith("../") else expand_name(name))
        problems.append(FileProblem(key, shown, message))

    if "exactly" in spec:
        want = sorted(expand_name(n) for n in spec["exactly"] if is_visible(n, features))
        have = sorted(
            n for n in scratch.regular_names(pdir, root.parent) if is_visible(n, features)
        )
        for name in sorted(set(want) - set(have)):
            problem(
                "exactly-missing",
                name,
                f"{name}: missing (the directory should hold exactly {names(want)})",
            )
        for name in sorted(set(have) - set(want)):
            problem(
                "exactly-extra",
                name,
                f"{name}: should not exist (the directory should hold exactly {names(want)})",
            )

    def judged(name: str) -> bool:
        return is_visible(name, features)

    for name in filter(judged, spec.get("exist", ())):
        if read(name) is None:
            problem("exist", name, f"{expand_name(name)}: missing")
    for name in filter(judged, spec.get("absent", ())):
        if scratch.status(path(name), root.parent) != "absent":
            problem("absent", name, f"{expand_name(name)}: should not exist")
    for name, size in (spec.get("size") or {}).items():
        if not judged(name):
            continue
        data = read(name)
        if data is None:
            problem("size", name, f"{expand_name(name)}: missing, expected {size} bytes")
        elif len(data) != size:
            problem("size", name, f"{expand_name(name)}: {len(data)} bytes, expected {size}")
    for name, text in (spec.get("text") or {}).items():
        if not judged(name):
            continue
        data = read(name)
        if data is None:
            problem("text", name, f"{expand_name(name)}: missing, expected {show(text)}")
        elif data.decode("utf-8", "replace") != text:
            problem(
                "text",
                name,
                f"{expand_name(name)}: holds {show(data.decode('utf-8', 'replace'))}, expected {show(text)}",
            )
    for name, want in (spec.get("log") or {}).items():
        data = read(name)
        if data is None:
            problem("log", name, f"{expand_name(name)}: missing, expected batches {show(want)}")
            continue
        have = [[b["base_offset"], b["last_offset"]] for b in decode_log(data)["batches"]]
        if have != want:
            problem(
                "log", name, f"{expand_name(name)}: batches {show(have)}, expected {show(want)}"
            )
    for name, want in (spec.get("log_tail") or {}).items():
        data = read(name)
        if data is None:
            problem("log_tail", name, f"{expand_name(name)}: missing")
            continue
        have = decode_log(data)["tail_bytes"]
        if have != want:
            problem(
                "log_tail",
                name,
                f"{expand_name(name)}: {have} bytes after the last whole batch, expected {want}",
            )
    for key, decoder in (("offset_index", real_offset_entries), ("time_index", real_time_entries)):
        for name, want in (spec.get(key) or {}).items():
            data = read(name)
            if data is None:
                problem(key, name, f"{expand_name(name)}: missing, expected entries {show(want)}")
                continue
            have = decoder(data, segment_file(expand_name(name))[0])
            if have != want:
                problem(
                    key, name, f"{expand_name(name)}: entries {show(have)}, expected {show(want)}"
                )
    for key, decoder, entry, lookup_in in (
        ("offset_lookup", real_offset_entries, OffsetPosition, lookup_offset),
        ("time_lookup", real_time_entries, TimestampOffset, lookup_timestamp),
    ):
        for lookup in spec.get(key, ()):
            name = lookup["file"]
            data = read(name)
            if data is None:
                problem(key, name, f"{expand_name(name)}: missing")
                continue
            base = segment_file(expand_name(name))[0]
            found = list(
                lookup_in([entry(*e) for e in decoder(data, base)], lookup["target"], base)
            )
            if found != lookup["expect"]:
                problem(
                    key,
                    name,
                    f"{expand_name(name)}: lookup({lookup['target']}) gives {show(found)}, expected {show(lookup['expect'])}",
                )
    if "snapshots" in spec:
        have = sorted(
            base
            for base, kind, marker in (
                segment_file(name) for name in scratch.regular_names(pdir, root.parent)
            )
            if kind == "snapshot" and not marker
        )
        if have != sorted(spec["snapshots"]):
            problem(
                "snapshots",
                None,
                f"snapshots at offsets {show(have)}, expected {show(sorted(spec['snapshots']))}",
            )
    for name, want in (spec.get("producer_snapshot") or {}).items():
        for message in _snapshot_problems(expand_name(name), read(name), want):
            problem("producer_snapshot", name, message)
    for name, want in (spec.get("txn_index") or {}).items():
        data = read(name)
        if data is None:
            problem(
                "txn_index", name, f"{expand_name(name)}: missing, expected entries {show(want)}"
            )
            continue
        try:
            have = [
                [t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset]
                for t in read_txn_index(data)
            ]
        except KafkaLogError as exc:
            problem(
                "txn_index",
                name,
                f"{expand_name(name)}: unreadable ({exc.category.value}), expected entries {show(want)}",
            )
            continue
        if have != want:
            problem(
                "txn_index",
                name,
                f"{expand_name(name)}: entries {show(have)}, expected {show(want)}",
            )
    if "epochs" in spec:
        data = read("leader-epoch-checkpoint")
        if data is None:
            problem(
                "epochs",
                "leader-epoch-checkpoint",
                f"leader-epoch-checkpoint: missing, expected entries {show(spec['epochs'])}",
            )
        else:
            try:
                have = [[e.epoch, e.start_offset] for e in read_leader_epoch_checkpoint(data)]
            except (KafkaLogError, ValueError) as exc:
                have = None
                problem(
                    "epochs",
                    "leader-epoch-checkpoint",
                    f"leader-epoch-checkpoint: unreadable ({exc}), expected entries {show(spec['epochs'])}",
                )
            if have is not None and have != spec["epochs"]:
                problem(
                    "epochs",
                    "leader-epoch-checkpoint",
                    f"leader-epoch-checkpoint: entries {show(have)}, expected {show(spec['epochs'])}",
                )
    optional = {name: want for name, want in (spec.get("checkpoint_if_present") or {}).items()}
    for name, want in {**(spec.get("checkpoint") or {}), **optional}.items():
        key = "checkpoint_if_present" if name in optional else "checkpoint"
        data = read(f"../{name}")
        allowed = want if isinstance(want, list) else [want]
        if data is None:
            if name not in optional and None not in allowed:
                problem(
                    key,
                    f"../{name}",
                    f"{name}: missing, expected an entry for {topic}-{partition_number} of "
                    + " or ".join(str(w) for w in allowed),
                )
            continue
        try:
            entries = read_offset_checkpoint(data)
        except (KafkaLogError, ValueError) as exc:
            problem(key, f"../{name}", f"{name}: unreadable ({exc})")
            continue
        have = next(
            (e.offset for e in entries if (e.topic, e.partition) == (topic, partition_number)), None
        )
        if have not in allowed:
            held = "no entry" if have is None else f"the entry {have}"
            wanted = " or ".join("none" if w is None else str(w) for w in allowed)
            problem(
                key,
                f"../{name}",
                f"{name}: holds {held} for {topic}-{partition_number}, expected {wanted}",
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
        problems.append(f"{name}: producers {show(sorted(have))}, expected {show(sorted(wanted))}")
    for pid in sorted(set(have) & set(wanted)):
        wrong = {k: (have[pid][k], v) for k, v in wanted[pid].items() if have[pid][k] != v}
        if wrong:
            shown = ", ".join(f"{k} {show(a)} (expected {show(b)})" for k, (a, b) in wrong.items())
            problems.append(f"{name}: producer {pid}: {shown}")
    return problems
