"""LogLoaderTest's offset-overflow cases and LogCleanerTest's crash test, restated: segments
replaced through the .cleaned/.swap protocol (catalogue 6.5 #99, #100)."""

from __future__ import annotations

import pytest

from reference_impl.errors import Category, KafkaLogError
from reference_impl.formats.file_naming import (
    CLEANED_FILE_SUFFIX,
    DELETED_FILE_SUFFIX,
    SWAP_FILE_SUFFIX,
    log_file_name,
    offset_index_file_name,
    time_index_file_name,
)
from reference_impl.log.config import LogConfig
from reference_impl.log.file_records import FileRecords
from reference_impl.log.load_events import LoadObserver
from reference_impl.log.offset_overflow import split_overflowed_segment
from reference_impl.records import (
    SimpleRecord,
    build_record_batch,
)

from .support import (
    keyed_batch,
    keys_in_log,
    open_log,
    partition_dir,
    small_config,
)

INT32_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1


# --- offset overflow (#99) ---


def write_sample_batches(records: FileRecords, base_offset: int) -> int:
    def batch(offset: int, *keys: int) -> bytes:
        return build_record_batch(
            [SimpleRecord(key=str(k).encode(), value=str(k).encode()) for k in keys],
            base_offset=offset,
            partition_leader_epoch=0,
        )

    records.append(batch(base_offset, base_offset))
    records.append(batch(base_offset + 1, base_offset + 1, base_offset + 2))
    records.append(batch(base_offset + INT32_MAX - 1, base_offset + INT32_MAX - 1))
    return base_offset + INT32_MAX


def initialize_log_dir_with_overflowed_segment(dir) -> None:
    """LogTestUtils.initializeLogDirWithOverflowedSegment: three segments, the second of which
    holds offsets that overflow its base; every segment has (empty) index files, so a clean
    load does not recover them."""
    dir.mkdir(parents=True, exist_ok=True)

    def segment(base_offset: int, overflow: bool) -> int:
        records = FileRecords.open(dir / log_file_name(base_offset))
        next_offset = write_sample_batches(records, base_offset)
        if overflow:
            next_offset = write_sample_batches(records, next_offset)
        records.close()
        (dir / offset_index_file_name(base_offset)).touch()
        (dir / time_index_file_name(base_offset)).touch()
        return next_offset

    next_offset = segment(0, False)
    next_offset = segment(next_offset, True)
    segment(next_offset, False)


def first_overflow_segment(log):
    for segment in log.log_segments():
        for b in segment.log.batches():
            if (
                b.last_offset > segment.base_offset + INT32_MAX
                or b.base_offset < segment.base_offset
            ):
                return segment
    return None


OVERFLOW_CONFIG = LogConfig(
    index_interval_bytes=1, file_delete_delay_ms=1000, segment_index_bytes=4096
)


def create_log_with_offset_overflow(tmp_path, clock):
    initialize_log_dir_with_overflowed_segment(partition_dir(tmp_path))
    log = open_log(tmp_path, clock, OVERFLOW_CONFIG, recovery_point=LONG_MAX)
    segment = first_overflow_segment(log)
    assert segment is not None
    return log, segment


def recover_and_check(tmp_path, clock, expected_keys, config=OVERFLOW_CONFIG):
    """LogTestUtils.recoverAndCheck: an unclean load from 0; after the deletion delay no
    temporary file is left, the keys are as expected and nothing overflows."""
    log = open_log(tmp_path, clock, config, clean=False)
    clock.sleep(config.file_delete_delay_ms + 1)
    log.scheduler.run_due()
    for file in log.dir.iterdir():
        assert not file.name.endswith((DELETED_FILE_SUFFIX, CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX))
    assert keys_in_log(log) == expected_keys
    assert first_overflow_segment(log) is None
    return log


def split(log, segment):
    return split_overflowed_segment(
        segment, None, log.segments, log.dir, log.config, log.clock, log.scheduler, LoadObserver()
    )


def restore_deleted_files(dir) -> None:
    for file in dir.iterdir():
        if file.name.endswith(DELETED_FILE_SUFFIX):
            file.rename(file.with_name(file.name[: -len(DELETED_FILE_SUFFIX)]))


def truncate_old_segment(segment) -> None:
    """Kafka's ``segmentWithOverflow.truncateTo(0)`` on the replaced segment: its .log is cut
    wherever its file now is (renamed back, still .deleted, or already gone)."""
    name = segment.log.file.name
    for path in (
        segment.log.file,
        segment.log.file.with_name(name.replace(DELETED_FILE_SUFFIX, "")),
    ):
        if path.exists():
            path.write_bytes(b"")
            return


@pytest.mark.req("RECOV-10")
def test_recovery_of_segment_with_offset_overflow(tmp_path, clock):
    log, _ = create_log_with_offset_overflow(tmp_path, clock)
    expected = keys_in_log(log)
    log.close_handlers()
    recovered_log = recover_and_check(tmp_path, clock, expected)
    for segment in recovered_log.log_segments():
        with pytest.raises(KafkaLogError) as raised:  # Kafka: IllegalArgumentException
            split(recovered_log, segment)
        assert raised.value.category is Category.OFFSET_OVERFLOW
    recovered_log.close()


