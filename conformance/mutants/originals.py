"""The log's classes and methods the mutants patch, looked up through the classes at
import time (``ORIGINAL``): a mutant wraps the original and alters its input or output, or
patches one small helper for the length of a call, so it still applies when the log's
code moves. Module-level names a method reads are patched in the module the method lives
in now (``module_of``)."""

from __future__ import annotations

import reference_impl.formats.file_naming as naming
import reference_impl.log.unified_log as log
from reference_impl.log import (
    abstract_index,
    clean_shutdown,
    file_records,
    loader,
    local_log,
    log_validator,
    offset_index,
    producer_state,
    producer_state_manager,
    segment,
    time_index,
)

from .mutant import module_of

Seg = segment.LogSegment
Log = log.Log
PSM = producer_state_manager.ProducerStateManager
Append = producer_state.ProducerAppendInfo
# the modules whose globals the log's methods read, wherever the methods live now
ROLL = module_of(segment.roll_reason)  # ROLL_CONDITIONS, read by the roll check should_roll calls
APPEND = module_of(Log._append)  # analyze_and_validate_records
PRODUCERS = module_of(Log._analyze_and_validate_producer_state)  # update_producers
ORIGINAL = {
    "conditions": ROLL.ROLL_CONDITIONS,
    "append": Seg.append,
    "index_append": offset_index.OffsetIndex.append,
    "inactive": Seg.on_become_inactive_segment,
    "time_append": time_index.TimeIndex.maybe_append,
    "write_checkpoints": Log._write_checkpoints,
    "local_truncate": local_log.LocalLog.truncate_to,
    "size_pass": Log._delete_retention_size_breached_segments,
    "time_pass": Log._delete_retention_ms_breached_segments,
    "search": file_records.FileRecords.search_for_timestamp,
    "maybe_roll": Log.maybe_roll,
    "read": Seg.read,
    "truncate_to": Seg.truncate_to,
    "close": Seg.close,
    "log_read": Log.read,
    "log_append": Log._append,
    "log_truncate_to": Log.truncate_to,
    "analyze": log_validator.analyze_and_validate_records,
    "local_roll": local_log.LocalLog.roll,
    "delete_files": local_log.delete_segment_files,
    "prefix": naming.filename_prefix_from_offset,
    "recover": Seg.recover,
    "opening": clean_shutdown.LogDirs.opening,
    "log_roll": Log._roll,
    "update_producers": PRODUCERS.update_producers,
    "append_data_batch": Append.append_data_batch,
    "read_snapshot": producer_state_manager.read_snapshot,
    "collect_aborted": local_log.LocalLog.collect_aborted_transactions,
    "check_sequence": Append._check_sequence,
    "rebuild": loader.rebuild_producer_state,
    "index_init": abstract_index.AbstractIndex.__init__,
    "truncate_log": Log.truncate_to,
    "truncate_fully": Log.truncate_fully_and_start_at,
    "seg_close": Seg.close,
    "log_close": Log.close,
    "log_end_below_start": loader.LogLoader._delete_segments_if_log_start_greater_than_log_end,
    "update_producer_state": Log._update_producer_state,
}
