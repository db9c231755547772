"""The testee's files against the reference's run of the same scenario (docs/conformance/
results.md: ``golden_log``, ``golden_index``, ``golden_files``).

``FileComparison`` is the part of a ``Run`` (steps.py) that compares the files at the end
of the steps, and the epilogue's (epilogue.py) after its close: byte for byte where the spec
fixes the bytes (``.log`` files and the checkpoint files) and by their entries where it does
not (index files: placement and preallocation are SHOULD, index.md; producer snapshots:
their entry order is open, SNAP-8). Each difference names the file, both sides and the rule
that fixes what differs; it reads the run's ``RunState`` (run_state.py) and records there.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from . import check_rules, disk, same_records
from .diagnostics import (
    bytes_difference,
    show,
    text_difference,
)
from .disk import epoch_entries
from .file_names import segment_file
from .golden_files import reference_file
from .run_state import RunState

SEGMENT_INDEX_KINDS = ("index", "timeindex")
# offset checkpoints of the log directory: their entries' order is open (one line a partition)
OFFSET_CHECKPOINTS = {
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
}
ROOT_CHECKPOINTS = {  # log-directory files a log writes when it chooses, until close
    "recovery-point-offset-checkpoint": ["CKPT-B-5"],
    "log-start-offset-checkpoint": ["CKPT-B-6"],
    ".kafka_cleanshutdown": ["CLEAN-1", "CLEAN-3"],
}


class FileComparison:
    """The golden file comparison of a ``Run`` (the module docstring)."""

    def __init__(self, state: RunState) -> None:
        self.state = state

    def compare_files(self, files: dict[str, bytes], golden_files: dict | None = None) -> None:
        """Every file either run has, judged on (``_judged_file``), against the reference's
        (``golden_files``, else the goldens' final files): one missing on either side, else
        a difference the spec allows (``_allowed``), else the handler of its kind
        (``FILE_DIFFERENCES``) says what differs."""
        state = self.state
        golden = state.golden.get("files", {}) if golden_files is None else golden_files
        active = _active_base(files, state.scenario.partition)
        for name in sorted(set(golden) | set(files)):
            if not self._judged_file(name):
                continue
            base, kind, marker = segment_file(name)
            reqs = self._file_reqs(name.rpartition("/")[2], kind, marker)
            want, have = golden.get(name), files.get(name)
            if want is None or have is None:
                self._existence_difference(name, have, golden, files, reqs, base == active)
                continue
            if hashlib.sha256(have).hexdigest() == want["sha256"]:
                continue
            f = GoldenFile(name, base, kind, have, want, disk.decode(name, have), reqs, files)
            if self._allowed(f, open_active=state.log_open and base == active):
                continue
            f.theirs = reference_file(state.scenario.id, name, want["sha256"])
            if state.recompressed and self._same_records_file(f, golden):
                continue  # a rewritten compressed batch, compared as records (COMPACT-28)
            handler = FILE_DIFFERENCES.get(kind) or NAMED_DIFFERENCES.get(f.fixed, _text)
            handler(state, f)

    def _same_records_file(self, f: GoldenFile, golden: dict) -> bool:
        """A .log holding the golden's records (COMPACT-28), or its offset index pointing at
        the same batches of such a .log; a time index has no positions to differ in."""
        if f.kind not in ("log", "index") or (f.kind == "index" and not f.name.endswith(".index")):
            return False
        log_name = f.name.removesuffix(".index") + ".log" if f.kind == "index" else f.name
        mine, ref = f.files.get(log_name), golden.get(log_name)
        theirs = ref and reference_file(self.state.scenario.id, log_name, ref["sha256"])
        if mine is None or not theirs or not same_records.same_records(mine, theirs):
            return False
        if f.kind == "log":
            return True
        entries, ref_entries = f.view.get("entries"), f.want["decoded"].get("entries")
        return same_records.same_index_entries(entries, ref_entries, mine, theirs)

    def _judged_file(self, name: str) -> bool:
        """Whether a file counts now: not one of a feature the testee does not claim, nor a
        log-directory checkpoint before close (written when the log chooses, CKPT-B-7,
        CLEAN-1)."""
        fixed = name.rpartition("/")[2]
        features = self.state.features
        if not disk.is_visible(name, features):
            return False
        if fixed in ROOT_CHECKPOINTS and not self.state.closed:
            return False
        return fixed != "leader-epoch-checkpoint" or "leader_epoch_checkpoint" in features

    def _allowed(self, f: GoldenFile, open_active: bool) -> bool:
        """A difference the spec leaves open: a producer snapshot's entry order (SNAP-8), an
        offset checkpoint's line order (Kafka writes a HashMap's), and what an open active
        index holds past its entries after a truncation or a recovery (INDEX-6)."""
        if f.kind == "snapshot" and _same_entries(f.view, f.want["decoded"]):
            return True
        if f.fixed in OFFSET_CHECKPOINTS and _same_lines_any_order(f.view, f.want["decoded"]):
            return True
        if f.kind not in SEGMENT_INDEX_KINDS or not open_active:
            return False
        scenario = self.state.scenario
        if not (scenario.truncates or scenario.reloads_after_failure):
            return False
        # past its entries an open index may hold the bytes of entries a truncation or a
        # recovery removed, or zeros: one side's decoded entries must start the other's
        mine, ref_entries = f.view["entries"], f.want["decoded"]["entries"]
        shorter = min(len(mine), len(ref_entries))
        return mine[:shorter] == ref_entries[:shorter]

    def _existence_difference(self, name, have, golden, files, reqs, active=False) -> None:
        """A file one run has and the other does not (``active``: of the active segment)."""
        base, kind, marker = segment_file(name)
        missing = have is None
        where = (
            "is missing (the reference's run has it)"
            if missing
            else "should not exist (the reference's run does not have it)"
        )
        category = (
            "golden_index"
            if kind in SEGMENT_INDEX_KINDS + ("txnindex",) and not marker
            else "golden_files"
        )
        choice: list[str] = []
        if kind in SEGMENT_INDEX_KINDS and not marker:
            closing = not missing and active and self.state.closed
            choice = [check_rules.CLOSE_INDEXES if closing else check_rules.LAZY_INDEXES]
        elif name.endswith("leader-epoch-checkpoint") and missing and not golden[name]["size"]:
            choice = [check_rules.EMPTY_EPOCH_FILE]
        elif kind == "txnindex" and not marker:
            if not missing and not have:
                choice = [check_rules.LAZY_TXN_INDEX]
            else:
                reqs = sorted({r for r in reqs if r != check_rules.LAZY_TXN_INDEX} | {"TXN-B-5"})
        elif kind in SEGMENT_INDEX_KINDS + ("txnindex",) and marker == ".deleted":
            log = f"{name.rpartition('/')[0]}/{base:020d}.log.deleted"
            if (log in golden) == (log in files):
                # both runs deleted the segment: only whether its index existed differs
                choice = [
                    check_rules.LAZY_INDEXES if kind != "txnindex" else check_rules.LAZY_TXN_INDEX
                ]
                if kind != "txnindex" and not missing:
                    choice = [check_rules.REPLACED_INDEXES]
            else:
                choice = [check_rules.DELETED_FILES]
        elif marker == ".deleted":
            choice = [check_rules.DELETED_FILES]  # deleted at once instead (RET-13)
        label = f".{kind}{marker}" if kind else name.rpartition("/")[2]
        self.state.fail(
            category, f"{name} {where}", reqs,
            cause=f"{label} file {'missing' if missing else 'not in the reference'}", choice=choice,
        )  # fmt: skip

    def _file_reqs(self, fixed: str, kind: str | None, marker: str) -> list[str]:
        scenario = self.state.scenario
        snapshot_reqs = [r for r in scenario.requirements if r.startswith("SNAP-B-")]
        if kind == "snapshot" and marker == ".deleted":
            return sorted({"SNAP-B-8", *snapshot_reqs})
        if kind == "snapshot":
            recovered = ["SNAP-B-2"] if scenario.reloads_after_failure else []
            return sorted({"SNAP-B-1", *recovered, *snapshot_reqs})
        if marker == ".deleted":
            return ["RET-13", "RET-14"]
        if kind in SEGMENT_INDEX_KINDS:
            return [check_rules.LAZY_INDEXES]
        if kind == "txnindex":
            txn = (r for r in scenario.requirements if r.startswith("TXN-B-"))
            return sorted({check_rules.LAZY_TXN_INDEX, *txn})
        if fixed in ROOT_CHECKPOINTS:
            return ROOT_CHECKPOINTS[fixed]
        if fixed == "leader-epoch-checkpoint":
            return sorted(set(scenario.requirements) | {"CKPT-B-4"})
        if fixed == "partition.metadata":
            return ["CKPT-B-8"]
        return list(scenario.requirements)


def _same_lines_any_order(view: dict, want: dict) -> bool:
    """An offset checkpoint's version and count lines equal, and its entry lines the same set."""
    mine, ref = view.get("lines"), want.get("lines")
    return (
        mine is not None and ref is not None and mine[:2] == ref[:2] and sorted(mine) == sorted(ref)
    )


