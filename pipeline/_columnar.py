"""The record level of the reader (reader.py) on the compiled kernels: records decoded
straight into Arrow column buffers (``kernels.columns.RecordColumns``), no Python object per
record, for ``klogspec extract`` and the ``kafka-segments`` data source.

``ColumnarChunkBuilder`` is ``ChunkBuilder`` (chunks.py) with its record rows kept in those
buffers; ``record_rows`` is reader.py's ``_record_rows`` for a v2 data batch whose records
decode cleanly, and hands every other batch (control, legacy, damaged, a header key that is
not ASCII) to it, whose rows the builder takes one by one. The chunks are the readable
builder's, row for row (tests/test_speedups.py).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reference_impl import kernels
from reference_impl.errors import KafkaLogError
from reference_impl.records import Compression, ControlRecordType, decompress
from reference_impl.records.batch import RECORD_BATCH_OVERHEAD

from .chunks import ChunkBuilder
from .schema import MILLIS

CONTROL_TYPES = [kind.name for kind in ControlRecordType]
_CONTROL_INDEX = {name: i for i, name in enumerate(CONTROL_TYPES)}
_CODECS = {codec.value: codec.label for codec in Compression}
NULL_ROW = -2  # a batch-level row (an error row): every record column null


class ColumnarChunkBuilder(ChunkBuilder):
    def _reset(self) -> None:
        super()._reset()
        self.columns = kernels.columns.RecordColumns()

    def _append(self, batch_values: tuple, record_rows: list[tuple] | None) -> None:
        batch_row = len(self.batch_rows)
        self.batch_rows.append(batch_values)
        if record_rows is None:
            self.columns.add_row(None, batch_row, NULL_ROW)
            self.rows += 1
            return
        for row in record_rows:
            control = -1 if row[6] is None else _CONTROL_INDEX[row[6]]
            self.columns.add_row(row, batch_row, control)
        self.rows += len(record_rows)

    def add_decoded(self, batch_values: tuple, batch) -> bool:
        """The records of a v2 data batch, decoded into the columns; False (nothing added)
        when the readable reader must take the batch."""
        if batch.records_count <= 0:
            return False
        if batch.compression_id == Compression.NONE:
            buf, start = batch.raw, RECORD_BATCH_OVERHEAD
        else:
            try:
                buf, start = decompress(
                    batch.compression, memoryview(batch.raw)[RECORD_BATCH_OVERHEAD:],
                    magic=batch.magic,
                ), 0  # fmt: skip
            except KafkaLogError:
                return False  # the readable reader raises it, located
        payload = self.columns.decode(batch, buf, start, len(self.batch_rows))
        if payload < 0:
            return False
        self.batch_rows.append(batch_values + self.padding)
        self.rows += batch.records_count
        self.bytes += payload
        return True

    def flush(self) -> pa.RecordBatch | None:
        if not self.rows:
            self._reset()
            return None
        columns, rows = self.columns, self.rows
        control = np.frombuffer(bytes(columns.control), np.int8)
        present = control != NULL_ROW
        valid = None if present.all() else pa.array(present)
        records = {
            "offset": _numbers(columns.offset, pa.int64(), valid),
            "timestamp": _numbers(columns.timestamp, pa.int64(), valid).cast(MILLIS),
            "sequence": _numbers(columns.sequence, pa.int32(), valid),
            "key": columns.key.array(pa, pa.binary()),
            "value": columns.value.array(pa, pa.binary()),
            "headers": _headers(columns, valid),
            "control_type": _control_types(control),
        }
        take = pa.array(np.frombuffer(bytes(columns.batch_row), np.int32))
        batch_columns = dict(
            zip(self.batch_fields, zip(*self.batch_rows, strict=True), strict=True)
        )
        arrays = []
        for field in self.schema:
            if field.name in self.constants:
                arrays.append(pa.repeat(pa.scalar(self.constants[field.name], field.type), rows))
            elif field.name in records:
                arrays.append(records[field.name].cast(field.type))
            else:
                arrays.append(pa.array(batch_columns[field.name], field.type).take(take))
        chunk = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        self._reset()
        return chunk


def _numbers(buffer: bytearray, type_, valid):
    rows = len(buffer) * 8 // type_.bit_width
    array = pa.Array.from_buffers(type_, rows, [None, kernels.columns.arrow_buffer(pa, buffer)])
    return array if valid is None else pc.if_else(valid, array, pa.scalar(None, type_))


def _headers(columns, valid):
    keys = columns.header_key.array(pa, pa.string())
    values = columns.header_value.array(pa, pa.binary())
    entries = pa.StructArray.from_arrays([keys, values], names=["key", "value"])
    offsets = pa.Array.from_buffers(
        pa.int32(),
        len(columns.header_offsets) // 4,
        [None, kernels.columns.arrow_buffer(pa, columns.header_offsets)],
    )
    headers = pa.ListArray.from_arrays(offsets, entries)
    return headers if valid is None else pc.if_else(valid, headers, pa.scalar(None, headers.type))


def _control_types(control: np.ndarray):
    names = pa.array(CONTROL_TYPES, pa.string())
    indices = pa.array(control.astype(np.int32), mask=control < 0)
    return names.take(indices)


def record_rows(batch, chunks, *, readable, large: int):
    """``readable`` (reader.py's ``_record_rows``) for a v2 data batch, decoded into the
    columns when its records allow and they are not ``large`` (more records: the readable
    path's, which adds them a chunk at a time)."""
    small = batch.magic == 2 and 0 <= batch.records_count <= large
    if small and not batch.is_control and isinstance(chunks, ColumnarChunkBuilder):
        values = (
            batch.position, batch.base_offset, batch.last_offset, batch.timestamp_type.label,
            batch.producer_id, batch.producer_epoch, batch.is_transactional, batch.is_control,
            _CODECS[batch.compression_id], batch.magic, batch.partition_leader_epoch,
        )  # fmt: skip
        if chunks.add_decoded(values, batch):
            return None
    return readable(batch, chunks)
