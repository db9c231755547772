"""Record formats: v2 batches, legacy messages, control records, codecs, CRCs, varints.

The public reading API is ``iter_batches`` / ``iter_file_batches`` (walk a .log
image or file), ``read_batch`` (one entry from memory) and, on every batch,
``ensure_valid()`` and ``records()``. Writers: ``build_record_batch``,
``build_control_batch`` and ``build_legacy_message_set``.
"""

from .batch import RecordBatch
from .builder import build_control_batch, build_record_batch, encode_record
from .compression import (
    DEFAULT_DECOMPRESSION_LIMIT,
    DEFAULT_MAX_MESSAGE_BYTES,
    Compression,
    compress,
    decompress,
)
from .control import (
    ControlRecordType,
    EndTransactionMarker,
    parse_control_key,
    parse_end_txn_marker,
)
from .legacy import LegacyBatch, build_legacy_message_set
from .record import (
    Header,
    Record,
    SimpleRecord,
    TimestampType,
    decrement_sequence,
    increment_sequence,
)
from .stream import Batch, BatchScanner, iter_batches, iter_file_batches, read_batch

__all__ = [
    "DEFAULT_DECOMPRESSION_LIMIT",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "Batch",
    "BatchScanner",
    "Compression",
    "ControlRecordType",
    "EndTransactionMarker",
    "Header",
    "LegacyBatch",
    "Record",
    "RecordBatch",
    "SimpleRecord",
    "TimestampType",
    "build_control_batch",
    "build_legacy_message_set",
    "build_record_batch",
    "compress",
    "decompress",
    "encode_record",
    "decrement_sequence",
    "increment_sequence",
    "iter_batches",
    "iter_file_batches",
    "parse_control_key",
    "parse_end_txn_marker",
    "read_batch",
]
