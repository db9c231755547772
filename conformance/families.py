"""Generators: a family's table rows turned into scenarios (scenarios.py).

A generator takes the family and one row and returns ``(variant, fields)`` pairs; the
loader names each scenario ``<family>.<row>.<variant>`` and fills in the family's
requirements and config. Expectations are computed here from the spec's own formulas
(roll.md Table 1, INDEX-7, READ-14, RET-7, RET-8), never from the reference, so a
boundary table states each rule once and yields the cases at, below and above it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

START = 1_700_000_000_000
EDGES = (("below", -1), ("at", 0), ("above", 1))

Generated = Iterator[tuple[str, dict]]
GENERATORS: dict[str, Callable[[dict, dict], Generated]] = {}


def generator(fn: Callable[[dict, dict], Generated]) -> Callable[[dict, dict], Generated]:
    GENERATORS[fn.__name__] = fn
    return fn


def size_of(value_bytes: int, records: int = 1) -> int:
    """The size of a batch of ``records`` records with values of ``value_bytes`` bytes."""
    from .batches import build

    return len(build({"value_bytes": value_bytes, "records": records}, START))


def one(value_bytes: int, times: int = 1, **fields) -> dict:
    """An append step of one batch, one record unless ``records`` (``times`` appends)."""
    step = {"append": {"batch": {"value_bytes": value_bytes, **fields}}}
    if times > 1:
        step["append"]["times"] = times
    return step


@generator
def roll_size(family: dict, row: dict) -> Generated:
    """ROLL-2 at its boundary: ``n`` appends of ``s`` bytes fill a segment; the next one
    rolls when ``segment_bytes < (n + 1) s`` (one byte below the exact fit), and not at
    the exact fit or one byte above it."""
    n, value = row["appends"], row["value_bytes"]
    s = size_of(value)
    for variant, delta in EDGES:
        segment_bytes = (n + 1) * s + delta
        rolls = segment_bytes < (n + 1) * s
        segments = [[0, n * s], [n, s]] if rolls else [[0, (n + 1) * s]]
        yield (
            variant,
            {
                "title": f"{n} appends of {s} bytes, then one more, with segment_bytes {segment_bytes}: "
                + ("rolls" if rolls else "no roll"),
                "config": {"segment_bytes": segment_bytes},
                "steps": [
                    one(value, times=n),
                    one(value),
                    {"state": {}, "expect": {"segments": segments}},
                ],
            },
        )


@generator
def set_size(family: dict, row: dict) -> Generated:
    """APPEND-21 at its boundary: a set of exactly ``segment_bytes`` bytes is accepted, one
    byte more is RECORD_BATCH_TOO_LARGE and leaves the log as it was."""
    s = size_of(row["value_bytes"])
    follower = row.get("follower", False)
    for variant, delta in EDGES:
        segment_bytes = s - delta
        step = {"append": {"batch": {"value_bytes": row["value_bytes"]}, "follower": follower}}
        if segment_bytes < s:
            step["expect"] = {"error": "RECORD_BATCH_TOO_LARGE", "unchanged": True}
            after = [[0, 0]]
        else:
            step["expect"] = {"first_offset": 0, "last_offset": 0}
            after = [[0, s]]
        yield (
            variant,
            {
                "title": f"a {s}-byte set with segment_bytes {segment_bytes}",
                "config": {"segment_bytes": segment_bytes, "max_message_bytes": 2 * s},
                "steps": [step, {"state": {}, "expect": {"segments": after}}],
            },
        )


@generator
def roll_time(family: dict, row: dict) -> Generated:
    """ROLL-3, ROLL-4: the second append rolls when ``time_waited > segment_ms − jitter``.
    ``record_time``: time_waited is the set's max timestamp minus the first batch's;
    otherwise (records without timestamps) the clock minus the segment's creation."""
    segment_ms, jitter = row["segment_ms"], row.get("jitter", 0)
    limit = segment_ms - jitter
    for variant, delta in EDGES:
        waited = limit + delta
        rolls = waited > limit
        if row["record_time"]:
            first = one(10, timestamp=START)
            second = one(10, timestamp=START + waited)
            steps = [first, second]
        else:
            steps = [one(10, timestamp=-1), {"clock": {"advance": waited}}, one(10, timestamp=-1)]
        steps.append({"state": {}, "expect": {"segment_bases": [0, 1] if rolls else [0]}})
        yield (
            variant,
            {
                "title": f"time_waited {waited} against segment_ms {segment_ms} - jitter {jitter}: "
                + ("rolls" if rolls else "no roll"),
                "config": {"segment_ms": segment_ms, "roll_jitter_ms": jitter},
                "steps": steps,
            },
        )


