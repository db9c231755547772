"""The rules every segment satisfies between operations (docs/conformance: "invariant"
failures; spec index.md §4, INDEX-13 to INDEX-17, FLUSH-8, FLUSH-9), checked on the
testee's files with the reference decoders (disk.py).

``invariants`` decodes each live segment once and runs the handlers of
``SEGMENT_CHECKS`` over it, in order; each handler is named after what it checks, cites
its rules, and returns (requirement IDs, what is wrong) pairs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from reference_impl.constants import INT32_MAX

from .diagnostics import show
from .disk import decode_log, real_offset_entries, real_time_entries
from .file_names import segment_file

Problems = list[tuple[list[str], str]]


def live_segments(partition_files: dict[str, bytes]) -> dict[int, dict[str, bytes]]:
    """base offset -> {kind: bytes} for the segments of a partition directory (no marker)."""
    segments: dict[int, dict[str, bytes]] = {}
    for name, data in partition_files.items():
        base, kind, marker = segment_file(name)
        if kind in ("log", "index", "timeindex") and not marker:
            segments.setdefault(base, {})[kind] = data
    return {b: s for b, s in segments.items() if "log" in s}


@dataclass(frozen=True)
class Segment:
    """One live segment as the handlers see it: its files and decoded batches, and what
    the run did before (``invariants``' flags)."""

    base: int
    files: dict[str, bytes]
    batches: list[dict]
    index_bytes: int
    closed: bool
    active: bool  # the log's active segment
    reloaded: bool
    pristine: bool
    forgetful: bool

    @property
    def name(self) -> str:
        return f"{self.base:020d}"

    @property
    def open_active(self) -> bool:
        return self.active and not self.closed

    @property
    def indexes_fixed(self) -> bool:
        """Whether the spec fixes this segment's index files now. An open active index's
        entries live in memory: past them the file may hold zeros or stale entries a
        truncation or a rebuild left (abstract_index.py); only its trimmed form, at roll or
        close, is fixed, unless nothing could have left them (``pristine``)."""
        return not self.open_active or self.pristine


def invariants(
    partition_files: dict[str, bytes],
    config: dict,
    closed: bool,
    reloaded: bool = False,
    *,
    pristine: bool = False,
    forgetful: bool = False,
) -> Problems:
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
    problems: Problems = []
    segments = live_segments(partition_files)
    index_bytes = config.get("segment_index_bytes", 10 * 1024 * 1024)
    active = max(segments) if segments else None
    for base in sorted(segments):
        files = segments[base]
        log = decode_log(files["log"])
        if "error" in log:
            problems.append((["APPEND-22"], f"{base:020d}.log: unreadable at {log['error']}"))
            continue
        segment = Segment(
            base, files, log["batches"], index_bytes, closed, base == active, reloaded,
            pristine, forgetful,
        )  # fmt: skip
        for check in SEGMENT_CHECKS:
            problems += check(segment)
    return problems


def batch_crcs(s: Segment) -> Problems:
    """APPEND-7, APPEND-17: every batch of a ``.log`` has a valid CRC."""
    return [
        (["APPEND-7", "APPEND-17"], f"{s.name}.log: the batch at {b['position']} has a wrong CRC")
        for b in s.batches
        if not b["crc_valid"]
    ]


def offset_index_entries(s: Segment) -> Problems:
    """INDEX-13, INDEX-14 (and INDEX-4, INDEX-17, FLUSH-9 on a trimmed one): the entries of
    an ``.index`` increase and each points at the batch that ends at its offset."""
    if "index" not in s.files or not s.indexes_fixed:
        return []
    return _offset_index_problems(
        s.name, s.base, s.files["index"], s.batches, s.index_bytes, s.closed,
        not s.open_active, s.reloaded,
    )  # fmt: skip


def time_index_entries(s: Segment) -> Problems:
    """INDEX-15, INDEX-16 (and INDEX-4, INDEX-17, FLUSH-9 on a trimmed one): the entries of
    a ``.timeindex`` increase and each is the first batch with its timestamp."""
    if "timeindex" not in s.files or not s.indexes_fixed:
        return []
    return _time_index_problems(
        s.name, s.base, s.files["timeindex"], s.batches, s.index_bytes, s.closed,
        not s.open_active, s.reloaded, s.forgetful,
    )  # fmt: skip


def final_time_entry(s: Segment) -> Problems:
    """INDEX-9 with ROLL-17 (at a roll) or FLUSH-8 (at close): a trimmed time index ends
    with its segment's largest timestamp; not when a truncation may have forgotten it
    (``forgetful``), nor for a reloaded log that did not recover this segment."""
    if "timeindex" not in s.files or not s.indexes_fixed or s.forgetful:
        return []
    if s.pristine and not s.open_active:
        final = "FLUSH-8" if s.closed and s.active else "ROLL-17"
        return _final_time_entry(s.name, s.base, s.files["timeindex"], s.batches, final)
    if s.closed and not s.reloaded:
        return _final_time_entry_problems(s.name, s.base, s.files["timeindex"], s.batches)
    return []


# the checks of one segment, in the order their failures are reported
SEGMENT_CHECKS: tuple[Callable[[Segment], Problems], ...] = (
    batch_crcs,
    offset_index_entries,
    time_index_entries,
    final_time_entry,
)


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
