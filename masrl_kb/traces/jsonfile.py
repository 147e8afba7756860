"""The files every trace reader opens: regular files of bounded size, parsed by the package's
strict JSON parser (`masrl_kb/kb/strict_json.py`: no repeated keys, NaN, Infinity or 1e999),
whose names are re-exported here for the trace modules."""

from __future__ import annotations

import os
import stat
from typing import IO, Any

from masrl_kb.kb.strict_json import (
    DuplicateKeyError,
    duplicate_key_message,
    json_error,
    parse_json,
)

__all__ = [
    "DuplicateKeyError",
    "duplicate_key_message",
    "json_error",
    "open_regular",
    "parse_json",
    "read_bounded",
    "read_json",
]

# A file larger than this is refused before it is read (a 1,000,000-event trace is about
# 160 MB).
MAX_FILE_BYTES = 4 * 1024**3


def open_regular(path: str | os.PathLike[str]) -> IO[bytes]:
    """A regular, not-too-large file opened for binary reading; symlinks, FIFOs and
    devices are refused with ``OSError`` (every trace reader opens files through this)."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise OSError(0, "it is a symbolic link (give the file it points to)")
    if not stat.S_ISREG(info.st_mode):
        raise OSError(0, "not a regular file")
    if info.st_size > MAX_FILE_BYTES:
        raise OSError(0, f"larger than {MAX_FILE_BYTES // 1024**3} GiB")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    return os.fdopen(os.open(path, flags), "rb")


def read_bounded(handle: IO[bytes]) -> bytes:
    """The whole of an open regular file, as long as its size said when it was opened: one
    allocation of that size (asking for the largest allowed size would reserve 4 GiB of
    address space). A file that grew since is refused rather than read on."""
    size = os.fstat(handle.fileno()).st_size
    if size > MAX_FILE_BYTES:
        raise OSError(0, f"larger than {MAX_FILE_BYTES // 1024**3} GiB")
    data = handle.read(size)
    if handle.read(1):
        raise OSError(0, "it grew while it was read")
    return data


def read_json(path: str | os.PathLike[str]) -> tuple[Any, str | None]:
    """The parsed JSON document of a file, or ``None`` and why not; never raises."""
    try:
        with open_regular(path) as handle:
            data = read_bounded(handle)
        text = data.decode("utf-8")
        del data  # the bytes are not needed while the text is parsed
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return None, f"cannot read the file: {reason}"
    try:
        return parse_json(text), None
    except (ValueError, RecursionError) as exc:
        return None, json_error(exc, text)