def _same_entries(view: dict, want: dict) -> bool:
    """Two decoded producer snapshots hold the same entries, in any order."""
    if "entries" not in view or "entries" not in want:
        return False
    return sorted(view["entries"]) == sorted(want["entries"])


def _batch_difference(view: dict, want: dict) -> tuple[list[str], str]:
    """The batch fields that first differ between two decoded .log views (empty when the
    batches differ in number or only in their tail), and the difference in words."""
    have_b, want_b = view.get("batches", []), want.get("batches", [])
    for i, (h, w) in enumerate(zip(have_b, want_b, strict=False)):
        if h != w:
            keys = [k for k in sorted(set(h) | set(w)) if h.get(k) != w.get(k)]
            shown = ", ".join(
                f"{k} {show(h.get(k))} (the reference's {show(w.get(k))})" for k in keys
            )
            return keys, f"batch {i} at byte {h.get('position')}: {shown}"
    if len(have_b) != len(want_b):
        return [], f"{len(have_b)} batches, the reference's {len(want_b)}"
    return [], f"{view['size']} bytes, the reference's {want['size']} (after the batches)"


@dataclass
class GoldenFile:
    """One file both runs have, with other bytes: the testee's (``have``, decoded as
    ``view``), the reference's manifest entry (``want``) and bytes when at hand
    (``theirs``), the rules a difference breaks (``reqs``), and the testee's whole
    directory (``files``)."""

    name: str
    base: int | None
    kind: str | None
    have: bytes
    want: dict
    view: dict
    reqs: list[str]
    files: dict[str, bytes]
    theirs: bytes | None = None

    @property
    def fixed(self) -> str:
        return self.name.rpartition("/")[2]


