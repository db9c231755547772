"""The log on files (spec/behaviour/), one Kafka class per module under Kafka's name.

Bottom up: file_records.py (FileRecords), abstract_index.py, offset_index.py,
time_index.py and transaction_index.py (the indexes), segment.py (LogSegment, with its
roll decision in roll.py and its recovery in segment_recovery.py), log_segments.py,
local_log.py (LocalLog), unified_log.py (UnifiedLog, also exported
as Log; its roll conditions in roll.py), loader.py (LogLoader, with swap_files.py and
offset_overflow.py), producer_state.py and producer_state_manager.py, leader_epoch.py,
checkpoint_files.py and clean_shutdown.py. docs/reading-order.md gives the order to read
them in.
"""