@generator
def roll_offset_index_full(family: dict, row: dict) -> Generated:
    """ROLL-5, INDEX-1: with index_interval_bytes 0 every append but a segment's first adds
    an offset-index entry; with equal timestamps the time index keeps one entry. A
    capacity of ``k`` entries (segment_index_bytes 8k, and one byte either side) makes the
    append after ``k + 1`` appends roll."""
    k = row["entries"]
    appends = k + 2
    for variant, delta in EDGES:
        index_bytes = 8 * k + delta
        capacity = index_bytes // 8
        first_segment = capacity + 1  # appends before the offset index is full
        bases = [0] if appends <= first_segment else [0, first_segment]
        yield (
            variant,
            {
                "title": f"segment_index_bytes {index_bytes} (capacity {capacity}): {appends} appends",
                "config": {"segment_index_bytes": index_bytes, "index_interval_bytes": 0},
                "steps": [
                    one(10, timestamp=START, times=appends),
                    {"state": {}, "expect": {"segment_bases": bases}},
                ],
            },
        )


@generator
def roll_time_index_full(family: dict, row: dict) -> Generated:
    """ROLL-6, INDEX-12: with increasing timestamps and index_interval_bytes 0 each append
    after the first adds a time-index entry; the time index is full at capacity − 1
    entries, so with capacity ``c`` the append after ``c`` appends rolls."""
    c = row["capacity"]
    appends = c + 1
    for variant, delta in EDGES:
        index_bytes = 12 * c + delta
        capacity = index_bytes // 12
        first_segment = capacity  # appends that fit: capacity - 1 entries after them
        bases = [0] if appends <= first_segment else [0, first_segment]
        steps = [one(10, timestamp=START + i) for i in range(appends)]
        steps.append({"state": {}, "expect": {"segment_bases": bases}})
        yield (
            variant,
            {
                "title": f"segment_index_bytes {index_bytes} (time capacity {capacity}): {appends} appends",
                "config": {"segment_index_bytes": index_bytes, "index_interval_bytes": 0},
                "steps": steps,
            },
        )


@generator
def roll_offset_range(family: dict, row: dict) -> Generated:
    """ROLL-7, ROLL-11: a follower batch whose last offset is more than 2^31 − 1 past the
    active segment's base rolls to a segment at its first offset."""
    base = 0
    for variant, delta in EDGES:
        last = base + 2**31 - 1 + delta
        rolls = last - base > 2**31 - 1
        batch = {"base_offset": last - 1, "records": 2, "value_bytes": 4}
        bases = [base, last - 1] if rolls else [base]
        steps = [
            {"append": {"batch": {"base_offset": base, "value_bytes": 4}, "follower": True}},
            {
                "append": {"batch": batch, "follower": True},
                "expect": {"first_offset": last - 1, "last_offset": last},
            },
            {"state": {}, "expect": {"segment_bases": bases, "log_end_offset": last + 1}},
        ]
        yield (
            variant,
            {
                "title": f"a follower batch ending {last - base} past the base: "
                + ("rolls" if rolls else "no roll"),
                "steps": steps,
            },
        )


