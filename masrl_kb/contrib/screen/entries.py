"""Screening candidates: one sanitised entry per paper a source found, and its id.

The id names the entry in every file of the round: the bare arXiv id, else ``doi:<DOI>``,
else ``openreview:<forum id>``, else ``title:<hash>`` of the normalised title.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from masrl_kb.contrib.outside_text import (
    MAX_ABSTRACT,
    MAX_AUTHOR,
    MAX_AUTHORS,
    MAX_CATEGORY,
    MAX_TITLE,
    MAX_URL,
    clean_text,
)
from masrl_kb.contrib.screen.store import StoreError
from masrl_kb.contrib.sources.arxiv import ArxivPaper, arxiv_or_none
from masrl_kb.kb.model.rounds_model import DOI_PATTERN, OPENREVIEW_PATTERN, SOURCE_NAME
from masrl_kb.kb.model.types import ARXIV_RE
from masrl_kb.kb.protocol import QueryFamily
from masrl_kb.kb.rounds import SCREENING_DIR, round_dir
from masrl_kb.kb.rules import is_http_url
from masrl_kb.kb.strict_json import json_error, parse_json
from masrl_kb.kb.text import title_skeleton

ENTRIES_JSON = "entries.json"
CANDIDATES_CSV = "candidates.csv"
CANDIDATES_RIS = "candidates.ris"
MAX_ENTRIES_BYTES = 50 * 1024 * 1024

_DOI = re.compile(rf"^{DOI_PATTERN}$")
_OPENREVIEW = re.compile(rf"^{OPENREVIEW_PATTERN}$")
_DOI_PREFIX = re.compile(r"^(?:doi:\s*|https?://(?:dx\.)?doi\.org/)", re.I)
# An arXiv id inside a cell: any arxiv.org address (abs/, pdf/, html/, export., www.), an
# "arXiv:" mention or arXiv's DataCite DOI (10.48550/arXiv.<id>), new- or old-style, with
# or without a version.
_ARXIV_IN_CELL = re.compile(
    r"(?:arxiv\.org/(?:abs|pdf|html)/|arxiv:\s*|10\.48550/arxiv\.)"
    r"([0-9]{4}\.[0-9]{4,5}(?:v[0-9]+)?|[a-z-]+(?:\.[a-z]{2})?/[0-9]{7}(?:v[0-9]+)?)",
    re.I,
)


class EntryError(ValueError):
    """A candidate id or field that cannot be read (the message names the value)."""


def title_key(title: str) -> str:
    """A title for look-alike comparison: accents folded, then the records' normalisation."""
    folded = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    return title_skeleton(folded)


def known_id(*ids: str, forms: tuple[str, ...] = ("{}", "doi:{}", "openreview:{}")) -> str:
    """The first of a candidate's (arXiv id, DOI, OpenReview id) in its form, by default its
    id (the bare arXiv id, ``doi:``, ``openreview:``); empty when it has none of them."""
    return next((form.format(i) for form, i in zip(forms, ids, strict=True) if i), "")


def title_id(title: str) -> str:
    """The candidate id of an entry that has no arXiv id, DOI or OpenReview id."""
    return "title:" + hashlib.sha256(title_key(title).encode()).hexdigest()[:16]


def parse_doi(text: str) -> str:
    """A DOI (lower-cased, no ``doi:`` or doi.org prefix); :class:`EntryError` otherwise."""
    doi = unquote(_DOI_PREFIX.sub("", text.strip())).lower()
    if not _DOI.match(doi):
        raise EntryError(f"malformed DOI {text.strip()[:80]!r}: expected 10.NNNN/suffix")
    return doi


def arxiv_of(text: object) -> str:
    """The arXiv id (no version) a cell names: a bare or ``arXiv:`` id, any arxiv.org
    address, or arXiv's DataCite DOI as ``10.48550/arXiv.<id>``, ``doi:`` or a doi.org URL
    (percent-encoded too); "" when it names none. Every id-bearing column is read with it,
    so a pooled paper is known whichever column carries its id."""
    if not isinstance(text, str) or not text.strip():
        return ""
    raw = unquote(text.strip())
    found = arxiv_or_none(raw)
    if found:
        return found
    inside = _ARXIV_IN_CELL.search(raw)
    return (arxiv_or_none(inside.group(1)) or "") if inside else ""


def or_empty(parse: Callable[[str], str], value: object) -> str:
    """``parse(value)``, or "" when ``value`` is not text or ``parse`` refuses it (any
    ValueError: an :class:`EntryError`, an ``ArxivError``, a URL ``urlsplit`` refuses)."""
    try:
        return parse(value) if isinstance(value, str) and value else ""
    except ValueError:
        return ""


