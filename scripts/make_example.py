"""Write a small example partition directory with the reference encoder.

Usage: python scripts/make_example.py OUT_DIR

Two segments of v2 batches in every codec, a transactional batch with its COMMIT
marker, and the text files a broker keeps beside them. Used by scripts/main.sh
until the conformance suite is the main job.
"""

from __future__ import annotations

import sys
from pathlib import Path

from reference_impl.records import (
    Compression,
    ControlRecordType,
    Header,
    SimpleRecord,
    build_control_batch,
    build_record_batch,
)

T0 = 1_700_000_000_000


def _records(first: int, count: int) -> list[SimpleRecord]:
    return [
        SimpleRecord(
            value=f"value-{first + i}".encode(),
            key=f"key-{(first + i) % 3}".encode(),
            timestamp=T0 + first + i,
            headers=(Header(b"source", b"make_example"),),
        )
        for i in range(count)
    ]


def main(out: Path) -> None:
    partition = out / "example-topic-0"
    partition.mkdir(parents=True, exist_ok=True)
    first_segment = b""
    offset = 0
    for codec in Compression:
        first_segment += build_record_batch(
            _records(offset, 5), base_offset=offset, compression=codec, partition_leader_epoch=0
        )
        offset += 5
    second_segment = build_record_batch(
        _records(offset, 3),
        base_offset=offset,
        producer_id=1000,
        producer_epoch=0,
        base_sequence=0,
        is_transactional=True,
        partition_leader_epoch=1,
    )
    offset += 3
    second_segment += build_control_batch(
        ControlRecordType.COMMIT,
        producer_id=1000,
        producer_epoch=0,
        coordinator_epoch=7,
        base_offset=offset,
        timestamp=T0 + offset,
        partition_leader_epoch=1,
    )
    (partition / f"{0:020d}.log").write_bytes(first_segment)
    (partition / f"{25:020d}.log").write_bytes(second_segment)
    (partition / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n1 25\n")
    (partition / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ")
    print(f"wrote {partition}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
