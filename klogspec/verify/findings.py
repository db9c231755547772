"""What ``klogspec verify`` reports: findings, each citing the requirement it checks.

A ``Finding`` names the rule (a requirement ID of spec/requirements.yaml), a severity,
and where: the file, the byte position in it and the Kafka offset when known (ERR-1,
ERR-3, ERR-4). Severities:

* ``error``: the bytes break a format rule a reader checks, or an invariant whose
  breakage makes reads return wrong data (a bad CRC, an index entry that is not a batch
  start, offsets going backwards);
* ``warning``: a state that loading repairs or discards, or that no Kafka writer leaves
  at rest (an orphan index, a stale ``.swap``, an untrimmed index, a torn tail of the
  active segment, a checkpoint ahead of the log);
* ``info``: worth knowing and normal (an unflushed tail, a compacted gap, a clean-shutdown
  marker).

The checks live in segment.py (one segment: its ``.log`` and indexes) and
partition.py (a partition directory and its log directory's checkpoints); the
walk over directories that runs both is run.py. The index rules come from
reference_impl/formats as ``Problem`` values that already name their rule (the log raises
the first, ``Findings.problem`` records each); readers raise errors with categories, not
requirement IDs: ``rule_for_error`` maps them back.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import StrEnum

from reference_impl.errors import Category, KafkaLogError, Problem

MAX_FINDINGS_PER_RULE = 100  # per file: a wrecked 10 MiB index must not give a million rows


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]


@dataclass(frozen=True)
class Finding:
    """One problem or fact, located as ERR-1/ERR-3/ERR-4 say."""

    rule: str
    severity: Severity
    file: str | None
    position: int | None
    offset: int | None
    message: str

    def to_dict(self) -> dict:
        return {
            "rule": self.rule, "severity": self.severity.value, "file": self.file,
            "position": self.position, "offset": self.offset, "message": self.message,
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict) -> Finding:
        return cls(
            data["rule"], Severity(data["severity"]), data["file"], data["position"],
            data["offset"], data["message"],
        )  # fmt: skip


class Findings:
    """Collects the findings of one unit of work, at most MAX_FINDINGS_PER_RULE per file and
    rule; the rest are counted and summed up in one last finding per file and rule."""

    def __init__(self, limit: int = MAX_FINDINGS_PER_RULE) -> None:
        self.items: list[Finding] = []
        self.limit = limit
        self.counts: Counter = Counter()
        self.severities: dict[tuple, Severity] = {}

    def add(
        self,
        rule: str,
        severity: Severity,
        file: str | None,
        message: str,
        *,
        position: int | None = None,
        offset: int | None = None,
    ) -> None:
        key = (file, rule)
        self.counts[key] += 1
        if self.counts[key] <= self.limit:
            self.items.append(Finding(rule, severity, file, position, offset, message))
        else:
            worst = self.severities.get(key, severity)
            self.severities[key] = severity if severity.rank > worst.rank else worst

    def problem(self, problem: Problem | None, severity: Severity = Severity.ERROR) -> bool:
        """A broken rule that a check of reference_impl/formats yielded (the log raises the
        first; verify reports them all); False for None."""
        if problem is None:
            return False
        self.add(
            problem.rule, severity, problem.file, problem.message,
            position=problem.position, offset=problem.offset,
        )  # fmt: skip
        return True

    def error(self, exc: KafkaLogError, severity: Severity = Severity.ERROR, **context) -> None:
        """A reader's error as a finding, with the rule ``rule_for_error`` gives it."""
        self.add(
            rule_for_error(exc, **context), severity, exc.file, f"{exc.category}: {exc.message}",
            position=exc.position, offset=exc.offset,
        )  # fmt: skip

    def done(self) -> list[Finding]:
        """The findings, with one 'and N more' finding per file and rule over the limit."""
        out = list(self.items)
        for (file, rule), count in self.counts.items():
            if count > self.limit:
                severity = self.severities[(file, rule)]
                more = f"... and {count - self.limit} more {rule} findings in this file"
                out.append(Finding(rule, severity, file, None, None, more))
        return out


# --- reader errors to requirement IDs ---------------------------------------------------

