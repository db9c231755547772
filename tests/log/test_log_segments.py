"""LogSegmentsTest, restated (catalogue 6.3 #63)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from reference_impl.log.log_segments import LogSegments

from .support import create_segment


@pytest.fixture
def make(tmp_path):
    return lambda offset: create_segment(tmp_path, offset)


@pytest.mark.req("MODEL-1", "READ-8")
def test_basic_operations(make):
    segments = LogSegments()
    seg1, seg2, seg3 = make(40), make(80), make(40)
    assert segments.is_empty()
    segments.add(seg1)
    assert not segments.is_empty() and segments.number_of_segments() == 1
    assert segments.contains(40) and segments.get(40) is seg1
    segments.add(seg2)
    assert segments.number_of_segments() == 2 and segments.get(80) is seg2
    segments.add(seg3)  # replaces seg1
    assert segments.number_of_segments() == 2 and segments.get(40) is seg3
    segments.remove(80)
    assert segments.number_of_segments() == 1 and not segments.contains(80)
    segments.clear()
    assert segments.is_empty() and not segments.contains(40)


@pytest.mark.req("MODEL-1", "READ-8")
def test_segment_access(make):
    segments = LogSegments()
    seg1, seg2, seg3, seg4 = (make(o) for o in (1, 2, 3, 4))
    for seg in (seg1, seg2, seg3, seg4):
        segments.add(seg)
        assert segments.first_segment is seg1
        assert segments.last_segment is seg
    assert segments.base_offsets() == [1, 2, 3, 4]
    assert segments.values() == [seg1, seg2, seg3, seg4]
    with pytest.raises(ValueError):
        segments.values(2, 1)
    assert segments.values(1, 1) == []
    assert segments.values(1, 2) == [seg1]
    assert segments.values(1, 3) == [seg1, seg2]
    assert segments.values(1, 4) == [seg1, seg2, seg3]
    assert segments.values(2, 4) == [seg2, seg3]
    assert segments.values(3, 4) == [seg3]
    assert segments.values(4, 4) == []
    assert segments.values(4, 5) == [seg4]
    assert segments.values(0, 2) == [seg1]  # below every base: from the first segment
    assert segments.active_segment is seg4
    assert segments.non_active_log_segments_from(2) == [seg2, seg3]
    assert segments.non_active_log_segments_from(4) == []


@pytest.mark.req("MODEL-1", "READ-8")
def test_closest_match_operations(make):
    segments = LogSegments()
    seg1, seg2, seg3, seg4 = (make(o) for o in (1, 3, 5, 7))
    for seg in (seg1, seg2, seg3, seg4):
        segments.add(seg)
    assert segments.floor_segment(2) is seg1
    assert segments.floor_segment(3) is seg2
    assert segments.floor_segment(0) is None
    assert segments.lower_segment(3) is seg1
    assert segments.lower_segment(4) is seg2
    assert segments.higher_segment(4) is seg3
    assert segments.higher_segment(5) is seg4
    assert segments.higher_segment(7) is None


@pytest.mark.req("MODEL-1", "READ-8")
def test_higher_segments(make):
    segments = LogSegments()
    segs = [make(o) for o in (1, 3, 5, 7, 9)]
    for seg in segs:
        segments.add(seg)
    assert segments.higher_segments(0) == segs
    assert segments.higher_segments(1) == segs[1:]
    assert segments.higher_segments(8) == segs[4:]
    assert segments.higher_segments(9) == []


@pytest.mark.req("RET-8")
def test_size_for_large_logs():
    """The log's size is a long: it may pass 2^31-1."""
    segments = LogSegments()
    for base in (0, 1):
        segments.add(SimpleNamespace(base_offset=base, size=2**31 - 1))
    assert segments.size_in_bytes() == 2 * (2**31 - 1)
