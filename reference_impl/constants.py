"""Java's integer limits and Kafka's "unknown" offset, declared once for every module.

Kafka's formats store offsets and sizes as Java ints and longs; a Python int has no limit,
so the reference checks them against these bounds where Kafka would overflow or refuse
(spec/README.md §1.2) [java.lang.Integer, java.lang.Long; UnifiedLog.scala UnknownOffset].
The record-level sentinels (``NO_TIMESTAMP``,
``NO_PRODUCER_ID``...) belong to the record formats: records/record.py.
"""

INT32_MAX = 2**31 - 1  # Integer.MAX_VALUE: relative offsets, positions, segment sizes
LONG_MAX = 2**63 - 1  # Long.MAX_VALUE: "no limit" for offsets and counts
LONG_MIN = -(2**63)  # Long.MIN_VALUE
UNKNOWN_OFFSET = -1  # UnifiedLog.UnknownOffset, LogAppendInfo's unknown first offset
