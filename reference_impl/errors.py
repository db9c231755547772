"""Typed errors with stable categories (spec/formats/errors.md).

Every reader error carries a *category* (a stable snake_case string that reports,
expected-failure files and the conformance protocol match on, never the message),
plus where it happened: the file, the byte position in that file and, when known,
the Kafka offset. Messages are for people and may change. Kafka's counterparts are its
exceptions (CorruptRecordException.java, InvalidRecordException.java...) and the error
codes of clients/.../common/protocol/Errors.java.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Category(StrEnum):
    """The stable error categories: reader errors (Table 1 of spec/formats/errors.md, ERR-2),
    then the codes of refused operations (Table 2 of spec/behaviour/model.md, MODEL-10,
    declared with their rules in ``OPERATION_ERROR_CODES`` below; ``invalid_offset`` is
    also the offset indexes' own), then the index-internal ``illegal_state`` that no
    operation reports."""

    TRUNCATED_BATCH = "truncated_batch"
    INVALID_BATCH_SIZE = "invalid_batch_size"
    BAD_MAGIC = "bad_magic"
    CRC_MISMATCH = "crc_mismatch"
    INVALID_RECORD = "invalid_record"
    RECORD_TOO_LARGE = "record_too_large"
    UNSUPPORTED_COMPRESSION = "unsupported_compression"
    CORRUPT_COMPRESSED_DATA = "corrupt_compressed_data"
    DECOMPRESSION_LIMIT = "decompression_limit"
    INVALID_CONTROL_RECORD = "invalid_control_record"
    OFFSET_OVERFLOW = "offset_overflow"
    CORRUPT_INDEX = "corrupt_index"
    CORRUPT_SNAPSHOT = "corrupt_snapshot"
    CORRUPT_CHECKPOINT = "corrupt_checkpoint"
    INVALID_FILE_NAME = "invalid_file_name"
    # refused operations (spec/behaviour/model.md Table 2); the protocol code is the upper case
    CORRUPT_MESSAGE = "corrupt_message"
    RECORD_BATCH_TOO_LARGE = "record_batch_too_large"
    OFFSETS_OUT_OF_ORDER = "offsets_out_of_order"
    UNEXPECTED_APPEND_OFFSET = "unexpected_append_offset"
    INVALID_TIMESTAMP = "invalid_timestamp"
    UNSUPPORTED_APPEND = "unsupported_append"
    OFFSET_OUT_OF_RANGE = "offset_out_of_range"
    INVALID_ROLL_OFFSET = "invalid_roll_offset"
    INVALID_OFFSET = "invalid_offset"
    INCONSISTENT_TOPIC_ID = "inconsistent_topic_id"
    OUT_OF_ORDER_SEQUENCE_NUMBER = "out_of_order_sequence_number"
    INVALID_PRODUCER_EPOCH = "invalid_producer_epoch"
    INVALID_TXN_STATE = "invalid_txn_state"
    TRANSACTION_COORDINATOR_FENCED = "transaction_coordinator_fenced"
    LOG_CLOSED = "log_closed"
    INVALID_ARGUMENT = "invalid_argument"
    ILLEGAL_STATE = "illegal_state"


@dataclass(frozen=True)
class ErrorCode:
    """One row of spec/behaviour/model.md Table 2: the code an operation refuses with (the
    upper case of its category), Kafka's exception for it and the rules that raise it, as
    the spec writes them."""

    category: Category
    kafka_exception: str
    raised_by: str

    @property
    def code(self) -> str:
        return self.category.value.upper()


# MODEL-10: an operation that refuses reports exactly one of these codes. This is
# spec/behaviour/model.md Table 2, row for row (tests/test_rule_tables.py holds the two
# together); the conformance protocol takes its error codes from here.
OPERATION_ERROR_CODES = (
    ErrorCode(Category.RECORD_TOO_LARGE, "`RecordTooLargeException`", "APPEND-6"),
    ErrorCode(Category.RECORD_BATCH_TOO_LARGE, "`RecordBatchTooLargeException`", "APPEND-21"),
    ErrorCode(Category.OFFSETS_OUT_OF_ORDER, "`OffsetsOutOfOrderException`", "APPEND-9"),
    ErrorCode(Category.UNEXPECTED_APPEND_OFFSET, "`UnexpectedAppendOffsetException`", "APPEND-18"),
    ErrorCode(
        Category.OFFSET_OUT_OF_RANGE, "`OffsetOutOfRangeException`", "READ-1, READ-2, READ-3, RET-2"
    ),
    ErrorCode(
        Category.CORRUPT_MESSAGE,
        "`CorruptRecordException` (`Errors.CORRUPT_MESSAGE`)",
        "APPEND-4, APPEND-7",
    ),
    ErrorCode(
        Category.INVALID_RECORD,
        "`InvalidRecordException`",
        "APPEND-5, APPEND-10 to APPEND-14",
    ),
    ErrorCode(Category.INVALID_TIMESTAMP, "`InvalidTimestampException`", "APPEND-15"),
    ErrorCode(
        Category.INVALID_ROLL_OFFSET, "`KafkaException` from `LocalLog.roll`", "ROLL-14, ROLL-15"
    ),
    ErrorCode(Category.OFFSET_OVERFLOW, "`LogSegmentOffsetOverflowException`", "APPEND-23"),
    ErrorCode(
        Category.INVALID_ARGUMENT,
        "`IllegalArgumentException`, `ConfigException`",
        "MODEL-8, APPEND-8, APPEND-20, READ-7, TRUNC-1, TRUNC-12, LEPOCH-2, INDEX-3, a load whose "
        "rebuilt index does not fit (recovery.md §4)",
    ),
    ErrorCode(
        Category.INVALID_OFFSET,
        "`InvalidOffsetException`",
        "a load whose recovery of LOAD-13, LOAD-15 or LOAD-16 meets offsets that go back "
        "(recovery.md §4)",
    ),
    ErrorCode(
        Category.INVALID_FILE_NAME,
        "`NumberFormatException` (`LogFileUtils.offsetFromFile`), `KafkaException` "
        "(`LocalLog.parseTopicPartitionName`, directory names)",
        "LOAD-11, DIR-3",
    ),
    ErrorCode(Category.LOG_CLOSED, "`KafkaStorageException`", "MODEL-12"),
    ErrorCode(
        Category.OUT_OF_ORDER_SEQUENCE_NUMBER,
        "`OutOfOrderSequenceException`",
        "PSTATE-6, PSTATE-7",
    ),
    ErrorCode(Category.INVALID_PRODUCER_EPOCH, "`InvalidProducerEpochException`", "PSTATE-5"),
    ErrorCode(Category.INVALID_TXN_STATE, "`InvalidTxnStateException`", "TXN-B-1"),
    ErrorCode(
        Category.TRANSACTION_COORDINATOR_FENCED,
        "`TransactionCoordinatorFencedException`",
        "TXN-B-4",
    ),
    ErrorCode(
        Category.INCONSISTENT_TOPIC_ID,
        "`InconsistentTopicIdException`",
        "a `partition.metadata` topic id that differs from the one the log is opened with",
    ),
    ErrorCode(Category.UNSUPPORTED_APPEND, "none: see the Deviation below", "the reference only"),
)


class KafkaLogError(Exception):
    """Base of every error the reference implementation raises on bad input.

    ``category`` is the stable machine-readable kind; ``file``, ``position`` and
    ``offset`` locate the problem (``None`` when unknown).
    """

    category: Category

    def __init__(
        self,
        category: Category,
        message: str,
        *,
        file: str | None = None,
        position: int | None = None,
        offset: int | None = None,
    ) -> None:
        self.category = Category(category)
        self.message = message
        self.file = file
        self.position = position
        self.offset = offset
        super().__init__(self._describe())

    def _describe(self) -> str:
        where = []
        if self.file is not None:
            where.append(str(self.file))
        if self.position is not None:
            where.append(f"position {self.position}")
        if self.offset is not None:
            where.append(f"offset {self.offset}")
        prefix = f"{', '.join(where)}: " if where else ""
        return f"{prefix}{self.category.value}: {self.message}"

    def located(
        self, *, file: str | None = None, position: int | None = None, offset: int | None = None
    ) -> KafkaLogError:
        """Fill in location fields that are still unknown (keeps the innermost ones)."""
        if self.file is None and file is not None:
            self.file = file
        if self.position is None and position is not None:
            self.position = position
        if self.offset is None and offset is not None:
            self.offset = offset
        self.args = (self._describe(),)
        return self

    def to_dict(self) -> dict:
        return {
            "category": self.category.value,
            "message": self.message,
            "file": self.file,
            "position": self.position,
            "offset": self.offset,
        }


@dataclass(frozen=True, slots=True)
class Problem:
    """A broken rule, located as ERR-1, ERR-3 and ERR-4 say: what the checks of ``formats/``
    yield, so that each rule is written once. The log raises the first (``raise_first``);
    ``klogspec verify`` collects them all, each as a finding with its severity."""

    rule: str  # the requirement ID of spec/requirements.yaml
    file: str | None
    position: int | None
    offset: int | None
    message: str
    category: Category = Category.CORRUPT_INDEX

    def error(self) -> KafkaLogError:
        """The problem as the error a reader raises (``CorruptIndexError`` for an index)."""
        where = {"file": self.file, "position": self.position, "offset": self.offset}
        if self.category is Category.CORRUPT_INDEX:
            return CorruptIndexError(self.message, **where)
        return KafkaLogError(self.category, self.message, **where)


def raise_first(problems) -> None:
    """Raise the first of ``problems`` (an iterable of ``Problem``), as the log does: the
    checks are lazy, so the ones after it never run."""
    for problem in problems:
        raise problem.error()


class CorruptRecordError(KafkaLogError):
    """Bad bytes in a .log file or a batch (Kafka: CorruptRecordException, InvalidRecordException)."""


class CorruptIndexError(KafkaLogError):
    """Bad bytes in an .index, .timeindex or .txnindex file (Kafka: CorruptIndexException)."""

    def __init__(self, message: str, **where) -> None:
        super().__init__(Category.CORRUPT_INDEX, message, **where)


class CorruptSnapshotError(KafkaLogError):
    """Bad bytes in a producer-state .snapshot file (Kafka: CorruptSnapshotException)."""

    def __init__(self, message: str, **where) -> None:
        super().__init__(Category.CORRUPT_SNAPSHOT, message, **where)


class CorruptCheckpointError(KafkaLogError):
    """A text checkpoint, partition.metadata or marker file that does not parse (Kafka: IOException)."""

    def __init__(self, message: str, **where) -> None:
        super().__init__(Category.CORRUPT_CHECKPOINT, message, **where)


class InvalidFileNameError(KafkaLogError):
    """A segment or partition-directory name that does not follow spec/formats/file-naming.md."""

    def __init__(self, message: str, **where) -> None:
        super().__init__(Category.INVALID_FILE_NAME, message, **where)


class LogOperationError(KafkaLogError):
    """A log operation refused (spec/behaviour/*.md): the log is left as it was.

    Kafka's RecordBatchTooLargeException, OffsetsOutOfOrderException,
    UnexpectedAppendOffsetException, InvalidTimestampException, OffsetOutOfRangeException,
    the KafkaException of an impossible roll, InvalidOffsetException (an index append
    that does not increase), InconsistentTopicIdException and the KafkaStorageException
    of a closed log, told apart by ``category``.
    """


class InvalidArgumentError(LogOperationError, ValueError):
    """Kafka's IllegalArgumentException (a negative truncation offset, a full index, an
    index slot past the end...): a ValueError that also carries a category."""

    def __init__(self, message: str, **where) -> None:
        super().__init__(Category.INVALID_ARGUMENT, message, **where)


class IllegalStateError(LogOperationError, RuntimeError):
    """Kafka's IllegalStateException (a time-index timestamp that goes back)."""

    def __init__(self, message: str, **where) -> None:
        super().__init__(Category.ILLEGAL_STATE, message, **where)
