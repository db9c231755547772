"""Where segment files live: local paths and file-system URLs, behind one small interface.

Every path the pipeline reads goes through ``filesystem(path)``, which returns a
``pyarrow.fs.FileSystem`` and the path inside it:

* a plain path (or ``file://``) is the local file system;
* a URL whose scheme pyarrow knows (``s3://``, ``gs://``, ``hdfs://``, ``abfs://``...)
  opens pyarrow's own client for it (credentials from the usual environment);
* any other scheme goes through fsspec, when fsspec and the scheme's package (``adlfs``,
  ``ocifs``...) are installed.

Reads are positional (``RandomAccess.read``), through a read-ahead window, so a scan of a
segment is a sequence of large ranged reads and never holds the whole file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

import pyarrow.fs as pafs

HADOOP_SCHEMES = {"s3a": "s3", "s3n": "s3"}  # Hadoop's names for S3, as Spark users write them
WINDOW = 1 << 20  # bytes read ahead per positional read (as the reference scanner's chunk)


def is_url(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


@lru_cache(maxsize=32)
def _url_filesystem(root: str) -> pafs.FileSystem:
    """One client per scheme and bucket (``root`` = ``scheme://authority``)."""
    try:
        return pafs.FileSystem.from_uri(root)[0]
    except Exception as pyarrow_error:  # ArrowInvalid for an unknown scheme
        try:
            import fsspec
        except ImportError:
            raise ValueError(
                f"{root}: pyarrow has no file system for this scheme ({pyarrow_error}); "
                "install fsspec and the scheme's package to read it"
            ) from None
        protocol = root.split("://", 1)[0]
        return pafs.PyFileSystem(pafs.FSSpecHandler(fsspec.filesystem(protocol)))


def filesystem(path: str) -> tuple[pafs.FileSystem, str]:
    """The file system holding ``path`` and the path inside it."""
    if not is_url(path):
        return pafs.LocalFileSystem(), os.path.abspath(path.removeprefix("file://"))
    scheme, rest = path.split("://", 1)
    scheme = HADOOP_SCHEMES.get(scheme, scheme)
    authority, _, key = rest.partition("/")
    fs = _url_filesystem(f"{scheme}://{authority}")
    if isinstance(fs, pafs.PyFileSystem):
        return fs, path  # fsspec takes the URL
    if scheme in ("s3", "gs", "gcs"):
        return fs, rest  # bucket/key
    if scheme in ("hdfs", "viewfs"):
        return fs, f"/{key}"
    # other schemes: pyarrow's own parsing (for S3 it may ask the bucket's region: avoided
    # above, as this runs for every file a task opens)
    return fs, pafs.FileSystem.from_uri(path)[1]


def user_path(base: str, fs_path: str) -> str:
    """The user-facing path of ``fs_path``, found by listing ``base``: URLs stay URLs (pyarrow
    and fsspec list ``bucket/key`` or ``/path`` without the scheme), local paths stay plain."""
    if not is_url(base):
        return fs_path
    scheme, rest = base.split("://", 1)
    if fs_path.startswith("/"):  # hdfs://namenode:8020/path
        return f"{scheme}://{rest.split('/', 1)[0]}{fs_path}"
    return f"{scheme}://{fs_path}"  # s3://bucket/key


@dataclass(frozen=True)
class Listed:
    """A regular file found under a path: its user-facing path and size."""

    path: str
    size: int


def list_files(path: str) -> list[Listed]:
    """Every regular file under ``path`` (or ``path`` itself when it is a file), sorted."""
    fs, inner = filesystem(path)
    info = fs.get_file_info(inner)
    if info.type == pafs.FileType.NotFound:
        raise FileNotFoundError(f"{path}: no such file or directory")
    if info.type == pafs.FileType.File:
        return [Listed(path, info.size)]
    selector = pafs.FileSelector(inner, recursive=True)
    found = [
        Listed(user_path(path, entry.path), entry.size)
        for entry in fs.get_file_info(selector)
        if entry.type == pafs.FileType.File
    ]
    return sorted(found, key=lambda listed: listed.path)


def read_all(path: str, limit: int | None = None) -> bytes:
    """A small file whole (an index, a manifest), or its first ``limit`` bytes."""
    fs, inner = filesystem(path)
    with fs.open_input_file(inner) as handle:
        return handle.read(limit) if limit is not None else handle.read()


class RandomAccess:
    """Positional reads of one file through a read-ahead window; the ``source`` the
    reference's BatchScanner reads from (``read`` and ``view``, as its file source)."""

    def __init__(self, path: str) -> None:
        fs, inner = filesystem(path)
        self.path = path
        self.handle = fs.open_input_file(inner)
        self.size = self.handle.size()
        self.window = b""
        self.window_start = 0

    def view(self, position: int, size: int) -> tuple[bytes, int]:
        """A buffer holding the bytes of ``[position, position + size)`` (the window, moved
        there unless it already holds them) and where they start in it."""
        offset = position - self.window_start
        if offset < 0 or offset + size > len(self.window):
            self.window = self.handle.read_at(max(WINDOW, size), position)
            self.window_start, offset = position, 0
        return self.window, offset

    def read(self, position: int, size: int) -> bytes:
        if size > WINDOW:
            return self.handle.read_at(size, position)
        window, offset = self.view(position, size)
        return window[offset : offset + size]

    def close(self) -> None:
        self.handle.close()

    def __enter__(self) -> RandomAccess:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
