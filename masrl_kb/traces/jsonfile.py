"""Strict JSON for every trace reader: regular files of bounded size, no repeated keys (json
keeps the last value), no NaN, Infinity or 1e999 (they slip past "minimum" and poison sums)."""

from __future__ import annotations

import json
import math
import os
import re
import stat
from typing import IO, Any

# A file larger than this is refused before it is read (a 1,000,000-event trace is about
# 160 MB).
MAX_FILE_BYTES = 4 * 1024**3
# Locating a repeated key scans the text in Python; beyond this size only the key is named.
LOCATE_LIMIT_BYTES = 50 * 1024**2
# A string (a key when a colon follows it) or a bracket: all the locator needs to see.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"(?:[ \t\n\r]*:)?|[{}\[\]]')


class DuplicateKeyError(ValueError):
    """A JSON object names the same key twice (json would silently keep the last value)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is too large for a number")
    return value


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return obj


def parse_json(text: str) -> Any:
    """Parse JSON, refusing repeated keys (:class:`DuplicateKeyError`), NaN, Infinity and
    numbers too large for a float (``ValueError``). The C parser's per-object and per-float
    hooks measured faster than a plain parse and a walk."""
    return json.loads(
        text,
        object_pairs_hook=_unique_pairs,
        parse_constant=_reject_constant,
        parse_float=_finite_float,
    )


def repeated_key_position(text: str) -> tuple[int, int] | None:
    """Line and column of the first object to close with a repeated key, the one
    :func:`parse_json` names (a scan of the strings and brackets of the text)."""
    open_objects: list[tuple[int, set[str]]] = []
    repeating: set[int] = set()  # where the open objects with a repeated key start
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in ("{", "["):
            open_objects.append((match.start(), set()))
        elif token.endswith(":") and open_objects:
            start, keys = open_objects[-1]
            key = json.loads(token[: token.rindex('"') + 1])
            if key in keys:
                repeating.add(start)
            keys.add(key)
        elif token in ("}", "]") and open_objects:
            start, _ = open_objects.pop()
            if start in repeating:
                line = text.count("\n", 0, start) + 1
                return line, start - (text.rfind("\n", 0, start) + 1) + 1
    return None


def duplicate_key_message(key: str, text: str | None = None) -> str:
    """The message for an object that repeats ``key``; located in ``text`` when it is given
    and not too long to scan."""
    where = ""
    if text is not None and len(text) <= LOCATE_LIMIT_BYTES:
        position = repeated_key_position(text)
        if position is not None:
            where = f" (object at line {position[0]} column {position[1]})"
    return (
        f"not valid JSON{where}: the key {json.dumps(key)} appears twice in one object "
        "(only one value can count)"
    )


def json_error(exc: Exception, text: str | None = None) -> str:
    """One line on why JSON did not parse; ``text`` is the whole document (positions by line
    and column), else the caller names the line and only a column is given."""
    if isinstance(exc, DuplicateKeyError):
        return duplicate_key_message(exc.key, text)
    if isinstance(exc, json.JSONDecodeError) and text is not None:
        return f"not valid JSON (line {exc.lineno} column {exc.colno}): {exc.msg}"
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON: {exc.msg} (column {exc.colno})"
    reason = (str(exc).splitlines() or [type(exc).__name__])[0]
    return f"not valid JSON: {reason if text is not None else reason[:200]}"


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
