"""``extract --latest-per-key``: the table view of a compacted topic. Per partition, the
records a *complete cleaning* at one time (``clean_at_ms``) would keep, computed on Spark
from the data source's rows by the rules of spec/behaviour/compaction.md, rule by rule.

A complete cleaning is one pass of the cleaner over the whole partition: its first dirty
offset is the first record, its offset map holds every key (no dedupe-buffer quota,
COMPACT-9), the dirty ratio is not asked (COMPACT-8), and the active segment counts as
cleanable (Kafka never cleans it, COMPACT-5, but rolls it by ``max.compaction.lag.ms``,
COMPACT-2). It is the limit Kafka's incremental passes approach, not what they have left at
``clean_at_ms``: compaction.md §8 says where the two differ. What a cleaning still may not
touch stays as it is: the partition from the first undecided transaction on (COMPACT-5) or
from the first segment newer than ``min.compaction.lag.ms`` (COMPACT-6), rounded down to a
segment's base offset (COMPACT-7).

The rules need batch facts the record rows do not carry (an emptied batch has no record;
the delete horizon is a batch field), so both levels of the data source are read: the
batch level for transactions and segments, the record level for keys. Everything is
joins, a group-by and windows over ``(topic, partition)``; no reference code runs on the
executors, and the test holds the result equal to the reference cleaner's survivors.
"""

from __future__ import annotations

from dataclasses import dataclass

# Kafka's defaults (LogConfig / the broker's log.cleaner.delete.retention.ms)
DELETE_RETENTION_MS = 24 * 60 * 60 * 1000
MIN_COMPACTION_LAG_MS = 0
_KEY = "_partition_key"
_NO_HORIZON_COLUMN = "delete_horizon_ms"


@dataclass(frozen=True)
class CleanAt:
    """When the complete cleaning runs and the partition configuration it obeys (the topic
    configs are not in the partition directory: Kafka keeps them in its metadata)."""

    now_ms: int
    delete_retention_ms: int = DELETE_RETENTION_MS
    min_compaction_lag_ms: int = MIN_COMPACTION_LAG_MS

    def __post_init__(self) -> None:
        if self.delete_retention_ms < 0 or self.min_compaction_lag_ms < 0:
            raise ValueError("delete_retention_ms and min_compaction_lag_ms must be at least 0")


def latest_per_key(records, batches, clean: CleanAt):
    """The rows of ``records`` (the data source's record level) that a complete cleaning at
    ``clean.now_ms`` keeps, with the column ``delete_horizon_ms``: the delete horizon their
    batch carries after it (COMPACT-13, COMPACT-15), null when none. ``batches`` is the
    batch level of the same files."""
    from pyspark.sql import functions as F

    facts = _batch_facts(_keyed(batches), _control_types(_keyed(records)), clean)
    rows = _keyed(records).join(
        facts,
        (F.col(_KEY) == F.col("_b_key")) & (F.col("batch_base_offset") == F.col("_b_base")),
        "left",
    )
    rows = _with_offset_map(rows)
    kept = rows.where(_kept(clean.now_ms))
    return _with_delete_horizon(kept, clean).select(*records.columns, _NO_HORIZON_COLUMN)


def _keyed(frame):
    """The partition as one join key (a loose ``.log`` has a null topic and partition)."""
    from pyspark.sql import functions as F

    return frame.withColumn(
        _KEY,
        F.concat_ws(
            "/",
            F.coalesce("topic", F.lit("")),
            F.coalesce(F.col("partition").cast("string"), F.lit("")),
        ),
    )


def _control_types(records):
    """A control batch's type (ABORT, COMMIT...): on its record; an emptied one has none."""
    from pyspark.sql import functions as F

    return (
        records.where(F.col("is_control"))
        .groupBy(F.col(_KEY).alias("_c_key"), F.col("batch_base_offset").alias("_c_base"))
        .agg(F.first("control_type").alias("control_type"))
    )


def _batch_facts(batches, control_types, clean: CleanAt):
    """Per batch: whether its records go as aborted data (COMPACT-14) or a spent marker
    (COMPACT-15), its delete horizon, and the partition's first uncleanable offset."""
    from pyspark.sql import functions as F

    batches = batches.join(
        control_types,
        (F.col(_KEY) == F.col("_c_key")) & (F.col("base_offset") == F.col("_c_base")),
        "left",
    )
    batches = _first_uncleanable_offsets(_transactions(batches), clean)
    spent = _marker_spent(batches)
    return batches.select(
        F.col(_KEY).alias("_b_key"),
        F.col("base_offset").alias("_b_base"),
        F.col("delete_horizon_ms").alias("_horizon"),
        F.col("_aborted"),
        (
            spent
            & F.col("delete_horizon_ms").isNotNull()
            & (F.col("delete_horizon_ms") <= clean.now_ms)
        ).alias("_discard_marker"),
        spent.alias("_spent_marker"),
        F.col("_first_uncleanable"),
    )


