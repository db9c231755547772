"""Which rule each check of the harness checks, and at which level (issue 13, B5).

A check's *requirements* are the rules it is about; its *level* is MUST unless the value
it expects rests on a choice the spec leaves to SHOULD rules, in which case a spec-abiding
implementation may differ and the check is SHOULD:

* index entries (which offsets an index holds) rest on INDEX-7 (appends) or INDEX-8
  (rebuilds): every exact-entries check, index lookup and golden index comparison;
* the size of an untrimmed index file rests on INDEX-2 (preallocation), and of a trimmed
  one on the number of entries, i.e. on placement;
* whether a deleted segment's ``.deleted`` files exist rests on RET-14;
* whether a rolled-in segment's index files exist yet rests on ROLL-20, a new log's first
  ones on MODEL-13, an empty ``leader-epoch-checkpoint`` on CKPT-B-1, and whether an empty
  ``.txnindex`` exists on INDEX-21.

A MAY leaves both answers open, so its check accepts both: the leader epoch entries a
refused append may leave (APPEND-27, ``epochs_a_refusal_may_add``), and a step's ``may``
answer (COMPACT-30, COMPACT-31: responses.py ``check_response_or_may``). Which rules are SHOULD
or MAY rather than MUST is spec/README.md §1.6's contract: a MUST is what a client of the log
or an implementation loading its directory can observe.

A golden difference names the rule of the field that differs (RESPONSE_FIELD_RULES,
LOG_FIELD_RULES) rather than every rule of the scenario; a field no single rule defines
keeps the scenario's (or the step's) requirements.
"""

from __future__ import annotations

from .requirements import load_requirements

INDEX_KINDS = ("index", "timeindex")
APPEND_PLACEMENT, REBUILD_PLACEMENT = "INDEX-7", "INDEX-8"
PREALLOCATION = "INDEX-2"
LAZY_INDEXES = "ROLL-20"
DELETED_FILES = "RET-14"  # a deleted segment's files renamed .deleted, removed after the delay
EAGER_FILES = "MODEL-13"  # the first segment's indexes and the epoch file of a new log
EMPTY_EPOCH_FILE = "CKPT-B-1"
LAZY_TXN_INDEX = "INDEX-21"
# MAYs where Kafka's releases disagree or an artefact is an accident (issue 21): both answers pass
REPLACED_INDEXES = "ROLL-22"  # a replaced empty segment's indexes made (and renamed .deleted)
CLOSE_INDEXES = "ROLL-23"  # the active segment's indexes made at a clean close (Kafka 4.4.0)
UNTRIMMED_PART_SLOT = "INDEX-23"  # a loaded index's part slot kept at close (Kafka 4.4.0)

# (op, result field) -> the rules that define the field, whatever the scenario is about
RESPONSE_FIELD_RULES: dict[tuple[str, str], list[str]] = {
    ("append", "max_timestamp"): ["APPEND-24"],
    ("append", "offset_of_max_timestamp"): ["APPEND-28"],
    ("append", "log_append_time"): ["APPEND-17"],
    ("read", "first_entry_incomplete"): ["READ-14"],
    ("read", "aborted_transactions"): ["READ-22"],
    ("roll", "base_offset"): ["ROLL-11", "ROLL-12"],
    ("open", "recovery_point"): ["RECOV-8", "RECOV-9"],
    ("open", "log_start_offset"): ["LOAD-18"],
    ("open", "last_stable_offset"): ["TXN-B-7"],
    ("state", "last_stable_offset"): ["TXN-B-7"],
}

# result fields a testee may leave out (protocol.md): not compared when absent, and a wrong
# one fails its own rule only, whatever the scenario's (APPEND-28: no release computes it)
OPTIONAL_RESULT_FIELDS = {("append", "offset_of_max_timestamp")}

# batch field of a .log file -> the rules that set it (a leader's append; a follower
# writes every field as given, APPEND-19)
LOG_FIELD_RULES: dict[str, list[str]] = {
    "base_offset": ["APPEND-16"],
    "last_offset": ["APPEND-16"],
    "partition_leader_epoch": ["APPEND-16"],
    "max_timestamp": ["APPEND-17"],
    "attributes": ["APPEND-17"],
    "crc": ["APPEND-16", "APPEND-17"],
}

# text files of a log directory whose content one rule fixes
TEXT_FILE_RULES = {
    # the value at close is the recovery point FLUSH-7 leaves (issue 28, 1: not always the LEO)
    "recovery-point-offset-checkpoint": ["CKPT-B-5", "FLUSH-7"],
    "log-start-offset-checkpoint": ["CKPT-B-6"],
    ".kafka_cleanshutdown": ["CLEAN-3"],
    "partition.metadata": ["CKPT-B-8"],
}
EPOCH_FORMAT = [
    "CKPT-B-4"
]  # a leader-epoch-checkpoint that holds the right entries, written otherwise


