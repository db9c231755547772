"""Building Arrow record batches a column at a time.

Rows arrive a batch at a time: the values that are the same for every record of a Kafka
batch are appended once with a repeat count, the per-record values as lists, and the
constants of the input partition (topic, partition, file...) not at all; ``flush``
expands them with one ``take``. A chunk is flushed at ``max_rows`` rows or ``max_bytes``
of keys and values, so memory stays bounded whatever the segment's size.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

MAX_ROWS = 10_000  # Spark's spark.sql.execution.arrow.maxRecordsPerBatch default
MAX_BYTES = 32 << 20


class ChunkBuilder:
    def __init__(
        self,
        schema: pa.Schema,
        constants: dict,
        per_record: tuple[str, ...] = (),
        *,
        max_rows: int = MAX_ROWS,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self.schema = schema
        self.constants = {k: v for k, v in constants.items() if k in schema.names}
        self.per_record = [n for n in schema.names if n in per_record]
        self.per_batch = [
            n for n in schema.names if n not in self.constants and n not in per_record
        ]
        self.max_rows, self.max_bytes = max_rows, max_bytes
        self._reset()

    def _reset(self) -> None:
        self.batch_values = {name: [] for name in self.per_batch}
        self.record_values = {name: [] for name in self.per_record}
        self.counts: list[int] = []
        self.rows = self.bytes = 0

    def add(self, batch_values: dict, record_values: dict | None = None, count: int = 1) -> None:
        """One Kafka batch: ``batch_values`` by column (missing ones are null) and, at the
        record level, ``count`` values per record column (missing columns are null)."""
        for name, values in self.batch_values.items():
            values.append(batch_values.get(name))
        for name, values in self.record_values.items():
            got = record_values.get(name) if record_values else None
            values.extend(got if got is not None else [None] * count)
        self.counts.append(count)
        self.rows += count

    def add_bytes(self, size: int) -> None:
        self.bytes += size

    @property
    def full(self) -> bool:
        return self.rows >= self.max_rows or self.bytes >= self.max_bytes

    def flush(self) -> pa.RecordBatch | None:
        if not self.rows:
            self._reset()
            return None
        take = None
        if self.per_record and any(c != 1 for c in self.counts):
            take = pa.array(np.repeat(np.arange(len(self.counts)), self.counts))
        arrays = []
        for field in self.schema:
            if field.name in self.constants:
                scalar = pa.scalar(self.constants[field.name], field.type)
                arrays.append(pa.repeat(scalar, self.rows))
            elif field.name in self.batch_values:
                column = pa.array(self.batch_values[field.name], field.type)
                arrays.append(column.take(take) if take is not None else column)
            else:
                arrays.append(pa.array(self.record_values[field.name], field.type))
        chunk = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        self._reset()
        return chunk
