"""reference_impl: Apache Kafka's on-disk log, the spec made executable.

Three layers, each importing only those below it (tests/test_layering.py):

* ``records/``: the bytes of a ``.log``: v2 record batches, legacy messages, control
  records, codecs, CRCs, varints;
* ``formats/``: the other files of a partition directory as pure codecs: file naming,
  index entries, producer snapshots, checkpoints;
* ``log/``: the log on files, one Kafka class per module: FileRecords, the three indexes,
  LogSegment, LogSegments, the roll rule, LocalLog and the Log (Kafka's UnifiedLog), the
  loader and recovery, producer state, checkpoints.

docs/reading-order.md reads them in an afternoon. The public API is re-exported here.
"""

from .errors import Category, KafkaLogError
from .log.clock import ManualClock, SystemClock
from .log.config import LogConfig
from .log.loader import LoadOptions
from .log.segment import LogSegment
from .log.unified_log import Log, UnifiedLog
from .records import SimpleRecord, build_record_batch, iter_batches, iter_file_batches

__all__ = [
    "Category",
    "KafkaLogError",
    "LoadOptions",
    "Log",
    "LogConfig",
    "LogSegment",
    "ManualClock",
    "SimpleRecord",
    "SystemClock",
    "UnifiedLog",
    "build_record_batch",
    "iter_batches",
    "iter_file_batches",
]
