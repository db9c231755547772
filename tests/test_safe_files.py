"""The one safe open of the tools (klogspec/safe_files.py): PART-8, only regular files, never
blocking on a FIFO; PART-9, no symbolic link out of the directory walked."""

from __future__ import annotations

import os

import pytest

from klogspec.safe_files import (
    FileTooLargeError,
    NotRegularFileError,
    open_regular,
    read_regular,
    resolve,
)

pytestmark = pytest.mark.req("PART-8", "PART-9")


@pytest.fixture
def part(tmp_path):
    directory = tmp_path / "t-0"
    directory.mkdir()
    (directory / "00000000000000000000.log").write_bytes(b"bytes")
    (tmp_path / "outside.log").write_bytes(b"outside")
    return directory


def refused(path, within=None) -> NotRegularFileError:
    with pytest.raises(NotRegularFileError) as caught:
        read_regular(path, within)
    return caught.value


def test_a_regular_file_and_a_link_to_one_in_the_directory_are_read(part):
    (part / "link.log").symlink_to("00000000000000000000.log")
    assert read_regular(part / "00000000000000000000.log", part) == b"bytes"
    assert read_regular(part / "link.log", part) == b"bytes"
    assert resolve(part / "link.log", part) == (part / "00000000000000000000.log").resolve()


def test_a_fifo_is_refused_without_blocking(part):
    os.mkfifo(part / "00000000000000000000.index")  # opening it for reading would block
    error = refused(part / "00000000000000000000.index", part)
    assert error.rule == "PART-8" and "a FIFO" in str(error)
    assert str(part / "00000000000000000000.index") in str(error)


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/null"])
def test_a_link_to_a_device_is_refused_as_not_a_regular_file(part, target):
    (part / "00000000000000000000.timeindex").symlink_to(target)
    error = refused(part / "00000000000000000000.timeindex", part)
    assert error.rule == "PART-8" and "character device" in str(error)
    with pytest.raises(NotRegularFileError):  # even named by the user: never a device
        open_regular(part / "00000000000000000000.timeindex")


def test_a_directory_under_a_file_name_is_refused(part):
    (part / "00000000000000000001.log").mkdir()
    assert refused(part / "00000000000000000001.log", part).rule == "PART-8"


def test_a_link_out_of_the_directory_is_refused_unless_named_by_the_user(part):
    (part / "00000000000000000002.log").symlink_to(part.parent / "outside.log")
    error = refused(part / "00000000000000000002.log", part)
    assert error.rule == "PART-9" and "outside" in str(error)
    assert read_regular(part / "00000000000000000002.log") == b"outside"  # no ``within``


def test_a_dangling_link_is_an_os_error_not_a_hang(part):
    (part / "00000000000000000003.log").symlink_to(part / "gone.log")
    with pytest.raises(FileNotFoundError):
        read_regular(part / "00000000000000000003.log", part)


def test_a_small_file_past_the_limit_is_not_read(part):
    """A checkpoint or snapshot larger than SMALL_FILE_LIMIT (a sparse 4 GiB snapshot) is
    refused before a byte is read."""
    with open(part / "00000000000000000000.snapshot", "wb") as handle:
        handle.truncate(4 << 30)
    with pytest.raises(FileTooLargeError, match="4294967296 bytes"):
        read_regular(part / "00000000000000000000.snapshot", part)
    assert read_regular(part / "00000000000000000000.log", part, limit=5) == b"bytes"
    with pytest.raises(FileTooLargeError):
        read_regular(part / "00000000000000000000.log", part, limit=4)