def epochs_a_refusal_may_add(
    before: list[list[int]], after: list[list[int]], log_end_offset: int
) -> bool:
    """APPEND-27 (MAY): whether a refused append's only change, ``before`` -> ``after`` in
    the leader epoch cache, is LEPOCH-4 assignments of entries that start at or above the
    LEO, as Kafka makes them before its set-size check or a later batch's negative epoch."""
    kept = 0
    while kept < min(len(before), len(after)) and before[kept] == after[kept]:
        kept += 1
    added, removed = after[kept:], before[kept:]
    if not added or any(start < log_end_offset for _, start in added):
        return False
    epoch, start = added[0]
    # LEPOCH-4 removes a later epoch or a later start; the same epoch at an earlier start
    # stays (LEPOCH-3)
    return all(e > epoch or s >= start for e, s in removed)


def open_choice(choice, features) -> bool:
    """Whether a check's expectation rests on a MAY, which accepts both answers: then it
    does not fail, unless the implementation claims ``kafka_exact`` (it is checked against
    Kafka's files byte for byte, and the MAY counts as a SHOULD)."""
    levels = load_requirements()
    return "kafka_exact" not in features and any(
        levels.get(c, {}).get("level") == "MAY" for c in choice
    )


def index_size_choice(kind: str, size: int, reference_size: int) -> list[str]:
    """The rule an index file's length rests on when its entries are the reference's: a part
    slot past them is INDEX-23's (a MAY), any other length INDEX-2's preallocation."""
    entry = 8 if kind == "index" else 12
    if size % entry and size // entry * entry == reference_size:
        return [UNTRIMMED_PART_SLOT]
    return [PREALLOCATION]


def placement(recovered: bool) -> str:
    """The SHOULD rule that places index entries: at appends, or at a rebuild."""
    return REBUILD_PLACEMENT if recovered else APPEND_PLACEMENT


def response_field_rules(op: str, key: str) -> list[str] | None:
    return RESPONSE_FIELD_RULES.get((op, key))


def log_field_rules(fields: list[str], follower: bool, leader: bool) -> list[str] | None:
    """The rules a difference in these batch fields breaks, or None when no field rule
    applies (a batch count or size: the scenario's own rules)."""
    found: set[str] = set()
    for name in fields:
        if name not in LOG_FIELD_RULES:
            return None
        if leader:
            found.update(LOG_FIELD_RULES[name])
        if follower:
            found.add("APPEND-19")
    return sorted(found) or None


def files_check_choice(
    key: str,
    kind: str | None,
    marker: str,
    *,
    recovered: bool,
    trimmed: bool,
    created_with_log: bool = False,
    empty: bool = False,
    name: str = "",
    log_renamed: bool = False,
    closed_active: bool = False,
) -> list[str]:
    """The SHOULD rules the expectation of one ``files`` check rests on (empty: none).

    ``key`` is the check (``offset_index``, ``size``, ``exist``, ``exactly-missing``...),
    ``kind`` and ``marker`` the file's (``index``, ``.deleted``); ``trimmed`` whether the
    index was trimmed (a segment that is not active, or any after close);
    ``created_with_log`` whether MODEL-13 makes the file (segment 0 of a new log);
    ``empty`` whether the testee's file is empty; ``name`` the file's name;
    ``log_renamed`` whether the segment's ``.log.deleted`` is there; ``closed_active``
    whether the file is the active segment's after a clean close.
    """
    if key == "absent" and kind in INDEX_KINDS:
        if marker == ".deleted" and log_renamed:
            return [REPLACED_INDEXES]  # whether the deleted segment's index existed: ROLL-22
        if not marker and closed_active:
            return [CLOSE_INDEXES]
    if key in ("offset_index", "time_index", "offset_lookup", "time_lookup"):
        return [placement(recovered)]
    if marker == ".deleted":
        return [DELETED_FILES]  # whether, and with which bytes: a deletion at once is as good
    if kind in INDEX_KINDS and not marker:
        if key == "size":
            return [placement(recovered)] if trimmed else [PREALLOCATION]
        if key in ("exist", "exactly-missing"):
            return [EAGER_FILES] if created_with_log else [LAZY_INDEXES]
    if name.endswith("leader-epoch-checkpoint") and key in ("exist", "exactly-missing"):
        return [EMPTY_EPOCH_FILE]  # one with entries is compared after the scenario (CKPT-B-2)
    if kind == "txnindex" and not marker and empty and key in ("absent", "exactly-extra"):
        return [LAZY_TXN_INDEX]
    return []
