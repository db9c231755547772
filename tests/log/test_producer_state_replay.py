"""The replay fast path (ProducerStateManager.replay_data_batch) against the general path
(prepare_update, append, update, complete_txn) on random sequences of a log's batches."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl.errors import KafkaLogError
from reference_impl.log.log_validator import AppendOrigin
from reference_impl.log.producer_state_manager import ProducerStateManager
from reference_impl.records import RecordBatch, SimpleRecord, build_record_batch
from reference_impl.records.control import (
    ControlRecordType,
    encode_control_key,
    encode_end_txn_marker,
)

BATCH = st.fixed_dictionaries(
    {
        "pid": st.sampled_from([1, 2, 3]),
        "epoch": st.integers(0, 2),
        "seq": st.integers(0, 2**31 - 1),
        "n": st.integers(1, 3),
        "txn": st.booleans(),
        "marker": st.sampled_from([None, None, None, "COMMIT", "ABORT"]),
        "ts": st.integers(0, 10**6),
    }
)


def make_batch(spec: dict, offset: int) -> RecordBatch:
    if spec["marker"]:
        control = ControlRecordType[spec["marker"]]
        records = [SimpleRecord(key=encode_control_key(control), value=encode_end_txn_marker(0))]
        raw = build_record_batch(
            records, base_offset=offset, producer_id=spec["pid"], producer_epoch=spec["epoch"],
            is_transactional=True, is_control=True,
        )  # fmt: skip
    else:
        records = [SimpleRecord(value=b"v", timestamp=spec["ts"]) for _ in range(spec["n"])]
        raw = build_record_batch(
            records, base_offset=offset, producer_id=spec["pid"], producer_epoch=spec["epoch"],
            base_sequence=spec["seq"], is_transactional=spec["txn"],
        )  # fmt: skip
    return RecordBatch.from_bytes(raw)


def general(psm: ProducerStateManager, batch) -> None:
    info = psm.prepare_update(batch.producer_id, AppendOrigin.REPLICATION)
    completed = info.append(batch)
    psm.update(info)
    if completed is not None:
        psm.complete_txn(completed)


def fast(psm: ProducerStateManager, batch) -> None:
    if not psm.replay_data_batch(batch):
        general(psm, batch)


def state(psm: ProducerStateManager):
    return ({pid: repr(e) for pid, e in psm.producers.items()}, dict(psm.ongoing_txns))


@pytest.mark.req("RECOV-19", "PSTATE-8")
@settings(max_examples=150, deadline=None)
@given(st.lists(BATCH, max_size=25))
def test_replay_fast_path_equals_the_general_path(tmp_path_factory, specs):
    dir = tmp_path_factory.mktemp("replay")
    slow_psm, fast_psm = ProducerStateManager(dir), ProducerStateManager(dir)
    offset = 0
    for spec in specs:
        batch = make_batch(spec, offset)
        outcomes = []
        for apply, psm in ((general, slow_psm), (fast, fast_psm)):
            try:
                apply(psm, batch)
                outcomes.append(None)
            except KafkaLogError as exc:  # a non-transactional batch during a transaction
                outcomes.append(exc.category)
        assert outcomes[0] == outcomes[1]
        assert state(slow_psm) == state(fast_psm)
        if outcomes[0] is not None:
            break  # recovery would stop the load here
        offset = batch.last_offset + 1
