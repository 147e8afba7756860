"""One atomic file write for every command that writes a file.

A reader (or an interrupted run) sees the old file or the new one, never a part:
the text goes to a hidden temporary file beside the target, which then replaces it.
Callers check links and folders first; this only writes.
"""

from __future__ import annotations

import os
from pathlib import Path


def write_atomic(path: Path, text: str, newline: str | None = "\n") -> None:
    """Replace ``path`` with ``text`` in one step (``newline`` as :func:`open` takes it)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8", newline=newline) as handle:
            handle.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            tmp.unlink()
