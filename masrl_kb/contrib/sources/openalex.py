"""OpenAlex: works by search words, and works citing the pool (forward snowballing).

Documentation followed: filters, ``from_/to_publication_date`` and ``cites:W…`` (``|`` ORs
values) https://docs.openalex.org/api-entities/works/filter-works ; cursor paging
(``meta.next_cursor``, ``per_page`` <= 100)
https://developers.openalex.org/guides/page-through-results ; a work by DOI
https://developers.openalex.org/api-reference/works/get-a-single-work.md ; the Work object
(``publication_date`` the earliest known, ``abstract_inverted_index``, arXiv copies in
``locations``) https://docs.openalex.org/api-entities/works/work-object ; limits (a free API
key beyond a trial allowance, at most 100 requests/s, retry 429/5xx)
https://developers.openalex.org/api-reference/authentication .

Environment: ``MASRL_KB_OPENALEX_API_KEY`` (sent as ``api_key``),
``MASRL_KB_OPENALEX_MAILTO`` (``mailto``, the "polite pool"), ``MASRL_KB_OPENALEX_URL``.
"""

from __future__ import annotations

import datetime as dt
import re

from masrl_kb.contrib.outside_text import clean_text
from masrl_kb.contrib.sources.arxiv import arxiv_in
from masrl_kb.contrib.sources.http import (
    Client,
    Service,
    ShapeError,
    SourceError,
    StatusError,
    env_value,
    field,
)
from masrl_kb.contrib.sources.rows import (
    Candidate,
    Fetched,
    Seed,
    candidate,
    doi_of,
    in_window,
    iso_date,
    unique,
)
from masrl_kb.kb.text import title_skeleton

SERVICE = Service(
    name="openalex",
    base_url="https://api.openalex.org",
    env_url="MASRL_KB_OPENALEX_URL",
    delay=0.1,  # the documented ceiling is 100 requests per second
)
ENV_KEY = "MASRL_KB_OPENALEX_API_KEY"
ENV_MAILTO = "MASRL_KB_OPENALEX_MAILTO"
PER_PAGE = 100
MAX_PAGES = 100
CITES_CHUNK = 50  # pooled works ORed in one cites: filter
MAX_POSITIONS = 20000  # words in one rebuilt abstract
SELECT = "id,doi,title,display_name,publication_date,authorships,abstract_inverted_index,locations"
WORK_ID = re.compile(r"^(?:https://openalex\.org/)?(W[0-9]{1,12})$")
_MAILTO = r"[^@\s,;&=]{1,64}@[^@\s,;&=]{1,190}"


def auth_params() -> dict[str, str]:
    """``api_key`` and ``mailto`` from the environment, when set."""
    key = env_value(
        ENV_KEY, r"[A-Za-z0-9_.-]{1,200}", "openalex", "holds characters an API key does not"
    )
    mailto = env_value(ENV_MAILTO, _MAILTO, "openalex", "is not an e-mail address")
    return {k: v for k, v in (("api_key", key), ("mailto", mailto)) if v}


# ---------------------------------------------------------------- works


def abstract(index: object, where: str) -> str:
    """The abstract rebuilt from ``abstract_inverted_index`` (word -> positions)."""
    if index is None:
        return ""
    if not isinstance(index, dict):
        raise ShapeError(f"{where} is not an object")
    words: dict[int, str] = {}
    for word, positions in index.items():
        if not isinstance(positions, list):
            raise ShapeError(f"{where}.{clean_text(word, 40)} is not a list")
        for pos in positions:
            if isinstance(pos, bool) or not isinstance(pos, int) or not 0 <= pos < MAX_POSITIONS:
                raise ShapeError(f"{where} holds a position that is not 0..{MAX_POSITIONS - 1}")
            words[pos] = word
    return " ".join(words[p] for p in sorted(words))


def _arxiv_of(work: object, doi: str, where: str) -> str:
    found = arxiv_in(doi)
    locations = field(work, "locations", list, where, optional=True) or []
    for i, loc in enumerate(locations):
        for name in ("landing_page_url", "pdf_url"):
            found = found or arxiv_in(field(loc, name, str, f"{where}.locations[{i}]", True))
    return found


def _authors(work: object, where: str) -> list[str]:
    names = []
    for i, authorship in enumerate(field(work, "authorships", list, where, optional=True) or []):
        spot = f"{where}.authorships[{i}]"
        author = field(authorship, "author", dict, spot, optional=True) or {}
        name = field(author, "display_name", str, f"{spot}.author", optional=True)
        names.append(name or field(authorship, "raw_author_name", str, spot, optional=True))
    return names


def work_row(work: object, where: str) -> Candidate | None:
    wid = _work_id(work, where)
    title = field(work, "title", str, where, optional=True)
    title = title or field(work, "display_name", str, where, optional=True)
    doi = doi_of(field(work, "doi", str, where, optional=True))
    arxiv = _arxiv_of(work, doi, where)
    url = f"https://doi.org/{doi}" if doi else f"https://openalex.org/{wid}"
    return candidate(
        title,
        _authors(work, where),
        iso_date(field(work, "publication_date", str, where, optional=True)),
        url=f"https://arxiv.org/abs/{arxiv}" if arxiv else url,
        abstract=abstract(
            field(work, "abstract_inverted_index", object, where, optional=True),
            f"{where}.abstract_inverted_index",
        ),
        doi=doi,
        arxiv_id=arxiv,
    )