# (category, message fragment) -> rule, for categories several rules share (errors.md
# Table 1); the first fragment found in the message wins, "" matches anything.
_V2_RECORD_RULES = [
    ("negative record count", "BATCH-7"), ("records present", "REC-10"),
    ("left after", "REC-10"), ("overruns its record", "REC-7"), ("overruns the batch", "REC-2"),
    ("too short for its attributes", "REC-3"), ("body bytes but", "REC-3"),
    ("header count", "REC-8"), ("header key size", "REC-9"), ("longer than", "VARINT-2"),
    ("runs past the end", "VARINT-5"), ("", "REC-1"),
]  # fmt: skip
_LEGACY_RECORD_RULES = [
    ("null value", "LEGACY-9"), ("holds no inner", "LEGACY-9"), ("itself compressed", "LEGACY-12"),
    ("below its last inner offset", "LEGACY-16"), ("", "LEGACY-5"),
]  # fmt: skip
_CONTROL_RULES = [
    ("key of", "CTRL-2"), ("negative control record key version", "CTRL-3"),
    ("marker value of", "CTRL-6"), ("negative end transaction marker", "CTRL-7"), ("", "CTRL-1"),
]  # fmt: skip
_SNAPSHOT_RULES = [("version", "SNAP-2"), ("CRC", "SNAP-4"), ("", "SNAP-5")]
_METADATA_RULES = [
    ("expected '", "PMETA-2"), ("missing '", "PMETA-2"), ("version", "PMETA-3"),
    ("all-zero", "PMETA-6"), ("base64", "PMETA-5"), ("", "PMETA-2"),
]  # fmt: skip
_BY_MAGIC = {  # category -> (magic 2 rule, legacy rule)
    Category.CRC_MISMATCH: ("BATCH-4", "LEGACY-4"),
    Category.UNSUPPORTED_COMPRESSION: ("BATCH-10", "LEGACY-8"),
}
_FIXED = {
    Category.TRUNCATED_BATCH: "FRAME-9",
    Category.BAD_MAGIC: "FRAME-6",
    Category.RECORD_TOO_LARGE: "FRAME-11",
    Category.OFFSET_OVERFLOW: "FRAME-12",
    Category.CORRUPT_COMPRESSED_DATA: "COMP-4",
    Category.DECOMPRESSION_LIMIT: "COMP-3",
    Category.INVALID_FILE_NAME: "NAME-2",
}


def _by_fragment(message: str, table: list[tuple[str, str]]) -> str:
    return next(rule for fragment, rule in table if fragment in message)


def rule_for_error(
    exc: KafkaLogError, *, magic: int | None = None, in_records: bool = False, kind: str = ""
) -> str:
    """The requirement a reader error enforces. ``magic`` is the entry's (None for a framing
    error), ``in_records`` whether it came from decoding the records, ``kind`` the file kind
    for errors of small files ("offset_checkpoint", "leader_epoch_checkpoint",
    "partition_metadata")."""
    category, message = exc.category, exc.message
    if category in _FIXED:
        return _FIXED[category]
    if category in _BY_MAGIC:
        if category is Category.CRC_MISMATCH and in_records:
            return "LEGACY-19"  # an inner message of a legacy wrapper
        return _BY_MAGIC[category][0 if magic == 2 else 1]
    if category is Category.INVALID_BATCH_SIZE:
        if magic is None:
            return "FRAME-3"
        if magic == 2:
            return "BATCH-2"
        return "LEGACY-10" if in_records else "LEGACY-2"
    if category is Category.INVALID_RECORD:
        return _by_fragment(message, _V2_RECORD_RULES if magic == 2 else _LEGACY_RECORD_RULES)
    if category is Category.INVALID_CONTROL_RECORD:
        return _by_fragment(message, _CONTROL_RULES)
    if category is Category.CORRUPT_SNAPSHOT:
        return _by_fragment(message, _SNAPSHOT_RULES)
    if category is Category.CORRUPT_CHECKPOINT:
        return _checkpoint_rule(exc, kind)
    return "ERR-1"  # a category no reader of these files raises: cite the reporting rule


def _checkpoint_rule(exc: KafkaLogError, kind: str) -> str:
    if kind == "partition_metadata":
        return _by_fragment(exc.message, _METADATA_RULES)
    line = getattr(exc, "line", None)
    if line is None:
        return "CKPT-1"  # not UTF-8
    if line == 1:
        return "CKPT-5"
    if line == 2:
        return "CKPT-7" if "entries but found" in exc.message else "CKPT-6"
    return "CKPT-10" if kind == "leader_epoch_checkpoint" else "CKPT-9"


def exit_status(findings_by_severity: Counter, fail_on: Severity) -> int:
    """0 when no finding reaches ``fail_on``, else 1 (the CLI adds 2: could not run)."""
    return int(any(n and s.rank >= fail_on.rank for s, n in findings_by_severity.items()))