@generator
def index_interval(family: dict, row: dict) -> Generated:
    """INDEX-7 at its boundary: appends of ``s`` bytes (batches of ``records`` records)
    with index_interval_bytes ``k·s`` and one byte either side. An entry (the append's
    last offset, its start position) is added when more than the interval was appended
    since the last entry; with several records per batch the last offset is not the base."""
    records = row.get("records", 1)
    s = size_of(row["value_bytes"], records)
    appends, k = row["appends"], row["every"]
    for variant, delta in EDGES:
        interval = k * s + delta
        entries, since = [], 0
        for i in range(appends):
            if since > interval:
                entries.append([records * (i + 1) - 1, i * s])
                since = 0
            since += s
        yield (
            variant,
            {
                "title": f"{appends} appends of {records}-record batches of {s} bytes, index_interval_bytes {interval}: {len(entries)} entries",
                "config": {
                    "index_interval_bytes": interval,
                    "segment_index_bytes": 8 * (appends + 2) * 3,
                },
                "steps": [
                    one(row["value_bytes"], timestamp=START, times=appends, records=records),
                    {"files": {"offset_index": {"0.index": entries}}, "reqs": ["INDEX-7"]},
                    {"close": {}},
                    {"files": {"offset_index": {"0.index": entries}}, "reqs": ["INDEX-7"]},
                ],
            },
        )


