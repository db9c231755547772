"""One salvaged record as a line of JSON (RECOV-27): everything a producer needs to send it again
as it was, and where it came from.

``{"topic", "partition", "offset", "timestamp", "timestampType", "key", "value", "headers",
"producerId", "transaction"}``: ``key``, ``value`` and each header's ``value`` are base64 (null
for a null key or value; Kafka's bytes are not text); a header ``key`` is text (Kafka's header
keys are Java Strings, written as UTF-8); ``timestamp`` is the record's own (CreateTime) or the
broker's (LogAppendTime), in milliseconds; ``transaction`` is null, ``committed`` or ``open``
(salvage.py).
"""

from __future__ import annotations

import base64
import json

from reference_impl.records import RecordBatch
from reference_impl.records.record import Record


def record_line(
    topic: str, partition: int, batch: RecordBatch, record: Record, verdict: str | None
) -> str:
    return json.dumps(
        {
            "topic": topic,
            "partition": partition,
            "offset": record.offset,
            "timestamp": record.timestamp,
            "timestampType": batch.timestamp_type.label,
            "key": _b64(record.key),
            "value": _b64(record.value),
            "headers": [
                {"key": h.key.decode("utf-8", "backslashreplace"), "value": _b64(h.value)}
                for h in record.headers
            ],
            "producerId": batch.producer_id,
            "transaction": verdict,
        },
        separators=(",", ":"),
    )


def _b64(blob: bytes | None) -> str | None:
    return None if blob is None else base64.b64encode(blob).decode("ascii")
