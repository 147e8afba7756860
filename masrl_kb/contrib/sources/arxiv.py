"""The one arXiv API client, for ``add``/``exclude`` (one paper) and ``screen run`` (searches).

Requests go through :mod:`.http` (deadline, size caps, bounded retries): the ``arxiv``
package's client has neither deadline nor size cap. A document type declaration (the door
to entity expansion) is refused before parsing. ``MASRL_KB_ARXIV_URL`` replaces the
endpoint, ``MASRL_KB_ARXIV_DEADLINE``/``_DELAY`` the deadline and the wait between requests.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from urllib.parse import urlencode

from masrl_kb.contrib.outside_text import (
    MAX_ABSTRACT,
    MAX_CATEGORY,
    MAX_TITLE,
    clean_names,
    clean_text,
)
from masrl_kb.contrib.sources.http import (
    FetchError,
    Limits,
    SourceError,
    StatusError,
    check_base_url,
    env_seconds,
    http_request,
)
from masrl_kb.kb.model.types import ARXIV_RE
from masrl_kb.kb.protocol import QueryFamily

ENV_ARXIV_URL = "MASRL_KB_ARXIV_URL"
ENV_DELAY = "MASRL_KB_ARXIV_DELAY"
ENV_DEADLINE = "MASRL_KB_ARXIV_DEADLINE"
DEFAULT_ENDPOINT = "https://export.arxiv.org/api/query"
MAX_SEARCH_BYTES = 20 * 1024 * 1024
EARLIEST = dt.date(1991, 8, 1)  # arXiv opened in August 1991
ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"

_VERSION = re.compile(r"v[0-9]+$")
_ARXIV_URL = re.compile(
    r"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/(?P<id>.+?)(?:\.pdf)?/?$",
    re.IGNORECASE,
)


class ArxivError(ValueError):
    """A one-line reason: a malformed id, a setting no request can be made with (the
    endpoint, a deadline), or no usable answer from the arXiv API (unreachable, an error
    status, a size cap, a body that does not decode as labelled). Every command ends it as
    that line and exit 2, nothing written."""


# ---------------------------------------------------------------- ids


def parse_arxiv_id(text: str) -> str:
    """An arXiv id without version from an id, ``arXiv:`` id or arxiv.org URL."""
    raw = text.strip()
    found = _ARXIV_URL.match(raw)
    candidate = found.group("id") if found else re.sub(r"^arxiv:\s*", "", raw, flags=re.I)
    candidate = _VERSION.sub("", candidate)
    if not ARXIV_RE.match(candidate):
        raise ArxivError(
            f"malformed arXiv id {raw[:80]!r}: expected YYMM.NNNNN (e.g. 2505.19591), "
            "an old-style id such as cs/0112017, or an arxiv.org/abs/ URL"
        )
    return candidate


# An arXiv id inside other text: an arxiv.org link, "arXiv:<id>", or arXiv's DataCite DOI.
_ARXIV_IN_TEXT = re.compile(
    r"(?:arxiv\.org/(?:abs|pdf)/|arXiv:\s*|10\.48550/arxiv\.)"
    r"([0-9]{4}\.[0-9]{4,5}|[a-z-]+(?:\.[A-Z]{2})?/[0-9]{7})",
    re.I,
)


def arxiv_in(text: object) -> str:
    """The arXiv id (no version) a link, ``arXiv:`` mention or arXiv DOI in ``text`` names;
    "" when there is none."""
    found = _ARXIV_IN_TEXT.search(text) if isinstance(text, str) else None
    return (arxiv_or_none(found.group(1)) or "") if found else ""


def arxiv_or_none(text: str) -> str | None:
    """:func:`parse_arxiv_id`, or None when ``text`` names no arXiv paper."""
    try:
        return parse_arxiv_id(text)
    except ArxivError:
        return None


@dataclass(frozen=True)
class ArxivPaper:
    """What the arXiv API says about one paper, cleaned and bounded."""

    arxiv_id: str
    title: str
    authors: tuple[str, ...]  # as arXiv lists them ("Given Family")
    published: dt.date  # first version
    primary_category: str
    abstract: str

    @property
    def url(self) -> str:
        return f"https://arxiv.org/abs/{self.arxiv_id}"


# ---------------------------------------------------------------- settings


def endpoint(given: str | None = None) -> str:
    """The API endpoint: the argument, ``MASRL_KB_ARXIV_URL``, then arXiv's own;
    :class:`ArxivError` when it is not a usable http(s) URL."""
    url = given or os.environ.get(ENV_ARXIV_URL) or DEFAULT_ENDPOINT
    try:
        return check_base_url(url, ENV_ARXIV_URL)
    except SourceError as err:
        raise ArxivError(str(err)) from None


@dataclass(frozen=True)
class Paging:
    """How politely to page through a search (arXiv asks for one request per 3 s);
    ``timeout`` is one overall deadline per request, retries and every byte included."""

    page_size: int = 100
    delay_seconds: float = 3.0
    num_retries: int = 3
    max_per_family: int = 2000
    timeout: float = 60.0

    @classmethod
    def from_env(cls, **overrides: object) -> Paging:
        """Defaults, ``MASRL_KB_ARXIV_DELAY``/``_DEADLINE``, then the overrides given."""
        values = {k: v for k, v in overrides.items() if v is not None}
        values.setdefault("delay_seconds", env_seconds(ENV_DELAY, cls.delay_seconds, ArxivError))
        values.setdefault("timeout", env_seconds(ENV_DEADLINE, cls.timeout, ArxivError))
        return cls(**values)  # type: ignore[arg-type]  # the fields' own types, from argparse

    def limits(self) -> Limits:
        return Limits(
            deadline=self.timeout,
            delay=self.delay_seconds,
            attempts=self.num_retries + 1,
            max_body=MAX_SEARCH_BYTES,
            max_expanded=MAX_SEARCH_BYTES,
        )


# ---------------------------------------------------------------- the feed


def parse_feed(body: bytes) -> list[ET.Element]:
    """The entries of an arXiv Atom feed; :class:`FetchError` when it is not one."""
    if b"<!DOCTYPE" in body or b"<!ENTITY" in body:
        raise FetchError("the answer holds a document type declaration; refused")
    try:
        root = ET.fromstring(body)
    except ET.ParseError as err:
        raise FetchError(f"the answer is not well-formed XML ({err})") from None
    if root.tag != f"{ATOM}feed":
        raise FetchError("the answer is not an Atom feed")
    return root.findall(f"{ATOM}entry")


def _text(entry: ET.Element, name: str) -> str:
    return entry.findtext(f"{ATOM}{name}", "")


def _entry_id(entry: ET.Element) -> str:
    return _VERSION.sub("", _text(entry, "id").strip().rsplit("/abs/", 1)[-1])


def paper_from_atom(entry: ET.Element) -> ArxivPaper:
    """A cleaned, bounded paper; :class:`ArxivError` when the entry is malformed."""
    raw_id = clean_text(_text(entry, "id"), 200)
    if "/api/errors" in raw_id:  # arXiv reports a bad query as a feed with one error entry
        reason = clean_text(_text(entry, "summary"), 200) or "an error entry"
        raise ArxivError(f"arXiv reported an error: {reason}")
    arxiv_id = arxiv_or_none(_entry_id(entry))
    if arxiv_id is None:
        raise ArxivError(f"an entry with a malformed id {raw_id[:80]!r}")
    title = clean_text(_text(entry, "title"), MAX_TITLE)
    if not title:
        raise ArxivError(f"entry {arxiv_id} has no title")
    try:
        published = dt.datetime.fromisoformat(_text(entry, "published").strip()).date()
    except ValueError:
        shown = clean_text(_text(entry, "published"), 40)
        raise ArxivError(f"entry {arxiv_id} has a malformed <published> date {shown!r}") from None
    if not EARLIEST <= published <= dt.date.today() + dt.timedelta(days=2):
        raise ArxivError(f"entry {arxiv_id} has an impossible <published> date {published}")
    names = (a.findtext(f"{ATOM}name", "") for a in entry.findall(f"{ATOM}author"))
    category = entry.find(f"{ARXIV}primary_category")
    return ArxivPaper(
        arxiv_id=arxiv_id,
        title=title,
        authors=tuple(clean_names(names, None)),
        published=published,
        primary_category=clean_text(
            category.get("term", "") if category is not None else "", MAX_CATEGORY
        ),
        abstract=clean_text(_text(entry, "summary"), MAX_ABSTRACT),
    )


def _get(url: str, params: dict[str, object], limits: Limits, what: str) -> list[ET.Element]:
    """The feed entries of the API's answer to ``params``; :class:`ArxivError` naming ``what``."""
    try:
        body = http_request(f"{url}{'&' if '?' in url else '?'}{urlencode(params)}", limits)
    except StatusError as err:
        if err.status == 400 and "id_list" in params:
            raise ArxivError(f"arXiv rejected {what!r} as a malformed id (HTTP 400)") from None
        raise ArxivError(
            f"the arXiv API at {url} answered HTTP {err.status} for {what}; try again later"
        ) from None
    except FetchError as err:
        raise ArxivError(
            f"cannot reach the arXiv API at {url} for {what} ({err}); "
            f"check the network or {ENV_ARXIV_URL}"
        ) from None
    except SourceError as err:  # an answer that came but cannot be read
        raise ArxivError(f"the arXiv API at {url} answered unreadably for {what}: {err}") from None
    try:
        return parse_feed(body)
    except FetchError as err:
        raise ArxivError(
            f"the arXiv API at {url} answered a malformed feed for {what}: {err}"
        ) from None