@pytest.mark.req("RECOV-10", "LOAD-7", "LOAD-8", "LOAD-9", "LOAD-10")
@pytest.mark.parametrize("phase", [1, 2, 3, 4, 5])
def test_recovery_after_crash_during_split_phase(tmp_path, clock, phase):
    """testRecoveryAfterCrashDuringSplitPhase1..5: 1, 2: while the new segments are .cleaned
    (2: one already .swap) the split is undone and done again by the load; 3, 4: once all
    are .swap (4: the old files' deletion done too) it is completed; 5: one new segment
    still .swap, the other renamed into place."""
    log, overflowed = create_log_with_offset_overflow(tmp_path, clock)
    expected = keys_in_log(log)
    initial = log.number_of_segments
    new_segments = split(log, overflowed)
    if phase in (1, 2):
        for segment in reversed(new_segments):
            last = segment is new_segments[-1]
            segment.change_file_suffixes(
                "", SWAP_FILE_SUFFIX if phase == 2 and last else CLEANED_FILE_SUFFIX
            )
            segment.truncate_to(0)
        restore_deleted_files(log.dir)
    elif phase in (3, 4):
        for segment in reversed(new_segments):
            segment.change_file_suffixes("", SWAP_FILE_SUFFIX)
        if phase == 3:
            restore_deleted_files(log.dir)
        else:
            for file in log.dir.iterdir():
                if file.name.endswith(DELETED_FILE_SUFFIX):
                    file.unlink()
        truncate_old_segment(overflowed)
    else:
        new_segments[-1].change_file_suffixes("", SWAP_FILE_SUFFIX)
        truncate_old_segment(overflowed)
    log.close_handlers()
    recovered_log = recover_and_check(tmp_path, clock, expected)
    assert recovered_log.number_of_segments == initial + 1
    recovered_log.close()


# --- a log cleaner crash (#100) ---


def fake_clean(log, keep) -> None:
    """LogCleaner.cleanSegments, reduced to what the loader sees: the batches of the first 9
    segments whose key ``keep`` accepts, written into one ``.cleaned`` segment and swapped in
    (LocalLog.replaceSegments); the old segments' ``.deleted`` files stay (their delay has
    not passed)."""
    from reference_impl.log.offset_overflow import create_new_cleaned_segment, replace_segments

    old = log.log_segments()[:9]
    cleaned = create_new_cleaned_segment(log.dir, log.config, log.clock, old[0].base_offset)
    for segment in old:
        for b in segment.log.batches():
            if keep(int(b.records()[0].key)):
                cleaned.append(b.last_offset, b.raw)
    cleaned.on_become_inactive_segment()
    cleaned.flush()
    replace_segments(
        log.segments, [cleaned], old, log.dir, log.config, log.scheduler, LoadObserver()
    )


@pytest.mark.req("LOAD-26", "LOAD-10", "LOAD-13", "LOAD-14")
def test_reading_a_swap_segment_creates_its_index_swap(tmp_path, clock):
    """LogLoader opens a .swap segment to read its next offset, which creates the missing
    <base>.index.swap (LogLoader.java:145-155, LogSegment.java:605-606); renamed with the
    rest, it keeps the clean load from recovering the segment (its .index is empty, its
    .timeindex created empty)."""
    config = small_config(segment_bytes=300, index_interval_bytes=0)
    log = open_log(tmp_path, clock, config)
    for offset in range(5):
        log.append_as_leader(keyed_batch(0, offset), 0)
    log.close()
    dir = partition_dir(tmp_path)
    base = log.log_segments()[-1].base_offset
    for name in (offset_index_file_name(base), time_index_file_name(base)):
        (dir / name).unlink()
    log_file = dir / log_file_name(base)
    log_file.rename(log_file.with_name(log_file.name + SWAP_FILE_SUFFIX))
    observer = LoadObserver()
    log = open_log(tmp_path, clock, config, clean=True, observer=observer)
    assert not [e for e in observer.events if e.action == "recover"]
    assert (dir / offset_index_file_name(base)).exists()
    assert (dir / time_index_file_name(base)).exists()
    assert not list(dir.glob("*" + SWAP_FILE_SUFFIX))
    assert log.log_end_offset == 5
    log.close()


@pytest.mark.req("LOAD-5", "LOAD-6", "LOAD-7", "LOAD-8", "LOAD-9", "LOAD-10")
def test_recovery_after_crash(tmp_path, clock):
    """LogCleanerTest.testRecoveryAfterCrash: a crash 1) while the cleaned segment is .cleaned,
    2) partly renamed .swap, 3) all .swap with the old files not yet .deleted, 4) all .swap
    and the old files .deleted; 1, 2 undo the cleaning, 3, 4 complete it."""
    config = small_config(segment_bytes=300, index_interval_bytes=1, file_delete_delay_ms=10)
    log = open_log(tmp_path, clock, config)

    def fill():
        while log.number_of_segments < 10:
            offset = log.log_end_offset
            log.append_as_leader(keyed_batch(0, offset), 0)

    def even(key: int) -> bool:
        return key % 2 == 0

    fill()
    all_keys = keys_in_log(log)
    for stage in (1, 2, 3, 4):
        fake_clean(log, even)
        cleaned_keys = keys_in_log(log)
        head = log.log_segments()[0]
        if stage != 4:
            log.close()
        if stage in (1, 2):
            head.change_file_suffixes("", CLEANED_FILE_SUFFIX)
            if stage == 2:
                head.log.rename_to(
                    head.log.file.with_name(
                        head.log.file.name.replace(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)
                    )
                )
        else:
            head.change_file_suffixes("", SWAP_FILE_SUFFIX)
        if stage != 4:
            restore_deleted_files(log.dir)
        else:
            log.close_handlers()
        log = recover_and_check(
            tmp_path, clock, all_keys if stage in (1, 2) else cleaned_keys, config
        )
        all_keys = keys_in_log(log)
        fill()
        all_keys = keys_in_log(log)
    log.close()
