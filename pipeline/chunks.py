"""Building Arrow record batches from rows appended a Kafka batch at a time.

The values that are the same for every record of a Kafka batch come once, as a tuple,
with a repeat count; the per-record values as a list of tuples; the constants of the
input partition (topic, partition, file...) not at all. ``flush`` transposes the tuples
(``zip``, in C) and expands the per-batch columns with one ``take``. A chunk is flushed at
``max_rows`` rows or ``max_bytes`` of keys and values, so memory stays bounded whatever
the segment's size.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .schema import built_as

MAX_ROWS = 10_000  # Spark's spark.sql.execution.arrow.maxRecordsPerBatch default
MAX_BYTES = 8 << 20


class ChunkBuilder:
    """``batch_fields`` and ``record_fields`` name the columns of the tuples ``add`` takes;
    schema columns in neither (nor in ``constants``) are null unless ``add_row`` sets them."""

    def __init__(
        self,
        schema: pa.Schema,
        constants: dict,
        batch_fields: tuple[str, ...],
        record_fields: tuple[str, ...] = (),
        *,
        max_rows: int = MAX_ROWS,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self.schema = schema
        self.constants = {k: v for k, v in constants.items() if k in schema.names}
        self.record_fields = record_fields
        # the per-batch columns: the given ones, then the rest of the schema (null unless
        # add_row sets them: the error columns)
        given = set(batch_fields) | set(record_fields) | set(self.constants)
        self.batch_fields = batch_fields + tuple(n for n in schema.names if n not in given)
        self.padding = (None,) * (len(self.batch_fields) - len(batch_fields))
        self.null_record = (None,) * len(record_fields)
        self.max_rows, self.max_bytes = max_rows, max_bytes
        self._reset()

    def _reset(self) -> None:
        self.batch_rows: list[tuple] = []
        self.record_rows: list[tuple] = []
        self.counts: list[int] = []
        self.rows = self.bytes = 0

    def add(self, batch_values: tuple, record_rows: list[tuple] | None = None) -> None:
        """One Kafka batch: its values in the given ``batch_fields`` order, and at the record
        level one tuple per record in ``record_fields`` order (None: a batch-level row)."""
        self._append(batch_values + self.padding, record_rows)

    def add_row(self, values: dict) -> None:
        """One row of per-batch values by column name (the others null): an error row."""
        self._append(tuple(values.get(name) for name in self.batch_fields), None)

    def _append(self, batch_values: tuple, record_rows: list[tuple] | None) -> None:
        self.batch_rows.append(batch_values)
        if record_rows is None:
            self.counts.append(1)
            self.rows += 1
            if self.record_fields:
                self.record_rows.append(self.null_record)
        else:
            self.counts.append(len(record_rows))
            self.rows += len(record_rows)
            self.record_rows += record_rows

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
        if self.record_fields and any(c != 1 for c in self.counts):
            take = pa.array(np.repeat(np.arange(len(self.counts)), self.counts))
        columns = dict(zip(self.batch_fields, zip(*self.batch_rows, strict=True), strict=True))
        if self.record_fields:
            columns.update(
                zip(self.record_fields, zip(*self.record_rows, strict=True), strict=True)
            )
        arrays = []
        for field in self.schema:
            if field.name in self.constants:
                arrays.append(
                    pa.repeat(pa.scalar(self.constants[field.name], field.type), self.rows)
                )
                continue
            column = pa.array(columns[field.name], built_as(field.type)).cast(field.type)
            if take is not None and field.name not in self.record_fields:
                column = column.take(take)
            arrays.append(column)
        chunk = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        self._reset()
        return chunk
