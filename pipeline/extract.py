"""``klogspec extract``: every record of some segments to Parquet, partitioned by topic and
partition (``OUT/topic=<t>/partition=<p>/part-*.parquet``).

The rows are the data source's record level (schema.py): compressed batches decoded,
control records kept with ``is_control`` and ``control_type`` set, or left out with
``skip_control``. Within each file, rows are in (file, position, offset) order. With
``decode``, internal topics' records carry ``key_decoded`` and ``value_decoded``, and the
tables of offset commits and metadata records are written beside them (decoded.py).

The files are written by the tasks with pyarrow, not by Spark's Parquet writer, for two
things Spark's writer cannot do: keep ``topic`` and ``partition`` in each file as well as
in the directory names (Spark drops partition columns from the files, so a file read on
its own would not say whose records it holds), and write ``timestamp`` as Parquet's
millisecond UTC timestamp (Spark writes INT96 by default). The commit is Spark's own
protocol in miniature: each task attempt writes under ``OUT/_temporary/<attempt>/``, the
driver moves the files of the attempts Spark kept (one per task, whatever retries and
speculation ran) into place, then writes ``_SUCCESS``; a failed job leaves no ``OUT``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs

from .compacted import CleanAt, latest_per_key
from .datasource import NAME
from .schema import MILLIS
from .splits import DEFAULT_SPLIT_SIZE
from .storage import filesystem

NULL_DIRECTORY = "__HIVE_DEFAULT_PARTITION__"  # Spark's and Hive's name for a null value
SORT = ("topic", "partition", "file", "position", "offset")
_WRITTEN = "topic string, partition int, records bigint, control bigint, temp string, path string"


@dataclass(frozen=True)
class Written:
    """What one (topic, partition) of the output holds."""

    topic: str | None
    partition: int | None
    records: int
    control: int


def read_segments(
    spark,
    paths: list[str],
    *,
    level: str = "record",
    on_error: str = "fail",
    split_size: int | str = DEFAULT_SPLIT_SIZE,
    decode: str = "none",
):
    """The data source over ``paths``, spread over the session's cores."""
    return (
        spark.read.format(NAME)
        .option("level", level)
        .option("on_error", on_error)
        .option("split_size", str(split_size))
        .option("min_partitions", str(spark.sparkContext.defaultParallelism))
        .option("decode", decode)
        .load(list(paths))
    )


def read_latest_per_key(
    spark,
    paths: list[str],
    clean: CleanAt,
    *,
    on_error: str = "fail",
    split_size: int | str = DEFAULT_SPLIT_SIZE,
    decode: str = "none",
):
    """The records under ``paths`` that a complete cleaning at ``clean.now_ms`` keeps
    (compacted.py), with ``delete_horizon_ms``. Not an option of the data source: a
    reader's task sees one split, and which record is its key's latest needs the whole
    partition (a shuffle). ``on_error=report`` is refused: an error row has no key."""
    if on_error == "report":
        raise ValueError("the latest records per key need on_error fail or skip, not report")
    options = {"on_error": on_error, "split_size": split_size}
    records = read_segments(spark, paths, decode=decode, **options)
    batches = read_segments(spark, paths, level="batch", **options)
    return latest_per_key(records, batches, clean)


def extract(
    spark,
    paths: list[str],
    out: str,
    *,
    skip_control: bool = False,
    on_error: str = "fail",
    split_size: int | str = DEFAULT_SPLIT_SIZE,
    overwrite: bool = False,
    decode: str = "none",
    latest: CleanAt | None = None,
) -> list[Written]:
    """Write the records under ``paths`` to ``out``; what was written, by topic and
    partition. FileExistsError when ``out`` exists and not ``overwrite``. With ``decode``,
    the typed tables of decoded.py are written too, before ``_SUCCESS``. With ``latest``,
    only the records a complete cleaning at that time keeps (read_latest_per_key)."""
    from pyspark.sql import functions as F

    fs, root = filesystem(out.rstrip("/"))
    if latest is not None and on_error == "report":
        raise ValueError("--latest-per-key needs --on-error fail or skip, not report")
    _prepare(fs, root, out, overwrite)
    options = {"on_error": on_error, "split_size": split_size, "decode": decode}
    if latest is None:
        frame = read_segments(spark, paths, **options)
    else:
        frame = read_latest_per_key(spark, paths, latest, **options)
    if skip_control:  # error rows (on_error=report) have no flag: they are kept
        frame = frame.where(F.col("is_control").isNull() | ~F.col("is_control"))
    write = _TaskWriter(out.rstrip("/"))
    try:
        files = frame.sortWithinPartitions(*SORT).mapInArrow(write, _WRITTEN).collect()
        for row in files:  # the attempts Spark kept: one per task
            fs.create_dir(row.path.rsplit("/", 1)[0])
            fs.move(row.temp, row.path)
        fs.delete_dir(f"{root}/_temporary")
        if decode != "none":
            from .decoded import write_decoded_tables

            write_decoded_tables(spark, frame, out, "errorifexists")
        with fs.open_output_stream(f"{root}/_SUCCESS"):
            pass
    except BaseException:
        fs.delete_dir(root)
        raise
    return _totals(files)


