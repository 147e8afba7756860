"""Outside text (API answers, imported files, release CSVs) made safe: the one cleaner.

Every adapter, reader and message of ``contrib`` stores or prints outside text
through :func:`clean_text`, with one of the bounds below.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

# Bounds on hostile text, per field.
MAX_TITLE = 500
MAX_AUTHOR = 200
MAX_AUTHORS = 300
MAX_ABSTRACT = 6000
MAX_CATEGORY = 40
MAX_URL = 2000
MAX_LINE = 500  # one printed message line


def clean_text(value: object, limit: int = MAX_LINE) -> str:
    """One line of at most ``limit`` characters: NFC, control and line-break characters
    as spaces, format characters (bidi overrides, zero-width) dropped but the emoji
    joiner, runs of space collapsed; anything but text gives ""."""
    if not isinstance(value, str):
        return ""
    text = value
    if not (text.isascii() and text.isprintable()):  # the common case needs none of this
        text = unicodedata.normalize("NFC", text)
        text = "".join(
            " " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c
            for c in text
            if unicodedata.category(c) not in ("Cf", "Cs", "Co") or c == "\u200d"
        )
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def clean_names(names: Iterable[object], most: int | None = MAX_AUTHORS) -> list[str]:
    """Author names through :func:`clean_text` (:data:`MAX_AUTHOR` each), the empty ones
    dropped, the first ``most`` kept."""
    return [n for n in (clean_text(a, MAX_AUTHOR) for a in names) if n][:most]