# ---------------------------------------------------------------- one paper


def paper_limits() -> Limits:
    """The bounds of a one-paper request: a 30 s deadline and 3 s between retries, unless
    ``MASRL_KB_ARXIV_DEADLINE``/``_DELAY`` say otherwise."""
    return Limits(
        deadline=env_seconds(ENV_DEADLINE, 30.0, ArxivError),
        delay=env_seconds(ENV_DELAY, 3.0, ArxivError),
    )


def fetch_paper(arxiv_id: str, given_endpoint: str | None = None) -> ArxivPaper:
    """One paper's metadata; :class:`ArxivError` on any failure."""
    arxiv_id = parse_arxiv_id(arxiv_id)
    params = {"search_query": "", "id_list": arxiv_id, "start": 0, "max_results": 1}
    for entry in _get(endpoint(given_endpoint), params, paper_limits(), arxiv_id):
        if _entry_id(entry) == arxiv_id and clean_text(_text(entry, "title")):
            return paper_from_atom(entry)
    raise ArxivError(f"arXiv has no paper with id {arxiv_id}")


# ---------------------------------------------------------------- searches


def family_query(family: QueryFamily, since: dt.date, until: dt.date) -> str:
    """The arXiv query of one family: any term in title or abstract, submitted in the window."""
    terms = " OR ".join(f'ti:"{t}" OR abs:"{t}"' for t in family.terms)
    window = f"submittedDate:[{since:%Y%m%d}0000 TO {until:%Y%m%d}2359]"
    return f"({terms}) AND {window}"


def search_family(
    family: QueryFamily,
    since: dt.date,
    until: dt.date,
    paging: Paging,
    given_endpoint: str | None = None,
) -> tuple[list[ArxivPaper], bool]:
    """Every paper the API returns for one family (in the window or not), and whether
    ``paging.max_per_family`` came (the family's results may be cut short)."""
    url, query = endpoint(given_endpoint), family_query(family, since, until)
    papers: list[ArxivPaper] = []
    while len(papers) < paging.max_per_family:
        size = min(paging.page_size, paging.max_per_family - len(papers))
        if papers:
            time.sleep(paging.delay_seconds)
        params = {
            "search_query": query,
            "start": len(papers),
            "max_results": size,
            "sortBy": "submittedDate",
            "sortOrder": "descending",
        }
        entries = _get(url, params, paging.limits(), f"family {family.id}")
        try:
            page = [paper_from_atom(a) for a in entries[:size]]
        except ArxivError as err:
            raise ArxivError(
                f"the arXiv API at {url} answered a malformed feed for family {family.id}: {err}"
            ) from None
        papers += page
        if len(page) < size:
            break
    return papers, len(papers) >= paging.max_per_family
