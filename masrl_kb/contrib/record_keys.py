"""How a new record is named: authors as ``Family, Given``, the record key derived from the
title and year, the citation key (``add``, ``screen decide`` and the candidate sources).
"""

from __future__ import annotations

import re
import unicodedata

# Words that make a poor key: a key is the title's name (before ':') or its
# first meaningful word.
_STOPWORDS = frozenset(
    """a an and are as at be beyond by can do does for from how in into is it its
    not of on or our the their through to toward towards via we what when where
    which who why with without you your""".split()
)
_NAME_PARTICLES = frozenset("da de del della der di dos du la le van von den ter".split())
_NAME_SUFFIXES = frozenset("jr jr. sr sr. ii iii iv".split())
_GROUP_WORDS = frozenset("collaboration consortium team group".split())


def family_given(name: str) -> str:
    """'Joshua B. Tenenbaum' as 'Tenenbaum, Joshua B.' ('van Beethoven, Ludwig',
    'King, Jr., Martin'); one-word and group names ('H1 Collaboration') kept as they are."""
    name = " ".join(name.split())
    words = name.split(" ")
    if "," in name or len(words) < 2 or words[-1].lower() in _GROUP_WORDS:
        return name
    suffix = ""
    if words[-1].lower().rstrip(",") in _NAME_SUFFIXES and len(words) > 2:
        suffix = words.pop().rstrip(",")
        words[-1] = words[-1].rstrip(",")
    start = len(words) - 1
    while start > 1 and words[start - 1] in _NAME_PARTICLES:
        start -= 1
    family, given = " ".join(words[start:]), " ".join(words[:start])
    return f"{family}, {suffix}, {given}" if suffix else f"{family}, {given}"


def _ascii_words(text: str) -> list[str]:
    flat = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*", flat)


def _slug(words: list[str]) -> str:
    return re.sub(r"-+", "-", "-".join(w.lower() for w in words)).strip("-")


def _with_year(base: str, year: int) -> str:
    return f"{base}{'-' if base[-1].isdigit() else ''}{year}"


def derive_key(title: str, year: int, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """A record key ('optima2024', 'wideseek-r1-2026'): the name before a colon (at most
    three words) or the first meaningful word, then the year; '-2', '-3'... when taken."""
    head, colon, _ = title.partition(":")
    head_words = _ascii_words(head)
    if colon and 1 <= len(head_words) <= 3:
        base = _slug(head_words)
    else:
        words = [w for w in _ascii_words(title) if w.lower() not in _STOPWORDS and len(w) > 1]
        base = _slug(words[:1]) or "paper"
    key = _with_year(base[:40].strip("-") or "paper", year)
    candidate, n = key, 2
    while candidate in taken:
        candidate, n = f"{key}-{n}", n + 1
    return candidate


def bibtex_key_for(key: str, year: int) -> str:
    """The citation key: the record key, with the year appended when it lacks it."""
    return key if key.endswith(str(year)) else _with_year(key, year)