def _collect(client: Client, params: dict[str, object], since, until) -> tuple[list, int]:
    """The rows of every page dated in the window (the server's filter is not trusted), and
    the number of works read."""
    cursor, cursors, rows, seen = "*", set(), [], 0
    for _ in range(MAX_PAGES):
        answer = client.answer("/works", {**params, "cursor": cursor})
        try:
            results = field(answer, "results", list, "answer")
            meta = field(answer, "meta", dict, "answer")
            cursor = field(meta, "next_cursor", str, "answer.meta", optional=True)
            page = [work_row(w, f"answer.results[{i}]") for i, w in enumerate(results)]
        except ShapeError as err:
            raise SourceError(f"openalex: unexpected answer: {err}") from None
        seen += len(page)
        rows += [r for r in page if r and in_window(r, since, until)]
        if not cursor or not results:
            return rows, seen
        if cursor in cursors or len(cursor) > 2000:
            raise SourceError("openalex: the answer's meta.next_cursor repeats or is too long")
        cursors.add(cursor)
    raise SourceError(f"openalex: more than {MAX_PAGES} pages; narrow the query or window")


def _window(since: dt.date, until: dt.date) -> str:
    if until < since:
        raise SourceError(f"openalex: --until {until} is before --since {since}")
    return f"from_publication_date:{since.isoformat()},to_publication_date:{until.isoformat()}"


def search(
    query: str, since: dt.date, until: dt.date, client: Client | None = None, per_page=PER_PAGE
) -> Fetched:
    """Works matching ``query`` published in the window."""
    text = " ".join(query.split())
    if not text or len(text) > 500 or any(ord(c) < 0x20 for c in text):
        raise SourceError("openalex: --query must be 1-500 characters of plain text")
    client = client or Client(SERVICE)
    params = {"search": text, "filter": _window(since, until), "per_page": per_page}
    rows, seen = _collect(client, {**params, "select": SELECT, **auth_params()}, since, until)
    shown = f'OpenAlex works search="{text}" filter={params["filter"]}'
    return Fetched(unique(rows), shown, seen)


# ---------------------------------------------------------------- snowballing


def _doi_for(seed: Seed) -> str:
    if seed.doi:
        return seed.doi
    # arXiv registers a DataCite DOI, 10.48550/arXiv.<id>, for every paper
    # (https://blog.arxiv.org/2022/02/17/new-arxiv-articles-are-now-automatically-assigned-dois/);
    # OpenAlex holds arXiv works under it.
    return f"10.48550/arxiv.{seed.arxiv_id}" if seed.arxiv_id else ""


def _work_id(answer: object, where: str) -> str:
    match = WORK_ID.match(field(answer, "id", str, where))
    if not match:
        raise ShapeError(f"{where}.id is not an OpenAlex work id")
    return match.group(1)


def _by_title(client: Client, seed: Seed, auth: dict) -> str | None:
    words = " ".join(re.sub(r"[,|:!<>]", " ", seed.title).split())
    if not words:
        return None
    params = {"filter": f"title.search:{words}", "per_page": 5, "select": "id,title", **auth}
    answer = client.answer("/works", params)
    want = title_skeleton(seed.title)
    for i, work in enumerate(field(answer, "results", list, "answer")):
        if title_skeleton(field(work, "title", str, f"answer.results[{i}]", True) or "") == want:
            return _work_id(work, f"answer.results[{i}]")
    return None


def resolve(client: Client, seed: Seed, auth: dict) -> str | None:
    """The OpenAlex work id of a pooled paper: by DOI (or arXiv DOI), else by exact title."""
    doi = _doi_for(seed)
    try:
        if doi:
            try:
                return _work_id(client.answer(f"/works/doi:{doi}", auth), "answer")
            except StatusError as err:
                # 404: unknown DOI; 3xx: a merged work (redirects are not followed).
                if err.status != 404 and not 300 <= err.status < 400:
                    raise
        return _by_title(client, seed, auth)
    except ShapeError as err:
        raise SourceError(f"openalex: unexpected answer for {seed.name}: {err}") from None


def citing_pool(
    seeds: list[Seed],
    since: dt.date,
    until: dt.date,
    client: Client | None = None,
    per_page=PER_PAGE,
) -> Fetched:
    """Works published in the window that cite any pooled paper OpenAlex knows."""
    window = _window(since, until)
    client = client or Client(SERVICE)
    auth = auth_params()
    found = [(seed.name, resolve(client, seed, auth)) for seed in seeds]
    ids = [wid for _, wid in found if wid]
    rows, seen = [], 0
    for start in range(0, len(ids), CITES_CHUNK):
        cites = "|".join(ids[start : start + CITES_CHUNK])
        params = {"filter": f"cites:{cites},{window}", "per_page": per_page, "select": SELECT}
        got, count = _collect(client, {**params, **auth}, since, until)
        rows.extend(got)
        seen += count
    shown = f"OpenAlex works citing {len(ids)} pooled papers (cites: filter) {window}"
    return Fetched(unique(rows), shown, seen, [name for name, wid in found if not wid])