def parse_openreview(text: str) -> str:
    """An OpenReview forum id from an id, ``openreview:`` id or openreview.net URL."""
    raw = text.strip()
    parts = urlsplit(raw)
    if parts.netloc.lower().removeprefix("www.") == "openreview.net":
        raw = (parse_qs(parts.query).get("id") or [""])[0]
    raw = re.sub(r"^openreview:\s*", "", raw, flags=re.I)
    if not _OPENREVIEW.match(raw):
        raise EntryError(
            f"malformed OpenReview id {text.strip()[:80]!r}: expected a forum id "
            "(letters, digits, '_' or '-') or an openreview.net/forum?id= URL"
        )
    return raw


@dataclass
class Entry:
    """One candidate a source found, sanitised."""

    arxiv_id: str  # "" when the source gives none
    title: str
    authors: list[str]
    submitted: dt.date  # first public version
    primary_category: str
    abstract: str
    families: list[str] = field(default_factory=list)
    score: float | None = None
    duplicate_of: str = ""
    match: str = ""
    doi: str = ""
    openreview_id: str = ""
    url: str = ""  # the source's link; empty for arXiv entries (the abs page)
    source: str = "arxiv"  # an exclusion_source id

    @property
    def id(self) -> str:
        return known_id(self.arxiv_id, self.doi, self.openreview_id) or title_id(self.title)

    @property
    def link(self) -> str:
        """The record's http(s) address: the source's URL, else one made from an id."""
        forms = (
            "https://arxiv.org/abs/{}",
            "https://doi.org/{}",
            "https://openreview.net/forum?id={}",
        )
        return self.url or known_id(self.arxiv_id, self.doi, self.openreview_id, forms=forms)

    @property
    def identifier(self) -> str:
        """An exclusion record's ``identifier``: arXiv:ID, doi:..., OpenReview:... or the URL."""
        forms = ("arXiv:{}", "doi:{}", "OpenReview:{}")
        return known_id(self.arxiv_id, self.doi, self.openreview_id, forms=forms) or self.link

    def paper(self) -> ArxivPaper:
        return ArxivPaper(
            self.arxiv_id,
            self.title,
            tuple(self.authors),
            self.submitted,
            self.primary_category,
            self.abstract,
        )

    @classmethod
    def from_paper(cls, paper: ArxivPaper) -> Entry:
        """A ``screen run`` entry; ``;`` in a name would split it in ``candidates.csv``."""
        authors = [a.replace(";", ",") for a in paper.authors]
        return cls(
            arxiv_id=paper.arxiv_id,
            title=paper.title,
            authors=authors[:MAX_AUTHORS],
            submitted=paper.published,
            primary_category=paper.primary_category,
            abstract=paper.abstract,
        )

    def to_json(self) -> dict:
        return asdict(self) | {"submitted": self.submitted.isoformat()}

    @classmethod
    def from_json(cls, data: object) -> Entry:
        """An entry of ``entries.json``, every field checked (:class:`EntryError` names
        the first wrong one): the file may have been edited by hand or in a pull request."""
        if not isinstance(data, dict):
            raise EntryError("expected a mapping of the entry's fields")
        unknown = sorted(set(data) - set(_JSON_FIELDS))
        missing = [n for n in _REQUIRED_JSON if n not in data]
        if unknown or missing:
            what = f"unknown field {unknown[0][:40]!r}" if unknown else f"no {missing[0]}"
            raise EntryError(f"{what}; fields: {', '.join(_JSON_FIELDS)}")
        for name, value in data.items():
            problem = _JSON_FIELDS[name](value)
            if problem:
                raise EntryError(f"{name}: {problem}")
        return cls(**(data | {"submitted": dt.date.fromisoformat(data["submitted"])}))


def _text(limit: int, empty: bool = True) -> Callable[[object], str | None]:
    def check(value: object) -> str | None:
        if not isinstance(value, str):
            return f"expected text, got {type(value).__name__}"
        if value != clean_text(value, limit) or (not value and not empty):
            return f"empty, longer than {limit} characters or holding control characters"
        return None

    return check


def _texts(limit: int, most: int) -> Callable[[object], str | None]:
    one = _text(limit, empty=False)

    def check(value: object) -> str | None:
        if not isinstance(value, list) or len(value) > most:
            return f"expected a list of at most {most} texts, got {type(value).__name__}"
        return next((f"[{n}]: {p}" for n, v in enumerate(value) if (p := one(v))), None)

    return check


def _matching(pattern: re.Pattern[str], what: str) -> Callable[[object], str | None]:
    def check(value: object) -> str | None:
        if not isinstance(value, str) or (value and not pattern.match(value)):
            return f"expected {what} or empty text"
        return None

    return check


