"""OpenReview: a venue's submissions whose title or abstract holds a keyword.

API v2 (https://docs.openreview.net/reference/api-v2 ; listing a venue's submissions:
https://docs.openreview.net/how-to-guides/data-retrieval-and-modification/how-to-get-all-submissions):
``GET /notes`` with ``content.venueid=<venue id>`` (or ``invitation=<venue>/-/Submission``),
``limit`` (<= 1000) and ``offset``; the answer is ``{"notes": [...], "count": N}``. A note
holds ``id``, ``forum``, ``content.<field>.value`` and epoch-millisecond times (``odate``
public, ``pdate`` published, ``cdate`` created: the first present is the first public
version). The API cannot search a venue by keyword, so keywords are matched here as whole
words or phrases, ignoring case. OpenReview publishes no rate figure: pages are spaced 1 s
and 429 answers retried after Retry-After, as openreview-py does (not used: not installable
here, and its session has neither overall deadline nor size cap).
"""

from __future__ import annotations

import datetime as dt
import re

from masrl_kb.contrib.screen.entries import or_empty, parse_openreview
from masrl_kb.contrib.sources.http import Client, Service, ShapeError, SourceError, field
from masrl_kb.contrib.sources.rows import Candidate, Fetched, candidate, in_window, unique

SERVICE = Service(
    name="openreview",
    base_url="https://api2.openreview.net",
    env_url="MASRL_KB_OPENREVIEW_URL",
    delay=1.0,
)
PAGE = 1000  # the API's largest page
MAX_PAGES = 50
FORUM_URL = "https://openreview.net/forum?id="


def query_text(venue: str, keywords: list[str], since, until) -> str:
    words = " OR ".join(f'"{k}"' for k in keywords)
    window = f" first public {since or '...'}..{until or '...'}" if since or until else ""
    return f"OpenReview API v2 {_param(venue)}={venue}; title or abstract has {words}{window}"


def _param(venue: str) -> str:
    return "invitation" if "/-/" in venue else "content.venueid"


def _value(content: dict, name: str, kind, where: str):
    holder = field(content, name, dict, where, optional=True)
    if holder is None:
        return None
    return field(holder, "value", kind, f"{where}.{name}", optional=True)


def _first_public(note: object, where: str) -> dt.date | None:
    for name in ("odate", "pdate", "cdate"):
        millis = field(note, name, int, where, optional=True)
        if millis is not None:
            if not 0 <= millis <= 32503680000000:  # up to the year 3000
                raise ShapeError(f"{where}.{name} is not a time in milliseconds")
            return dt.datetime.fromtimestamp(millis / 1000, dt.UTC).date()
    return None


def note_row(note: object, where: str) -> Candidate | None:
    forum = field(note, "forum", str, where, optional=True) or field(note, "id", str, where)
    if or_empty(parse_openreview, forum) != forum:
        raise ShapeError(f"{where}.forum is not an OpenReview id")
    content = field(note, "content", dict, where)
    authors = _value(content, "authors", list, f"{where}.content") or []
    return candidate(
        _value(content, "title", str, f"{where}.content"),
        [a for a in authors if isinstance(a, str)],
        _first_public(note, where),
        url=f"{FORUM_URL}{forum}",
        abstract=_value(content, "abstract", str, f"{where}.content") or "",
        openreview_id=forum,
    )


def keyword_pattern(keywords: list[str]) -> re.Pattern[str]:
    # Whole words or phrases: "RL" must not match "world"; spacing and hyphens as given.
    phrases = sorted({" ".join(k.split()) for k in keywords}, key=len, reverse=True)
    alternatives = "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in phrases)
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def fetch(
    venue: str,
    keywords: list[str],
    since: dt.date | None = None,
    until: dt.date | None = None,
    client: Client | None = None,
    page_size: int = PAGE,
) -> Fetched:
    """Every note of the venue matching a keyword (and the window, if given)."""
    if not venue.strip() or any(c.isspace() or ord(c) < 0x20 for c in venue):
        raise SourceError(f"openreview: --venue {venue[:80]!r} is not a venue or invitation id")
    keywords = [k for k in keywords if k.strip()]
    if not keywords or any(len(k) > 200 for k in keywords):
        raise SourceError("openreview: give at least one --keyword of at most 200 characters")
    pattern = keyword_pattern(keywords)
    client = client or Client(SERVICE)
    rows: list[Candidate] = []
    seen = 0
    for page in range(MAX_PAGES):
        params = {_param(venue): venue, "limit": page_size, "offset": page * page_size}
        answer = client.answer("/notes", params)
        try:
            notes = field(answer, "notes", list, "answer")
            found = [note_row(n, f"answer.notes[{i}]") for i, n in enumerate(notes)]
        except ShapeError as err:
            raise SourceError(f"openreview: unexpected answer: {err}") from None
        seen += len(notes)
        hits = [r for r in found if r and pattern.search(f"{r.title} {r.abstract}")]
        rows.extend(r for r in hits if in_window(r, since, until))
        if len(notes) < page_size:
            break
    else:
        raise SourceError(f"openreview: more than {MAX_PAGES} pages of notes; narrow the venue")
    return Fetched(unique(rows), query_text(venue, keywords, since, until), seen)