def _index(state: RunState, f: GoldenFile) -> None:
    """An ``.index`` or ``.timeindex``: its entries (placement, INDEX-7 or INDEX-8), else
    its size or its bytes past the entries (preallocation, INDEX-2); both SHOULD."""
    ref_entries = f.want["decoded"]["entries"]
    if f.view["entries"] != ref_entries:
        placement = check_rules.placement(state.scenario.reloads_after_failure)
        message = (
            f"{f.name}: entries {show(f.view['entries'])}, the reference's {show(ref_entries)}"
        )
        state.fail(
            "golden_index", message, [placement],
            cause=f"{f.kind} entries placed otherwise", choice=[placement],
        )  # fmt: skip
        return
    sized = len(f.have) != f.want["size"]
    text = (
        f"{len(f.have)} bytes, the reference's {f.want['size']} (the same entries before any zero-filled slot)"
        if sized
        else "the same entries and size, other bytes after the entries"
    )
    if f.theirs is not None:
        text += f": {bytes_difference(f.have, f.theirs)}"
    choice = check_rules.index_size_choice(f.kind, len(f.have), f.want["size"])
    state.fail(
        "golden_index", f"{f.name}: {text}", choice,
        cause=f"{f.kind} file {'sized' if sized else 'filled'} otherwise", choice=choice,
    )  # fmt: skip


def _log(state: RunState, f: GoldenFile) -> None:
    """A ``.log``: the first batch field that differs, tagged with the rule that sets it
    (APPEND-16, APPEND-17, APPEND-19: check_rules.LOG_FIELD_RULES), and where the bytes
    first differ."""
    steps = state.scenario.steps
    follower = any((s.get("append") or {}).get("follower") for s in steps)
    leader = any("append" in s and not (s["append"] or {}).get("follower") for s in steps)
    fields, text = _batch_difference(f.view, f.want["decoded"])
    rules = (fields and check_rules.log_field_rules(fields, follower, leader)) or f.reqs
    where = f"; {bytes_difference(f.have, f.theirs)}" if f.theirs is not None else ""
    state.fail(
        "golden_log", f"{f.name}: {text}{where}", rules,
        cause=f".log: {'batch ' + ', '.join(fields) if fields else 'batches'} differ from the reference's",
    )  # fmt: skip


