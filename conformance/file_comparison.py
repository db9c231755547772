"""The testee's files against the reference's run of the same scenario (docs/conformance/
results.md: ``golden_log``, ``golden_index``, ``golden_files``).

``RunFileComparison`` is mixed into ``Run`` (steps.py): byte for byte where the spec fixes
the bytes (``.log`` files and the checkpoint files) and by their entries where it does not
(index files: placement and preallocation are SHOULD, index.md; producer snapshots: their
entry order is open, SNAP-8). Each difference names the file, both sides and the rule that
fixes what differs. It uses the run's ``s``, ``golden``, ``features``, ``closed``,
``log_open`` and ``fail``.
"""

from __future__ import annotations

import hashlib

from . import check_rules, disk
from .diagnostics import (
    bytes_difference,
    show,
    text_difference,
)
from .disk import epoch_entries
from .file_names import segment_file
from .golden_files import reference_file

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


class RunFileComparison:
    """The golden file comparison of a ``Run`` (the module docstring)."""

    def _compare_files(self, files: dict[str, bytes], golden_files: dict | None = None) -> None:
        golden = self.golden.get("files", {}) if golden_files is None else golden_files
        recovered = any("crash" in s or "damage" in s for s in self.s.steps)
        truncated = any(
            "truncate_to" in s or "truncate_fully_and_start_at" in s for s in self.s.steps
        )
        live = [segment_file(n) for n in files if n.startswith(self.s.partition + "/")]
        active = max((b for b, k, m in live if k == "log" and not m), default=None)
        for name in sorted(set(golden) | set(files)):
            base, kind, marker = segment_file(name)
            fixed = name.rpartition("/")[2]
            if not disk.is_visible(name, self.features):
                continue  # a file of a feature the testee does not claim
            if fixed in ROOT_CHECKPOINTS and not self.closed:
                continue  # written when the log chooses, until close (CKPT-B-7, CLEAN-1)
            if (
                fixed == "leader-epoch-checkpoint"
                and "leader_epoch_checkpoint" not in self.features
            ):
                continue
            reqs = self._file_reqs(fixed, kind, marker)
            want, have = golden.get(name), files.get(name)
            if want is None or have is None:
                self._existence_difference(name, have, golden, files, reqs)
                continue
            if hashlib.sha256(have).hexdigest() == want["sha256"]:
                continue
            view = disk.decode(name, have)
            if kind == "snapshot" and _same_entries(view, want["decoded"]):
                continue  # the same producers: SNAP-8 leaves their order open
            if fixed in OFFSET_CHECKPOINTS and _same_lines_any_order(view, want["decoded"]):
                continue  # the same entries: Kafka writes a HashMap's, in no fixed order
            stale = kind in SEGMENT_INDEX_KINDS and self.log_open and base == active
            if stale and (truncated or recovered):
                # past its entries an open index may hold the bytes of entries a truncation
                # or a recovery removed, or zeros (INDEX-6): one side's decoded entries must
                # start the other's
                mine, ref_entries = view["entries"], want["decoded"]["entries"]
                shorter = min(len(mine), len(ref_entries))
                if mine[:shorter] == ref_entries[:shorter]:
                    continue
            theirs = reference_file(self.s.id, name, want["sha256"])
            if kind in SEGMENT_INDEX_KINDS:
                placement = check_rules.placement(recovered)
                if view["entries"] != want["decoded"]["entries"]:
                    self.fail(
                        "golden_index",
                        f"{name}: entries {show(view['entries'])}, the reference's {show(want['decoded']['entries'])}",
                        [placement], cause=f"{kind} entries placed otherwise", choice=[placement],
                    )  # fmt: skip
                else:
                    sized = len(have) != want["size"]
                    text = (
                        f"{len(have)} bytes, the reference's {want['size']} (the same entries before any zero-filled slot)"
                        if sized
                        else "the same entries and size, other bytes after the entries"
                    )
                    if theirs is not None:
                        text += f": {bytes_difference(have, theirs)}"
                    self.fail(
                        "golden_index", f"{name}: {text}", [check_rules.PREALLOCATION],
                        cause=f"{kind} file {'sized' if sized else 'filled'} otherwise",
                        choice=[check_rules.PREALLOCATION],
                    )  # fmt: skip
            elif kind == "log":
                self._log_difference(name, have, view, want, theirs, reqs)
            elif kind in ("snapshot", "txnindex"):
                mine = view.get("entries", view.get("error"))
                ref = want["decoded"].get("entries", want["decoded"].get("error"))
                self.fail(
                    "golden_files",
                    f"{name}: entries {show(mine)}, the reference's {show(ref)}",
                    sorted(set(reqs) | {"TXN-B-5"}) if kind == "txnindex" else sorted(set(reqs) | {"PSTATE-1"}),
                    cause=f"{kind}: entries differ from the reference's",
                )  # fmt: skip
            elif fixed == "leader-epoch-checkpoint" and self._epochs_allowed(files, have, theirs):
                continue  # APPEND-27: entries at the LEO that a refused append assigned
            else:
                self._text_difference(name, fixed, have, want, theirs, reqs)

    def _epochs_allowed(self, files: dict[str, bytes], have: bytes, theirs: bytes | None) -> bool:
        """Whether the testee's epoch file is the reference's plus APPEND-27's entries, each
        starting at or above the directory's LEO (the active segment's next offset)."""
        logs = [
            (base, name)
            for name in files
            if name.startswith(self.s.partition + "/")
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

    def _existence_difference(self, name, have, golden, files, reqs) -> None:
        """A file one run has and the other does not."""
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
            choice = [check_rules.LAZY_INDEXES]
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
            else:
                choice = [check_rules.DELETED_FILES]
        elif marker == ".deleted":
            choice = [check_rules.DELETED_FILES]  # deleted at once instead (RET-13)
        label = f".{kind}{marker}" if kind else name.rpartition("/")[2]
        self.fail(
            category, f"{name} {where}", reqs,
            cause=f"{label} file {'missing' if missing else 'not in the reference'}", choice=choice,
        )  # fmt: skip

    def _log_difference(self, name, have, view, want, theirs, reqs) -> None:
        """A .log that differs: the first batch field that differs, tagged with the rule that
        sets it, and where the bytes first differ."""
        follower = any((s.get("append") or {}).get("follower") for s in self.s.steps)
        leader = any(
            "append" in s and not (s["append"] or {}).get("follower") for s in self.s.steps
        )
        fields, text = _batch_difference(view, want["decoded"])
        rules = (fields and check_rules.log_field_rules(fields, follower, leader)) or reqs
        where = f"; {bytes_difference(have, theirs)}" if theirs is not None else ""
        self.fail(
            "golden_log", f"{name}: {text}{where}", rules,
            cause=f".log: {'batch ' + ', '.join(fields) if fields else 'batches'} differ from the reference's",
        )  # fmt: skip

    def _text_difference(self, name, fixed, have, want, theirs, reqs) -> None:
        """A checkpoint or other text file that differs: both sides, faithfully. A
        leader-epoch-checkpoint with the reference's entries written otherwise breaks only
        its format rule."""
        if theirs is None:  # no golden bytes at hand: the decoded lines, ends unknown
            theirs = "\n".join(want["decoded"].get("lines", [])).encode()
        cause = f"{fixed}: differs from the reference's"
        if fixed == "leader-epoch-checkpoint":
            mine_entries, ref_entries = epoch_entries(have), epoch_entries(theirs)
            if mine_entries is not None and mine_entries == ref_entries:
                reqs, cause = check_rules.EPOCH_FORMAT, f"{fixed}: format (the same entries)"
            else:
                cause = f"{fixed}: entries differ from the reference's"
        elif fixed in check_rules.TEXT_FILE_RULES:
            reqs = check_rules.TEXT_FILE_RULES[fixed]
        self.fail("golden_files", f"{name}: {text_difference(have, theirs)}", reqs, cause=cause)

    def _file_reqs(self, fixed: str, kind: str | None, marker: str) -> list[str]:
        snapshot_reqs = [r for r in self.s.requirements if r.startswith("SNAP-B-")]
        if kind == "snapshot" and marker == ".deleted":
            return sorted({"SNAP-B-8", *snapshot_reqs})
        if kind == "snapshot":
            recovered = any("crash" in s or "damage" in s for s in self.s.steps)
            return sorted({"SNAP-B-1", *(["SNAP-B-2"] if recovered else []), *snapshot_reqs})
        if marker == ".deleted":
            return ["RET-13", "RET-14"]
        if kind in SEGMENT_INDEX_KINDS:
            return [check_rules.LAZY_INDEXES]
        if kind == "txnindex":
            txn = (r for r in self.s.requirements if r.startswith("TXN-B-"))
            return sorted({check_rules.LAZY_TXN_INDEX, *txn})
        if fixed in ROOT_CHECKPOINTS:
            return ROOT_CHECKPOINTS[fixed]
        if fixed == "leader-epoch-checkpoint":
            return sorted(set(self.s.requirements) | {"CKPT-B-4"})
        if fixed == "partition.metadata":
            return ["CKPT-B-8"]
        return list(self.s.requirements)


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
