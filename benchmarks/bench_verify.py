"""Figure 1: batch-level verify (framing + CRC) against CRC-32C of the same bytes.

*Ours* is ``verify_segment`` on a ``.log`` alone (no index files): the per-batch work of
``klogspec verify`` and ``klogspec scan``: framing, minimum size, CRC-32C, offset range,
codec, offset order, the tail. The *baseline* reads the same file the same way (1 MiB
``pread``s, the scanner's chunk) and runs the ``crc32c`` package over every byte: the
physical limit of this job, as a verify cannot do less than read and checksum.
"""

from __future__ import annotations

import os

import crc32c

from klogspec.verify.segment import SegmentFiles, verify_segment
from reference_impl.records.stream import CHUNK_SIZE

from .harness import Context, Figure, Target
from .workload import KiB, MiB, batch_template, format_size, write_segment

TARGET = Target("ratio", ">=", 0.8)
TARGET_1K = Target("ratio", ">=", 0.5)


def crc_of_file(path: str) -> int:
    """The baseline: CRC-32C of every byte, read in the scanner's chunks."""
    crc = 0
    with open(path, "rb") as handle:
        fd, position = handle.fileno(), 0
        size = os.fstat(fd).st_size
        while position < size:
            chunk = os.pread(fd, CHUNK_SIZE, position)
            crc = crc32c.crc32c(chunk, crc)
            position += len(chunk)
    return crc


def verify_log(path: str, expected: tuple[str, ...] = ()) -> None:
    """Verify a generated ``.log``, which has no findings but the ``expected`` rules."""
    result = verify_segment(SegmentFiles(path, base_offset=0, active=True))
    unexpected = [finding for finding in result.findings if finding.rule not in expected]
    if unexpected:
        raise AssertionError(f"the generated log has findings: {unexpected[:3]}")


def measure(ctx: Context, batch_bytes: int, name: str, *, target: Target | None) -> Figure:
    template = batch_template(batch_bytes, ctx.shape)
    folder = ctx.scratch(name)
    segment = write_segment(str(folder / "00000000000000000000.log"), template, ctx.size)
    ours, base = ctx.timed_pair(lambda: verify_log(segment.path), lambda: crc_of_file(segment.path))
    ctx.profiled(name, lambda: verify_log(segment.path))
    os.unlink(segment.path)
    return Figure(
        name=name,
        title=f"Batch-level verify, {format_size(batch_bytes)} batches",
        unit="MiB/s",
        ours=segment.size / ours / MiB,
        ours_label="verify_segment (framing, CRC, offsets, codec) of a .log",
        baseline=segment.size / base / MiB,
        baseline_label="crc32c package over the same file, 1 MiB preads",
        target=target,
        details={"bytes": segment.size, "batches": segment.batches, "batch_bytes": batch_bytes,
                 **ctx.timings(ours, base)},
    )  # fmt: skip


def figures(ctx: Context) -> list:
    return [
        (["verify-16k"], lambda: measure(ctx, 16 * KiB, "verify-16k", target=TARGET)),
        # what operators meet: real brokers mostly write small batches (issue 14)
        (["verify-1k"], lambda: measure(ctx, 1 * KiB, "verify-1k", target=TARGET_1K)),
    ]
