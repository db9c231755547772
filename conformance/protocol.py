"""The implementation-under-test contract (DESIGN.md §2): operations, features, schemas.

Every message of the subprocess transport, and every call of the in-process one, is
checked against ``schemas/protocol.schema.json`` (JSON Schema draft 2020-12): a request
against ``#/$defs/request``, a response against ``#/$defs/response`` and, when it
succeeded, its result against ``#/$defs/<op>_result``. A message that fails is a
*protocol violation*: the test it belongs to fails with that category, the run goes on.

Three operations extend DESIGN §2: ``fetch_offset_by_timestamp``,
``delete_old_segments`` and ``clean`` (feature ``compaction``: one pass of the log
cleaner thread, in the request and response shape of the shared Kafka testee,
spec/behaviour/compaction.md). Without them the MUST rules of read.md §4 (READ-15 to READ-20)
and the size and time passes of retention.md (RET-7 to RET-10) could not be reached
through the contract.

Transactions and idempotence (the features ``idempotence``, ``transaction_index``)
add optional fields, sent or expected only by the scenarios that need those features,
so a testee written before them answers the other scenarios unchanged: ``append``'s
``origin`` (``coordinator``: the transaction coordinator writing a COMMIT or ABORT
marker through the leader), ``read``'s ``isolation`` (``txn_committed``: bounded by
the last stable offset, answering ``aborted_transactions``), and ``state``'s
``last_stable_offset``.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

from reference_impl.errors import OPERATION_ERROR_CODES

PROTOCOL_VERSION = 1
# PROTO-5, what the harness accepts from a testee (protocol.md "Limits"): a longer line or a deeper
# value fails the test as a protocol error, so no answer can exhaust the harness's memory
# or recursion. The largest answer of the suite, a read of 1 MiB, is about 1.4 MB of JSON;
# the deepest, a state with its segments, nests 4 levels.
MAX_LINE_BYTES = 16 << 20  # bytes of one response line, its newline excluded
MAX_DEPTH = 32  # levels of arrays and objects in one response, the response itself 1

OPS = (
    "hello",
    "open",
    "append",
    "read",
    "roll",
    "flush",
    "truncate_to",
    "truncate_fully_and_start_at",
    "delete_segments_before",
    "delete_old_segments",
    "fetch_offset_by_timestamp",
    "state",
    "close",
    "crash",
    "clean",
)

# The optional features a testee may claim in ``hello``; scenarios that need one it does
# not claim are skipped with the reason. ``compression.<codec>``: batches compressed with
# that codec (a leader decodes them, APPEND-14); a scenario needs the feature of each
# codec it uses. ``compression`` alone, what testees claimed before the per-codec
# features, claims all four (expand_features). A testee that does not claim
# ``producer_snapshots`` may write ``.snapshot`` files or not: the harness ignores them.
CODECS = ("gzip", "snappy", "lz4", "zstd")
FEATURES = {
    "legacy_formats": "magic 0 and 1 entries (follower appends of legacy message sets)",
    "compression": "all four codecs: the same as claiming compression.gzip, .snappy, .lz4 and .zstd",
    **{f"compression.{codec}": f"batches compressed with {codec}" for codec in CODECS},
    "log_append_time": "message_timestamp_type LogAppendTime",
    "preallocate": "preallocate true (.log files created at segment_bytes)",
    "leader_epoch_checkpoint": "the leader-epoch-checkpoint file and cache (CKPT-B-1 to CKPT-B-4)",
    "crash_recovery": "crash, then open on damaged files (recovery)",
    "idempotence": "producer ids, sequences and epochs: duplicates of the last 5 batches, out-of-order sequences, fenced epochs (PSTATE-1 to PSTATE-9)",
    "transaction_index": "transactions: COMMIT/ABORT markers from the coordinator (append origin coordinator), aborted transactions in .txnindex, the last stable offset, read with isolation txn_committed (TXN-B, READ-21, READ-22)",
    "compaction": "the clean operation, one pass of the log cleaner (cleanup_policy compact, the compaction config keys, cleaner-offset-checkpoint; COMPACT)",
    "producer_snapshots": "producer .snapshot files written at roll, close and recovery and read at load (SNAP-B, RECOV-19); without it .snapshot files are ignored",
    "kafka_exact": "checked byte for byte against Kafka's artefacts: a check resting on a MAY (the MAY table of spec README §1.6) fails as a SHOULD instead of accepting both answers (spec README §1.6)",
}


def expand_features(claimed) -> set[str]:
    """The features a hello claims, ``compression`` read as every ``compression.<codec>``."""
    features = set(claimed)
    if "compression" in features:
        features |= {f"compression.{codec}" for codec in CODECS}
    return features


APPEND_ORIGINS = ("client", "coordinator")  # append's optional origin; client by default
ISOLATIONS = ("high_watermark", "txn_committed")  # read's optional isolation

# spec/behaviour/model.md Table 2, declared once with the reference's error categories
ERROR_CODES = tuple(row.code for row in OPERATION_ERROR_CODES)


def schema_text(name: str) -> str:
    return files("conformance").joinpath("schemas", name).read_text(encoding="utf-8")


@cache
def load_schema(name: str) -> dict:
    return json.loads(schema_text(name))


@cache
def _validator(name: str, pointer: str):
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    root = load_schema(name)
    registry = Registry().with_resource(root["$id"], Resource.from_contents(root))
    schema = {"$ref": f"{root['$id']}#{pointer}"} if pointer else root
    return Draft202012Validator(schema, registry=registry)


def schema_errors(instance: Any, name: str, pointer: str = "") -> list[str]:
    """Every way ``instance`` breaks the schema ``name`` (at ``pointer``, e.g.
    ``/$defs/read_result``), as ``path: message`` strings; empty when valid."""
    errors = sorted(_validator(name, pointer).iter_errors(instance), key=lambda e: list(e.path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}" for e in errors]


def nesting_errors(value: Any, depth: int = 1, limit: int = MAX_DEPTH) -> list[str]:
    """One problem when ``value`` (at ``depth``) nests arrays and objects deeper than
    ``limit``; checked without recursion, before the schemas (whose validator recurses)."""
    stack = [(value, depth)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            if level > limit:
                return [f"(root): nests deeper than {limit} levels (the protocol's nesting limit)"]
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return []


def request_errors(request: dict) -> list[str]:
    return schema_errors(request, "protocol.schema.json", "/$defs/request")


def response_errors(response: Any, op: str) -> list[str]:
    """The envelope first; a successful response's result against ``<op>_result``."""
    problems = schema_errors(response, "protocol.schema.json", "/$defs/response")
    if problems or not response.get("ok"):
        return problems
    return [
        f"result/{p}"
        for p in schema_errors(response["result"], "protocol.schema.json", f"/$defs/{op}_result")
    ]
