"""Rules for free text from records and the network: control characters, echoing values
in messages, and look-alike titles. Unicode's confusables (UTS #39) have no maintained
Python wrapper; titles are Latin-script, so a small look-alike table after NFKC covers it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

ECHO_LIMIT = 80
# Line breaks a reader (or a CSV/YAML/BibTeX consumer) treats as a new line.
LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
# Bidirectional embeddings, overrides and isolates can make text display in an
# order other than the one stored ("Trojan Source"): never wanted in a record.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

# Cyrillic and Greek letters drawn like a Latin letter (lower and upper case),
# after NFKC and case folding. Source: the "MA" (mixed-script, any-case) rows of
# Unicode's confusables.txt for these two scripts, restricted to Latin targets;
# each letter becomes the Latin letter at the same position.
_HOMOGLYPHS = str.maketrans(
    "авсԁеёһіїјкӏмнорԛѕтцѵԝхугɡ"  # Cyrillic
    "αβεηικνορτυχγζμϲϳ",  # Greek
    "abcdeehiijklmhopqstuvwxyrgabenikvoptuxyzucj",
)


# Capitals whose lower-case form is drawn unlike the Latin capital they mimic
# (Greek Eta looks like H, but eta like n): folded before case folding.
_UPPER_HOMOGLYPHS = str.maketrans({"Η": "h", "Ν": "n", "Υ": "y", "Μ": "m", "Ѕ": "s"})


def shorten(value: object, limit: int = ECHO_LIMIT) -> str:
    """``repr`` of a value cut to ``limit`` characters (control characters escaped)."""
    try:
        text = repr(value)
    except ValueError:  # an integer too long to print
        return "a number too long to show"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shorten_name(value: object, limit: int = ECHO_LIMIT) -> str:
    """A key or field name for a message: unquoted, control characters escaped, cut."""
    text = repr(str(value))[1:-1]
    return text if len(text) <= limit else text[: limit - 3] + "..."


NAMES_SHOWN = 15  # allowed names a message lists before "and N more"
_CLOSE_RATIO = 60  # rapidfuzz ratio (0-100) of a did-you-mean, as difflib's 0.6 cutoff
_CLOSE_PARTIAL = 85  # a weighted ratio that also finds "Amato" in "Amato, Christopher"
_LONGEST_QUERY = 200  # characters of a name compared: a huge one is cut, never fuzzed whole


def closest(name: object, choices: Sequence[object]) -> str | None:
    """The choice most like ``name`` (case and punctuation aside), or None when none is
    close: whole-name similarity first, then, for names of four characters or more, one
    that also matches a part ("Amato" -> "Amato, Christopher")."""
    from rapidfuzz import fuzz, process, utils

    text, texts = str(name)[:_LONGEST_QUERY], [str(c) for c in choices]
    found = process.extractOne(
        text, texts, scorer=fuzz.ratio, processor=utils.default_process, score_cutoff=_CLOSE_RATIO
    )
    if found is None and len(text.strip()) >= 4:
        found = process.extractOne(
            text,
            texts,
            scorer=fuzz.WRatio,
            processor=utils.default_process,
            score_cutoff=_CLOSE_PARTIAL,
        )
    return None if found is None else found[0]


def capped_list(choices: Sequence[object], shown: int = NAMES_SHOWN, sep: str = ", ") -> str:
    """``a, b, c`` or, past ``shown`` names, ``a, b, ... and 988 more`` (names escaped;
    ``sep`` "; " for names holding commas, as authors' do)."""
    texts = [shorten_name(c) for c in choices]
    if len(texts) <= shown:
        return sep.join(texts) or "none"
    return f"{sep.join(texts[:shown])} and {len(texts) - shown} more"


def suggest(
    name: object, choices: Sequence[object], label: str = "allowed", sep: str = ", "
) -> str:
    """The tail of an unknown-name message, one line however many names there are:
    `` (did you mean 'title'?); allowed fields: key, title ... and 12 more``."""
    close = closest(name, choices)
    hint = f" (did you mean {shorten_name(close)!r}?)" if close is not None else ""
    return f"{hint}; {label}: {capped_list(choices, sep=sep)}"


_BAD = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_BAD_MULTILINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_WORDS = re.compile(r"[^\W_]+")


def text_problem(text: str, multiline: bool = False) -> str | None:
    """Why a text value is refused, else None: control characters (C0, DEL, C1) and
    bidirectional controls anywhere, line breaks other than ``\\n`` in a multi-line field."""
    found = (_BAD_MULTILINE if multiline else _BAD).search(text)
    if found is None:
        return None
    ch = found.group()
    if ch in LINE_BREAKS:
        what = "a line break other than \\n" if multiline else "a line break"
    elif ch in _BIDI_CONTROLS:
        what = "a bidirectional-text control"
    else:
        what = "a control character"
    rule = "control characters are not allowed"
    if not multiline:
        rule = "this field is a single line; control characters are not allowed"
    return f"{what} (U+{ord(ch):04X}) at character {found.start() + 1}: {rule}"


def strip_controls(text: str) -> str:
    """Text with every control, line break and bidi control replaced by a space."""
    return _BAD.sub(" ", text)


def title_skeleton(title: str) -> str:
    """A title as a reader sees it: lower-case words after NFKC, without format characters
    (zero-width, soft hyphens, bidi marks) or combining marks, look-alike letters Latin."""
    if title.isascii():  # nothing to fold: NFKC, marks and look-alikes are all non-ASCII
        return " ".join(_WORDS.findall(title.lower()))
    text = unicodedata.normalize("NFKC", title)
    text = unicodedata.normalize(
        "NFD", "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    )
    text = "".join(ch for ch in text if unicodedata.category(ch) not in ("Mn", "Me", "Mc"))
    text = text.translate(_UPPER_HOMOGLYPHS).casefold().translate(_HOMOGLYPHS)
    return " ".join(_WORDS.findall(text))
