"""A testee written before producer state existed, for the harness's own tests: the
reference behind the contract as it was before idempotence and transactions. It claims
none of ``idempotence``, ``transaction_index`` and ``producer_snapshots``, writes no
``.snapshot`` file, answers no ``last_stable_offset`` or ``aborted_transactions``, and its
``append`` and ``read`` take none of the new arguments (a TypeError, i.e. a crash, if the
harness sent them).

``factory`` is the in-process factory (``old_testee:factory`` with this directory on the
path); ``python -m conformance.testee --factory old_testee:factory`` serves it.
"""

from __future__ import annotations

from unittest import mock

from conformance.reference import ReferenceAdapter
from reference_impl.log.producer_state_manager import ProducerStateManager

OLD_FEATURES = [
    "compression",
    "crash_recovery",
    "leader_epoch_checkpoint",
    "legacy_formats",
    "log_append_time",
    "preallocate",
]
NEW_STATE_FIELDS = ("last_stable_offset",)


class OldAdapter:
    def __init__(self, write_snapshots: bool = False) -> None:
        self._inner = ReferenceAdapter()
        self._write_snapshots = write_snapshots

    def _call(self, name: str, *args, **kwargs):
        method = getattr(self._inner, name)
        if self._write_snapshots:
            result = method(*args, **kwargs)
        else:
            with mock.patch.object(
                ProducerStateManager, "take_snapshot", lambda self, sync=True: None
            ):
                result = method(*args, **kwargs)
        if isinstance(result, dict):
            for key in (*NEW_STATE_FIELDS, "aborted_transactions"):
                result.pop(key, None)
        return result

    def hello(self, *, now_ms: int, **_: object) -> dict:
        return {**self._inner.hello(now_ms=now_ms), "features": list(OLD_FEATURES)}

    def append(self, batches, assign_offsets, leader_epoch, *, now_ms):
        return self._call("append", batches, assign_offsets, leader_epoch, now_ms=now_ms)

    def read(self, start_offset, max_bytes, max_offset=None, min_one_message=False, *, now_ms):
        return self._call(
            "read", start_offset, max_bytes, max_offset, min_one_message, now_ms=now_ms
        )

    def __getattr__(self, name: str):
        def call(*args, **kwargs):
            return self._call(name, *args, **kwargs)

        return call


def factory() -> OldAdapter:
    return OldAdapter()


def factory_with_snapshots() -> OldAdapter:
    """Writes .snapshot files without claiming producer_snapshots: they must not count."""
    return OldAdapter(write_snapshots=True)
