"""A scenario's ``files`` step, checked on the testee's directory: one handler per key.

docs/conformance/scenarios.md names the keys of a ``files`` step; ``FILE_CHECKS`` maps each
key to the handler that checks it, in the order the checks run. Each handler reads the
files it names with the reference decoders (disk.py, never the testee's), cites in its
docstring the rule whose bytes it reads, and yields a ``FileProblem`` for each mismatch,
naming the file and both sides. The rules a failure is reported under are the step's
(``reqs``) plus the SHOULD choices its expectation rests on (check_rules.py, runner).

Files of an optional feature the testee does not claim are left out: ``exactly`` leaves
them out on both sides, and ``exist``, ``absent``, ``size`` and ``text`` skip their names
(the other keys name files the scenario's own features imply).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from reference_impl.errors import KafkaLogError
from reference_impl.formats.checkpoints import read_leader_epoch_checkpoint, read_offset_checkpoint
from reference_impl.formats.index_entries import (
    OffsetPosition,
    TimestampOffset,
    lookup_offset,
    lookup_timestamp,
    read_txn_index,
)

from . import scratch
from .diagnostics import names, show
from .disk import decode_log, is_visible, real_offset_entries, real_time_entries, snapshot_entries
from .file_names import expand_name, segment_file


class FileProblem(NamedTuple):
    """One failed expectation of a ``files`` step: the check (``key``: a key of the step,
    or ``exactly-missing`` / ``exactly-extra``), the file it is about (its name in the
    partition directory, ``../<name>`` for the log directory's, None for the directory),
    and what is wrong."""

    key: str
    file: str | None
    message: str


@dataclass(frozen=True)
class Directory:
    """The testee's directories as the handlers read them: ``root`` the log directory,
    ``partition`` its partition directory's name; files are read only inside ``root``'s
    parent (the scenario's directory), never through a link (scratch.py)."""

    root: Path
    partition: str
    topic: str
    partition_number: int
    features: set[str] | frozenset[str] | None

    @property
    def pdir(self) -> Path:
        return self.root / self.partition

    def path(self, name: str) -> Path:
        return self.root / name[3:] if name.startswith("../") else self.pdir / expand_name(name)

    def read(self, name: str) -> bytes | None:
        """A regular file's bytes, or None when it is absent (or not a regular file)."""
        return scratch.read_if_file(self.path(name), self.root.parent)

    def names(self) -> list[str]:
        return scratch.regular_names(self.pdir, self.root.parent)

    def judged(self, name: str) -> bool:
        """Whether the testee is judged on this file (disk.is_visible)."""
        return is_visible(name, self.features)


def problem(key: str, name: str | None, message: str) -> FileProblem:
    shown = None if name is None else (name if name.startswith("../") else expand_name(name))
    return FileProblem(key, shown, message)


Problems = Iterator[FileProblem]


def check_exactly(d: Directory, want: list[str]) -> Problems:
    """``exactly``: the partition directory holds these files and no other (MODEL-2,
    MODEL-13, ROLL-20, RET-14: which files exist when)."""
    want = sorted(expand_name(n) for n in want if d.judged(n))
    have = sorted(n for n in d.names() if d.judged(n))
    for name in sorted(set(want) - set(have)):
        yield problem(
            "exactly-missing",
            name,
            f"{name}: missing (the directory should hold exactly {names(want)})",
        )
    for name in sorted(set(have) - set(want)):
        yield problem(
            "exactly-extra",
            name,
            f"{name}: should not exist (the directory should hold exactly {names(want)})",
        )


def check_exist(d: Directory, want: list[str]) -> Problems:
    """``exist``: each file is there, a regular file (MODEL-13, ROLL-20)."""
    for name in filter(d.judged, want):
        if d.read(name) is None:
            yield problem("exist", name, f"{expand_name(name)}: missing")


def check_absent(d: Directory, want: list[str]) -> Problems:
    """``absent``: no such file, nor anything else under its name (RET-13, RET-14)."""
    for name in filter(d.judged, want):
        if scratch.status(d.path(name), d.root.parent) != "absent":
            yield problem("absent", name, f"{expand_name(name)}: should not exist")


def check_size(d: Directory, want: dict[str, int]) -> Problems:
    """``size``: each file's length in bytes (INDEX-2 preallocation, INDEX-4 trim, RECOV-3)."""
    for name, size in want.items():
        if not d.judged(name):
            continue
        data = d.read(name)
        if data is None:
            yield problem("size", name, f"{expand_name(name)}: missing, expected {size} bytes")
        elif len(data) != size:
            yield problem("size", name, f"{expand_name(name)}: {len(data)} bytes, expected {size}")


def check_text(d: Directory, want: dict[str, str]) -> Problems:
    """``text``: a text file's exact content (CKPT-8 and the checkpoint rules)."""
    for name, text in want.items():
        if not d.judged(name):
            continue
        data = d.read(name)
        if data is None:
            yield problem("text", name, f"{expand_name(name)}: missing, expected {show(text)}")
        elif data.decode("utf-8", "replace") != text:
            held = show(data.decode("utf-8", "replace"))
            yield problem("text", name, f"{expand_name(name)}: holds {held}, expected {show(text)}")


def check_log(d: Directory, want: dict[str, list]) -> Problems:
    """``log``: a ``.log`` holds batches with these [base offset, last offset] (APPEND-16,
    RECOV-3)."""
    for name, batches in want.items():
        data = d.read(name)
        if data is None:
            message = f"{expand_name(name)}: missing, expected batches {show(batches)}"
            yield problem("log", name, message)
            continue
        have = [[b["base_offset"], b["last_offset"]] for b in decode_log(data)["batches"]]
        if have != batches:
            message = f"{expand_name(name)}: batches {show(have)}, expected {show(batches)}"
            yield problem("log", name, message)


def check_log_tail(d: Directory, want: dict[str, int]) -> Problems:
    """``log_tail``: the bytes after a ``.log``'s last whole batch (RECOV-3: recovery cuts a
    torn tail)."""
    for name, tail in want.items():
        data = d.read(name)
        if data is None:
            yield problem("log_tail", name, f"{expand_name(name)}: missing")
            continue
        have = decode_log(data)["tail_bytes"]
        if have != tail:
            message = (
                f"{expand_name(name)}: {have} bytes after the last whole batch, expected {tail}"
            )
            yield problem("log_tail", name, message)


def _entries(d: Directory, key: str, decoder: Callable, want: dict[str, list]) -> Problems:
    for name, entries in want.items():
        data = d.read(name)
        if data is None:
            yield problem(key, name, f"{expand_name(name)}: missing, expected entries {show(entries)}")  # fmt: skip
            continue
        have = decoder(data, segment_file(expand_name(name))[0])
        if have != entries:
            yield problem(key, name, f"{expand_name(name)}: entries {show(have)}, expected {show(entries)}")  # fmt: skip


def check_offset_index(d: Directory, want: dict[str, list]) -> Problems:
    """``offset_index``: an ``.index``'s real entries, up to its first zero-filled slot
    (OIDX-10; which entries: INDEX-7, INDEX-8)."""
    return _entries(d, "offset_index", real_offset_entries, want)


def check_time_index(d: Directory, want: dict[str, list]) -> Problems:
    """``time_index``: a ``.timeindex``'s real entries, up to its first zero-filled slot
    (TIDX-12; which entries: INDEX-7, INDEX-8, INDEX-9)."""
    return _entries(d, "time_index", real_time_entries, want)


def _lookups(d: Directory, key: str, decoder, entry, lookup_in, want: list[dict]) -> Problems:
    for lookup in want:
        name = lookup["file"]
        data = d.read(name)
        if data is None:
            yield problem(key, name, f"{expand_name(name)}: missing")
            continue
        base = segment_file(expand_name(name))[0]
        found = list(lookup_in([entry(*e) for e in decoder(data, base)], lookup["target"], base))
        if found != lookup["expect"]:
            message = f"{expand_name(name)}: lookup({lookup['target']}) gives {show(found)}, expected {show(lookup['expect'])}"
            yield problem(key, name, message)


def check_offset_lookup(d: Directory, want: list[dict]) -> Problems:
    """``offset_lookup``: a lookup in an ``.index`` gives this entry (INDEX-18)."""
    return _lookups(d, "offset_lookup", real_offset_entries, OffsetPosition, lookup_offset, want)


def check_time_lookup(d: Directory, want: list[dict]) -> Problems:
    """``time_lookup``: a lookup in a ``.timeindex`` gives this entry (INDEX-19)."""
    return _lookups(d, "time_lookup", real_time_entries, TimestampOffset, lookup_timestamp, want)


def check_snapshots(d: Directory, want: list[int]) -> Problems:
    """``snapshots``: the offsets of the producer snapshots in the directory (SNAP-B-1)."""
    have = sorted(
        base
        for base, kind, marker in (segment_file(name) for name in d.names())
        if kind == "snapshot" and not marker
    )
    if have != sorted(want):
        message = f"snapshots at offsets {show(have)}, expected {show(sorted(want))}"
        yield problem("snapshots", None, message)


def check_producer_snapshot(d: Directory, want: dict[str, list[dict]]) -> Problems:
    """``producer_snapshot``: a snapshot holds exactly the listed producers, in any order
    (SNAP-8 leaves the order open), each with the listed fields (PSTATE-1)."""
    for name, producers in want.items():
        for message in _snapshot_problems(expand_name(name), d.read(name), producers):
            yield problem("producer_snapshot", name, message)


def _snapshot_problems(name: str, data: bytes | None, want: list[dict]) -> list[str]:
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


def check_txn_index(d: Directory, want: dict[str, list]) -> Problems:
    """``txn_index``: a ``.txnindex``'s entries [producer ID, first offset, last offset,
    last stable offset] (TXN-B-5)."""
    for name, entries in want.items():
        data = d.read(name)
        if data is None:
            yield problem("txn_index", name, f"{expand_name(name)}: missing, expected entries {show(entries)}")  # fmt: skip
            continue
        try:
            have = [
                [t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset]
                for t in read_txn_index(data)
            ]
        except KafkaLogError as exc:
            yield problem("txn_index", name, f"{expand_name(name)}: unreadable ({exc.category.value}), expected entries {show(entries)}")  # fmt: skip
            continue
        if have != entries:
            yield problem("txn_index", name, f"{expand_name(name)}: entries {show(have)}, expected {show(entries)}")  # fmt: skip


def check_epochs(d: Directory, want: list[list[int]]) -> Problems:
    """``epochs``: the entries of ``leader-epoch-checkpoint`` (CKPT-B-2, CKPT-B-3)."""
    name = "leader-epoch-checkpoint"
    data = d.read(name)
    if data is None:
        yield problem("epochs", name, f"{name}: missing, expected entries {show(want)}")
        return
    try:
        have = [[e.epoch, e.start_offset] for e in read_leader_epoch_checkpoint(data)]
    except (KafkaLogError, ValueError) as exc:
        yield problem("epochs", name, f"{name}: unreadable ({exc}), expected entries {show(want)}")  # fmt: skip
        return
    if have != want:
        yield problem("epochs", name, f"{name}: entries {show(have)}, expected {show(want)}")


def check_checkpoints(d: Directory, spec: dict) -> Problems:
    """``checkpoint`` and ``checkpoint_if_present``: this partition's entry in an offset
    checkpoint of the log directory (CKPT-B-5, CKPT-B-6). A value may be a list: any of its
    values passes (CKPT-B-7: the file holds what was right when the log chose to write
    it); ``checkpoint_if_present`` passes when the file is absent too."""
    optional = dict(spec.get("checkpoint_if_present") or {})
    for name, want in {**(spec.get("checkpoint") or {}), **optional}.items():
        key = "checkpoint_if_present" if name in optional else "checkpoint"
        allowed = want if isinstance(want, list) else [want]
        yield from _checkpoint(d, key, name, allowed, required=name not in optional)


def _checkpoint(d: Directory, key: str, name: str, allowed: list, required: bool) -> Problems:
    partition = f"{d.topic}-{d.partition_number}"
    data = d.read(f"../{name}")
    if data is None:
        if required and None not in allowed:
            wanted = " or ".join(str(w) for w in allowed)
            yield problem(key, f"../{name}", f"{name}: missing, expected an entry for {partition} of {wanted}")  # fmt: skip
        return
    try:
        entries = read_offset_checkpoint(data)
    except (KafkaLogError, ValueError) as exc:
        yield problem(key, f"../{name}", f"{name}: unreadable ({exc})")
        return
    mine = (d.topic, d.partition_number)
    have = next((e.offset for e in entries if (e.topic, e.partition) == mine), None)
    if have not in allowed:
        held = "no entry" if have is None else f"the entry {have}"
        wanted = " or ".join("none" if w is None else str(w) for w in allowed)
        yield problem(key, f"../{name}", f"{name}: holds {held} for {partition}, expected {wanted}")  # fmt: skip


# key of a ``files`` step -> its handler, in the order the checks run; the two checkpoint
# keys share one handler, which reads the whole step (a name may be in either)
FILE_CHECKS: dict[str, Callable[[Directory, object], Problems]] = {
    "exactly": check_exactly,
    "exist": check_exist,
    "absent": check_absent,
    "size": check_size,
    "text": check_text,
    "log": check_log,
    "log_tail": check_log_tail,
    "offset_index": check_offset_index,
    "time_index": check_time_index,
    "offset_lookup": check_offset_lookup,
    "time_lookup": check_time_lookup,
    "snapshots": check_snapshots,
    "producer_snapshot": check_producer_snapshot,
    "txn_index": check_txn_index,
    "epochs": check_epochs,
}
CHECKPOINT_KEYS = ("checkpoint", "checkpoint_if_present")


def check_files(
    spec: dict,
    root: Path,
    partition: str,
    topic: str,
    partition_number: int,
    features: set[str] | frozenset[str] | None = None,
) -> list[FileProblem]:
    """A scenario's ``files`` step against the log directory ``root``: each key's handler
    (``FILE_CHECKS``), then the checkpoints; a list of mismatches."""
    directory = Directory(root, partition, topic, partition_number, features)
    problems: list[FileProblem] = []
    for key, handler in FILE_CHECKS.items():
        if spec.get(key) is not None:
            problems += handler(directory, spec[key])
    if any(spec.get(key) for key in CHECKPOINT_KEYS):
        problems += check_checkpoints(directory, spec)
    return problems