def _prepare(fs: pafs.FileSystem, root: str, out: str, overwrite: bool) -> None:
    found = fs.get_file_info(root).type
    if found != pafs.FileType.NotFound:
        if not overwrite:
            raise FileExistsError(f"{out} already exists (--overwrite replaces it)")
        if found == pafs.FileType.Directory:
            fs.delete_dir(root)
        else:
            fs.delete_file(root)
    fs.create_dir(root)


def _totals(files) -> list[Written]:
    totals: dict[tuple, list[int]] = {}
    for row in files:
        total = totals.setdefault((row.topic, row.partition), [0, 0])
        total[0] += row.records
        total[1] += row.control
    key = sorted(totals, key=lambda k: (k[0] is None, k[0] or "", k[1] is None, k[1] or 0))
    return [Written(topic, partition, *totals[topic, partition]) for topic, partition in key]


class _TaskWriter:
    """The function ``mapInArrow`` runs in each task: the task's rows, sorted by topic and
    partition, become one Parquet file per (topic, partition) under the attempt's
    temporary directory; it yields one row per file (its counts, where it is, where it
    goes)."""

    def __init__(self, out: str) -> None:
        self.out = out

    def __call__(self, chunks):
        from pyspark import TaskContext

        context = TaskContext.get()
        fs, root = filesystem(self.out)
        name = f"part-{context.partitionId():05d}-{uuid.uuid4().hex}.parquet"
        temporary = f"{root}/_temporary/{context.taskAttemptId()}"
        file = None
        for chunk in chunks:
            for key, rows in _runs(chunk):
                if file is None or key != file.key:
                    if file is not None:
                        yield file.close()
                    relative = f"{_directory(key)}/{name}"
                    file = _PartFile(fs, key, f"{temporary}/{relative}", f"{root}/{relative}")
                file.write(rows)
        if file is not None:
            yield file.close()


class _PartFile:
    """One Parquet file of a task: the rows of one (topic, partition)."""

    def __init__(self, fs: pafs.FileSystem, key: tuple, temp: str, path: str) -> None:
        self.fs, self.key, self.temp, self.path = fs, key, temp, path
        self.records = self.control = 0
        self.writer = None

    def write(self, rows: pa.RecordBatch) -> None:
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        rows = rows.cast(_written_schema(rows.schema))  # from milliseconds: exact
        if self.writer is None:
            self.fs.create_dir(self.temp.rsplit("/", 1)[0])
            self.writer = pq.ParquetWriter(self.temp, rows.schema, filesystem=self.fs)
        self.writer.write_batch(rows)
        self.records += rows.num_rows
        self.control += pc.sum(rows.column("is_control").cast(pa.int64())).as_py() or 0

    def close(self) -> pa.RecordBatch:
        """Closes the file; the row that tells the driver about it."""
        self.writer.close()
        values = {
            "topic": (self.key[0], pa.string()), "partition": (self.key[1], pa.int32()),
            "records": (self.records, pa.int64()), "control": (self.control, pa.int64()),
            "temp": (self.temp, pa.string()), "path": (self.path, pa.string()),
        }  # fmt: skip
        arrays = [pa.array([value], type_) for value, type_ in values.values()]
        return pa.RecordBatch.from_arrays(arrays, names=list(values))


def _runs(chunk: pa.RecordBatch):
    """The chunk cut where (topic, partition) changes: ((topic, partition), rows) pairs."""
    topics, partitions = chunk.column("topic"), chunk.column("partition")
    first, last = (
        (topics[0].as_py(), partitions[0].as_py()),
        (topics[-1].as_py(), partitions[-1].as_py()),
    )
    if first == last:  # the rows are sorted: all of one (topic, partition), the common case
        yield first, chunk
        return
    topics, partitions = topics.to_pylist(), partitions.to_pylist()
    start = 0
    for i in range(1, chunk.num_rows + 1):
        if i == chunk.num_rows or (topics[i], partitions[i]) != (topics[start], partitions[start]):
            yield (topics[start], partitions[start]), chunk.slice(start, i - start)
            start = i


def _directory(key: tuple) -> str:
    topic, partition = (NULL_DIRECTORY if v is None else v for v in key)
    return f"topic={topic}/partition={partition}"


def _written_schema(schema: pa.Schema) -> pa.Schema:
    """The file's schema: Spark's microsecond timestamps back to the stored milliseconds."""
    # (Spark hands them over as us with its session's zone name, "Etc/UTC"; the values are UTC)
    return pa.schema([f.with_type(MILLIS) if pa.types.is_timestamp(f.type) else f for f in schema])
