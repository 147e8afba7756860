"""One atomic file write for every command that writes a file: a reader sees the old file
or the new one, never a part (callers check links and folders first; this only writes)."""

from __future__ import annotations

import os
from pathlib import Path


def write_atomic(path: Path, data: str | bytes, newline: str | None = "\n") -> None:
    """Replace ``path`` with ``data`` in one step: text is written as UTF-8 (``newline``
    as :func:`open` takes it), bytes as they are."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if isinstance(data, bytes):
            with open(tmp, "xb") as handle:
                handle.write(data)
        else:
            with open(tmp, "x", encoding="utf-8", newline=newline) as handle:
                handle.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            tmp.unlink()