def _day(value: object) -> str | None:
    try:
        dt.date.fromisoformat(value if isinstance(value, str) and len(value) == 10 else "")
    except ValueError:
        return "expected a date YYYY-MM-DD"
    return None


def _score(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and -1e6 < value < 1e6:
        return None
    return "expected a number or null"


def _url(value: object) -> str | None:
    if not isinstance(value, str) or (value and (not is_http_url(value) or len(value) > MAX_URL)):
        return "expected an http(s) URL or empty text"
    return _text(MAX_URL)(value)


_JSON_FIELDS: dict[str, Callable[[object], str | None]] = {
    "arxiv_id": _matching(ARXIV_RE, "an arXiv id"),
    "title": _text(MAX_TITLE, empty=False),
    "authors": _texts(MAX_AUTHOR, MAX_AUTHORS),
    "submitted": _day,
    "primary_category": _text(MAX_CATEGORY),
    "abstract": _text(MAX_ABSTRACT),
    "families": _texts(80, 50),
    "score": _score,
    "duplicate_of": _text(2000),
    "match": _text(200),
    "doi": _matching(_DOI, "a DOI"),
    "openreview_id": _matching(_OPENREVIEW, "an OpenReview id"),
    "url": _url,
    "source": _matching(re.compile(SOURCE_NAME), "a source name (kind or kind:which)"),
}
_REQUIRED_JSON = ("arxiv_id", "title", "authors", "submitted", "primary_category", "abstract")


def _term_pattern(term: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![a-z0-9]){re.escape(term.lower())}(?![a-z0-9])")


def subject_terms(families: tuple[QueryFamily, ...] | list[QueryFamily]) -> frozenset[str]:
    """Terms the survey's subject is made of rather than one family's: a term that is a
    proper sub-phrase of terms of two or more other families (``multi-agent``, inside
    ``multi-agent LLM`` and ``multi-agent credit``). Every candidate matches one, so alone
    it names no family."""
    return _subject_terms(tuple((f.id, tuple(t.lower() for t in f.terms)) for f in families))


@functools.lru_cache(maxsize=8)
def _subject_terms(families: tuple[tuple[str, tuple[str, ...]], ...]) -> frozenset[str]:
    found = set()
    for fid, terms in families:
        for term in terms:
            pattern = _term_pattern(term)
            builders = {
                other
                for other, longer_terms in families
                if other != fid
                for longer in longer_terms
                if longer != term and pattern.search(longer)
            }
            if len(builders) >= 2:
                found.add(term)
    return frozenset(found)


def query_families(query: str, families: tuple[QueryFamily, ...] | list[QueryFamily]) -> list[str]:
    """The families whose terms occur in ``query`` (a batch's query, or an imported entry's
    title and abstract: the rule of the arXiv queries), in protocol order; a match on
    :func:`subject_terms` only labels no family (a candidate matching only ``multi-agent``
    is not a safety paper)."""
    text = query.lower()
    subject = subject_terms(families)
    return [
        f.id
        for f in families
        if any(_term_pattern(t).search(text) for t in f.terms if t.lower() not in subject)
    ]


def entries_json(entries: list[Entry]) -> str:
    data = [e.to_json() for e in entries]
    return json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def read_entries(root: Path, rid: str) -> dict[str, Entry]:
    """The candidates of a round, by candidate id, from its ``entries.json``, checked
    before use: one :class:`StoreError` line naming the entry and field otherwise."""
    path = round_dir(root, rid) / ENTRIES_JSON
    rel = f"{SCREENING_DIR}/{rid}/{ENTRIES_JSON}"
    if path.is_symlink():
        raise StoreError(f"{path}: a symbolic link; refused")
    if not path.is_file():
        return {}
    if path.stat().st_size > MAX_ENTRIES_BYTES:
        raise StoreError(f"{path} is larger than expected; refusing to read it")
    text = ""
    try:
        text = path.read_bytes().decode("utf-8")
        data = parse_json(text)  # no repeated key, NaN or Infinity
    except UnicodeDecodeError as err:
        raise StoreError(f"{path}: malformed ({clean_text(str(err), 200)})") from None
    except (ValueError, RecursionError) as err:
        reason = json_error(err, text) if isinstance(err, ValueError) else str(err)
        raise StoreError(f"{path}: malformed ({clean_text(reason, 200)})") from None
    if not isinstance(data, list):
        raise StoreError(f"{rel}: malformed (expected a list of entries)")
    found: dict[str, Entry] = {}
    for n, item in enumerate(data):
        try:
            entry = Entry.from_json(item)
        except EntryError as err:
            raise StoreError(f"{rel}: entry {n}: {clean_text(str(err), 300)}") from None
        if entry.id in found:
            raise StoreError(f"{rel}: entry {n}: id {entry.id} is also an earlier entry")
        found[entry.id] = entry
    return found