@generator
def read_size(family: dict, row: dict) -> Generated:
    """READ-13, READ-14: three batches of ``s`` bytes read from offset 0 with max_bytes at
    and one byte either side of 1, 2 and 3 batches, with and without min_one_message."""
    s = size_of(row["value_bytes"])
    total = 3 * s
    min_one = row["min_one_message"]
    for whole in (1, 2, 3):
        for variant, delta in EDGES:
            max_bytes = whole * s + delta
            limit = max(max_bytes, s) if min_one else max_bytes
            size = min(total, limit)
            batches = [[i, i] for i in range(size // s)]
            yield (
                f"{whole}-{variant}",
                {
                    "title": f"read(0, max_bytes={max_bytes}, min_one_message={min_one}) of 3 × {s} bytes",
                    "steps": [
                        one(row["value_bytes"], times=3),
                        {
                            "read": {
                                "start_offset": 0,
                                "max_bytes": max_bytes,
                                "min_one_message": min_one,
                            },
                            "expect": {
                                "size": size,
                                "batches": batches,
                                "first_entry_incomplete": limit < s,
                                "fetch_offset_metadata": [0, 0, 0],
                            },
                        },
                    ],
                },
            )


@generator
def retention_size(family: dict, row: dict) -> Generated:
    """RET-8 at its boundary: segments of ``s`` bytes (3 full, the active one holding one
    batch), retention_bytes such that the excess is just enough, exactly enough, or one
    byte short of deleting ``n`` segments."""
    s = size_of(row["value_bytes"])
    per_segment = row["per_segment"]
    seg = per_segment * s
    size = 3 * seg + s
    n = row["delete"]
    for variant, delta in EDGES:
        retention = size - n * seg - delta  # excess = n·seg + delta
        excess = size - retention
        deleted = 0
        if retention >= 0 and size >= retention:
            for _ in range(3):
                if excess - seg < 0:
                    break
                excess -= seg
                deleted += 1
        bases = [i * per_segment for i in range(deleted, 4)]
        yield (
            variant,
            {
                "title": f"log of {size} bytes, retention_bytes {retention}: {deleted} segments deleted",
                "config": {"segment_bytes": seg, "retention_bytes": retention, "retention_ms": -1},
                "steps": [
                    one(row["value_bytes"], times=3 * per_segment + 1),
                    {"delete_old_segments": {}, "expect": {"deleted_segments": deleted}},
                    {"state": {}, "expect": {"segment_bases": bases, "log_start_offset": bases[0]}},
                ],
            },
        )


@generator
def retention_time(family: dict, row: dict) -> Generated:
    """RET-7 at its boundary: the oldest segment's largest timestamp is ``retention_ms``
    before now, one ms less, or one ms more; only the last deletes it."""
    retention = row["retention_ms"]
    for variant, delta in EDGES:
        age = retention + delta
        deleted = 1 if age > retention else 0
        yield (
            variant,
            {
                "title": f"a segment whose newest record is {age} ms old, retention_ms {retention}",
                "config": {"segment_bytes": 200, "retention_ms": retention},
                "steps": [
                    one(32, timestamp=START, times=2),
                    one(32, timestamp=START + age + 10),
                    {"clock": {"set": START + age}},
                    {"delete_old_segments": {}, "expect": {"deleted_segments": deleted}},
                    {"state": {}, "expect": {"segment_bases": [0, 2][deleted:]}},
                ],
            },
        )


@generator
def invalid_config(family: dict, row: dict) -> Generated:
    """MODEL-8: each invalid value of Table 1, alone, makes open fail."""
    yield (
        "",
        {
            "title": f"open with {row['invalid']}: INVALID_ARGUMENT",
            "open": False,
            "steps": [
                {"open": {"config": row["invalid"]}, "expect": {"error": "INVALID_ARGUMENT"}}
            ],
        },
    )


@generator
def read_out_of_range(family: dict, row: dict) -> Generated:
    """READ-1 to READ-3: ten one-record batches, an optional log start offset (or a full
    truncation restarting at ``truncate_fully`` with log start ``log_start``), then a read
    at ``start``: OFFSET_OUT_OF_RANGE, nothing changed."""
    steps = [one(8, times=10)]
    if "truncate_fully" in row:
        truncation = {"offset": row["truncate_fully"], "log_start_offset": row["log_start"]}
        steps.append({"truncate_fully_and_start_at": truncation})
    elif row["log_start"]:
        steps.append({"delete_segments_before": {"offset": row["log_start"]}})
    refused = {"error": "OFFSET_OUT_OF_RANGE"}
    steps.append({"read": {"start_offset": row["start"]}, "expect": {**refused, "unchanged": True}})
    steps.append({"read": {"start_offset": row["start"], "max_bytes": 0}, "expect": refused})
    yield "", {"title": f"read at {row['start']}: OFFSET_OUT_OF_RANGE", "steps": steps}


WORKLOADS = {
    # three 100-byte batches at offsets 0..2 in segment 0, nothing flushed
    "three": [one(32, timestamp=START + i) for i in range(3)],
    # segment 0 (offsets 0..2) flushed by the roll, segment 3 (offsets 3..5) unflushed
    "two-segments": [one(32, timestamp=START + i) for i in range(6)],
    # a clean close, then the damage: the marker says no recovery is needed
    "closed": [one(32, timestamp=START + i) for i in range(3)] + [{"close": {}}],
}
# The recovery point a workload's last flush left. When a log writes its offset checkpoints
# before close is open (flush.md §3): after a crash the damage first writes the checkpoint as
# a periodic write would have left it, so no row depends on that timing.
WORKLOAD_RECOVERY_POINTS = {"three": 0, "two-segments": 3}


@generator
def damage(family: dict, row: dict) -> Generated:
    """The damage matrix: a workload, a crash (or a clean close), the row's damage, then
    open. The reopened log must hold exactly the row's batches, take the next append at
    its LEO, and close with every index invariant (RECOV-13). Requirements: the family's
    and the row's."""
    workload = row.get("workload", "three")
    steps = list(WORKLOADS[workload])
    damage = list(row["damage"])
    if workload != "closed":
        steps.append({"crash": {}})
        checkpoint = f"0\n1\ntopic 0 {WORKLOAD_RECOVERY_POINTS[workload]}\n"
        damage.insert(0, {"file": "../recovery-point-offset-checkpoint", "write_text": checkpoint})
    steps.append({"damage": damage})
    steps.append({"open": {}, "expect": row["expect"]})
    steps.append({"files": {"log": row["log"]}})
    leo = row["expect"]["log_end_offset"]
    steps.append(
        {
            "append": {"batch": {"value_bytes": 32, "timestamp": START + 10}},
            "expect": {"first_offset": leo},
        }
    )
    if row.get("crc_intact", True):
        steps.append({"read": {"start_offset": 0}, "expect": {"crc_valid": True}})
    steps.append({"close": {}})
    reqs = dict.fromkeys(list(family["requirements"]) + list(row.get("requirements", ())))
    yield (
        "",
        {
            "title": row.get("title", f"recovery from {row['row']}"),
            "requirements": list(reqs),
            "failure_mode": row["row"],
            "config": {"segment_bytes": 300, "index_interval_bytes": 0, **row.get("config", {})},
            "steps": steps,
        },
    )