def _entries(state: RunState, f: GoldenFile) -> None:
    """A producer snapshot (PSTATE-1) or a ``.txnindex`` (TXN-B-5): its decoded entries."""
    mine = f.view.get("entries", f.view.get("error"))
    ref = f.want["decoded"].get("entries", f.want["decoded"].get("error"))
    rule = "TXN-B-5" if f.kind == "txnindex" else "PSTATE-1"
    state.fail(
        "golden_files", f"{f.name}: entries {show(mine)}, the reference's {show(ref)}",
        sorted(set(f.reqs) | {rule}), cause=f"{f.kind}: entries differ from the reference's",
    )  # fmt: skip


def _epochs_allowed(f: GoldenFile, partition: str) -> bool:
    """Whether the testee's epoch file is the reference's plus APPEND-27's entries, each
    starting at or above the directory's LEO (the active segment's next offset)."""
    files, have, theirs = f.files, f.have, f.theirs
    logs = [
        (base, name)
        for name in files
        if name.startswith(partition + "/")
        for base, kind, marker in [segment_file(name)]
        if kind == "log" and not marker
    ]
    if not logs or theirs is None:
        return False
    base, name = max(logs)
    batches = disk.decode(name, files[name]).get("batches") or []
    leo = batches[-1]["last_offset"] + 1 if batches else base
    mine = epoch_entries(have) if have else []
    ref = epoch_entries(theirs) if theirs else []
    if mine is None or ref is None:
        return False
    return check_rules.epochs_a_refusal_may_add(ref, mine, leo)


def _epochs(state: RunState, f: GoldenFile) -> None:
    """``leader-epoch-checkpoint`` (CKPT-B-2, CKPT-B-4): APPEND-27's entries at the LEO a
    refused append assigned are allowed; the reference's entries written otherwise break
    only the format rule (CKPT-B-4); else the entries differ."""
    if _epochs_allowed(f, state.scenario.partition):
        return
    theirs = _golden_text(f)
    mine_entries, ref_entries = epoch_entries(f.have), epoch_entries(theirs)
    if mine_entries is not None and mine_entries == ref_entries:
        reqs, cause = check_rules.EPOCH_FORMAT, f"{f.fixed}: format (the same entries)"
    else:
        reqs, cause = f.reqs, f"{f.fixed}: entries differ from the reference's"
    state.fail("golden_files", f"{f.name}: {text_difference(f.have, theirs)}", reqs, cause=cause)


def _text(state: RunState, f: GoldenFile) -> None:
    """A checkpoint or other text file: both sides, faithfully, under the rule that fixes
    its content (check_rules.TEXT_FILE_RULES: CKPT-B-5, CKPT-B-6, CKPT-B-8, CLEAN-3), else
    the file's rules."""
    reqs = check_rules.TEXT_FILE_RULES.get(f.fixed, f.reqs)
    message = f"{f.name}: {text_difference(f.have, _golden_text(f))}"
    state.fail("golden_files", message, reqs, cause=f"{f.fixed}: differs from the reference's")


def _golden_text(f: GoldenFile) -> bytes:
    """The reference's bytes, or without golden bytes at hand its decoded lines (their
    line ends unknown)."""
    if f.theirs is not None:
        return f.theirs
    return "\n".join(f.want["decoded"].get("lines", [])).encode()


def _active_base(files: dict[str, bytes], partition: str) -> int | None:
    live = [segment_file(n) for n in files if n.startswith(partition + "/")]
    return max((b for b, k, m in live if k == "log" and not m), default=None)


# a file's kind (or, for the other files, its name) -> what is compared when it differs,
# each handler given the run's state and the file; any other file is compared as text
FILE_DIFFERENCES = {
    "index": _index,
    "timeindex": _index,
    "log": _log,
    "snapshot": _entries,
    "txnindex": _entries,
}
NAMED_DIFFERENCES = {"leader-epoch-checkpoint": _epochs}