def _transactions(batches):
    """Each producer's batches cut at its markers: a batch's ``_txn`` is the number of
    control batches of its producer before it, so a transaction's data and its marker
    share one. Per transaction: its marker's type and whether any transactional data batch
    (an emptied one too) is left; a data batch is aborted when its marker is an ABORT
    (COMPACT-14: what the ``.txnindex`` lists) and open when it has no marker yet (TXN-B-7)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    producer = Window.partitionBy(_KEY, "producer_id").orderBy("base_offset")
    before = producer.rowsBetween(Window.unboundedPreceding, -1)
    data = F.col("is_transactional") & ~F.col("is_control")
    batches = batches.withColumn(
        "_txn", F.coalesce(F.sum(F.col("is_control").cast("int")).over(before), F.lit(0))
    )
    txn = Window.partitionBy(_KEY, "producer_id", "_txn")
    batches = batches.withColumn(
        "_marker",
        F.max(F.when(F.col("is_control"), F.coalesce("control_type", F.lit("")))).over(txn),
    ).withColumn("_txn_has_data", F.max(data).over(txn))
    transactional = data & (F.col("producer_id") >= 0)
    return batches.withColumn(
        "_aborted", F.coalesce(transactional & (F.col("_marker") == "ABORT"), F.lit(False))
    ).withColumn("_open", transactional & F.col("_marker").isNull())


def _marker_spent(batches):
    """COMPACT-15 [CleanedTransactionMetadata.onControlBatchRead]: a COMMIT or ABORT marker
    whose transaction has no data batch left, or a control batch an earlier pass emptied,
    may go once its delete horizon has passed; other control batches stay."""
    from pyspark.sql import functions as F

    marker = F.col("control_type").isin("COMMIT", "ABORT")
    no_data = ~F.coalesce(F.col("_txn_has_data"), F.lit(False))
    return F.col("is_control") & ((marker & no_data) | (F.col("record_count") == 0))


def _first_uncleanable_offsets(batches, clean: CleanAt):
    """Per batch, its partition's first uncleanable offset: COMPACT-5 to COMPACT-7 without
    the active segment. The least of the last stable offset (the first open transaction's
    first offset), the base offset of the first segment whose largest timestamp is within
    ``min_compaction_lag_ms`` of the cleaning, and the log end offset; then down to the base
    offset of the segment holding it. Windows over the partition: one shuffle."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    partition = Window.partitionBy(_KEY)
    segment = Window.partitionBy(_KEY, "segment_base_offset")
    lag = clean.min_compaction_lag_ms
    largest = F.max("max_timestamp").over(segment)  # the segment's largest timestamp
    too_new = F.when(F.lit(lag > 0) & (largest > clean.now_ms - lag), F.col("segment_base_offset"))
    log_end = F.max("last_offset").over(partition) + 1
    first_unstable = F.min(F.when(F.col("_open"), F.col("base_offset"))).over(partition)
    batches = batches.withColumn("_too_new", too_new).withColumn("_log_end", log_end)
    dirty_end = F.least(first_unstable, F.min("_too_new").over(partition), F.col("_log_end"))
    batches = batches.withColumn("_dirty_end", dirty_end)
    holder = F.max(
        F.when(F.col("segment_base_offset") <= F.col("_dirty_end"), F.col("segment_base_offset"))
    ).over(partition)
    return batches.withColumn(
        "_first_uncleanable",
        F.when(F.col("_dirty_end") >= F.col("_log_end"), F.col("_log_end")).otherwise(
            F.coalesce(holder, F.lit(0))
        ),
    )


def _with_offset_map(rows):
    """COMPACT-10 [buildOffsetMap]: each key's latest offset among the data records below
    the first uncleanable offset, aborted transactions' records not counted (COMPACT-14)
    and records without a key skipped."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    in_map = (
        ~F.col("is_control")
        & ~F.col("_aborted")
        & F.col("key").isNotNull()
        & (F.col("offset") < F.col("_first_uncleanable"))
    )
    by_key = Window.partitionBy(_KEY, "key")
    return rows.withColumn("_map_offset", F.max(F.when(in_map, F.col("offset"))).over(by_key))


def _kept(now_ms: int):
    """COMPACT-11 to COMPACT-16 [Cleaner.shouldRetainRecord, cleanInto's filter]: beyond the
    cleaned range every record stays; inside it a marker stays unless spent and past its
    horizon, aborted data goes, a record without a key goes, and a keyed record stays when
    it is its key's latest, a tombstone only before its batch's delete horizon (a batch
    without one is stamped, so its tombstone stays, COMPACT-13; a magic 0/1 tombstone
    stays, COMPACT-16, as no segment lies below the first dirty offset)."""
    from pyspark.sql import functions as F

    outside = F.col("offset") >= F.col("_first_uncleanable")  # COMPACT-11
    tombstone_kept = (
        (F.col("magic") < 2) | F.col("_horizon").isNull() | (F.lit(now_ms) < F.col("_horizon"))
    )  # COMPACT-13, COMPACT-16
    data_kept = (
        ~F.col("_aborted")  # COMPACT-14
        & F.col("key").isNotNull()  # COMPACT-12
        # COMPACT-12: the latest of its key (a key not in the map has -1, as in SkimpyOffsetMap)
        & (F.col("offset") >= F.coalesce(F.col("_map_offset"), F.lit(-1)))
        & (F.col("value").isNotNull() | tombstone_kept)
    )
    inside = F.when(F.col("is_control"), ~F.col("_discard_marker")).otherwise(
        data_kept
    )  # COMPACT-15
    return outside | inside


def _with_delete_horizon(kept, clean: CleanAt):
    """COMPACT-13, COMPACT-15, COMPACT-19: a cleaned batch that keeps a tombstone, or a spent
    marker, and has no delete horizon is rewritten with ``now + delete_retention_ms``; a
    batch keeps the horizon it has; a batch beyond the cleaned range is not rewritten."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    batch = Window.partitionBy(_KEY, "batch_base_offset")
    inside = F.col("offset") < F.col("_first_uncleanable")
    stamps = inside & (
        (~F.col("is_control") & F.col("value").isNull() & (F.col("magic") >= 2))
        | F.col("_spent_marker")
    )
    stamped = F.max(stamps).over(batch)
    new = F.when(stamped, F.lit(clean.now_ms + clean.delete_retention_ms))
    return kept.withColumn(_NO_HORIZON_COLUMN, F.coalesce(F.col("_horizon"), new))
