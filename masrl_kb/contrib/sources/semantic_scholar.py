"""Semantic Scholar recommendations seeded with the pool (positives) and the exclusions (negatives).

``POST /recommendations/v1/papers`` with ``{"positivePaperIds": [...], "negativePaperIds":
[...]}`` (ids ``ArXiv:<id>`` or ``DOI:<doi>``), ``fields`` and ``limit`` (<= 500); the answer
is ``{"recommendedPapers": [...]}``: https://api.semanticscholar.org/api-docs/recommendations .
Limits (https://www.semanticscholar.org/product/api): without a key requests share one pool
and are often answered 429; a key (header ``x-api-key``) gets 1 request per second. One
request is made, spaced 1 s with a key and 3 s without. The service has no date filter, so
rows outside the window, or undated, are dropped here. Environment:
``SEMANTIC_SCHOLAR_API_KEY`` (optional), ``MASRL_KB_S2_URL`` (base URL, for tests).
"""

from __future__ import annotations

import datetime as dt

from masrl_kb.contrib.sources.arxiv import arxiv_or_none
from masrl_kb.contrib.sources.http import Client, Service, ShapeError, SourceError, env_value, field
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

ENV_KEY = "SEMANTIC_SCHOLAR_API_KEY"
SERVICE_KEYED = Service(
    name="semantic-scholar",
    base_url="https://api.semanticscholar.org/recommendations/v1",
    env_url="MASRL_KB_S2_URL",
    delay=1.0,  # 1 request per second with a key
)
SERVICE_SHARED = Service(SERVICE_KEYED.name, SERVICE_KEYED.base_url, SERVICE_KEYED.env_url, 3.0)
FIELDS = "title,authors,externalIds,publicationDate,url,abstract"
LIMIT = 500


def paper_id(seed: Seed) -> str:
    """The seed as a Semantic Scholar id, ``ArXiv:…`` or ``DOI:…``; "" when it has neither."""
    if seed.arxiv_id:
        return f"ArXiv:{seed.arxiv_id}"
    return f"DOI:{seed.doi}" if seed.doi else ""


def paper_row(paper: object, where: str) -> Candidate | None:
    external = field(paper, "externalIds", dict, where, optional=True) or {}
    arxiv = field(external, "ArXiv", str, f"{where}.externalIds", optional=True) or ""
    doi = doi_of(field(external, "DOI", str, f"{where}.externalIds", optional=True))
    authors = enumerate(field(paper, "authors", list, where, optional=True) or [])
    names = [field(a, "name", str, f"{where}.authors[{i}]", optional=True) for i, a in authors]
    arxiv = arxiv_or_none(arxiv) or ""
    url = f"https://arxiv.org/abs/{arxiv}" if arxiv else ""
    url = url or field(paper, "url", str, where, optional=True) or ""
    return candidate(
        field(paper, "title", str, where, optional=True),
        names,
        iso_date(field(paper, "publicationDate", str, where, optional=True)),
        url=url,
        abstract=field(paper, "abstract", str, where, optional=True) or "",
        doi=doi,
        arxiv_id=arxiv,
    )


def recommend(
    pool: list[Seed],
    excluded: list[Seed],
    since: dt.date,
    until: dt.date,
    client: Client | None = None,
) -> Fetched:
    """Recommendations for the pool against the exclusions, kept when dated in the window."""
    if until < since:
        raise SourceError(f"semantic-scholar: --until {until} is before --since {since}")
    positive = [p for p in dict.fromkeys(paper_id(s) for s in pool) if p]
    negative = [p for p in dict.fromkeys(paper_id(s) for s in excluded) if p]
    if not positive:
        raise SourceError("semantic-scholar: no pooled paper has an arXiv id or DOI to seed with")
    key = env_value(
        ENV_KEY, r"[A-Za-z0-9_-]{1,200}", SERVICE_KEYED.name, "holds characters an API key does not"
    )
    client = client or Client(SERVICE_KEYED if key else SERVICE_SHARED)
    body = {"positivePaperIds": positive, "negativePaperIds": negative}
    headers = {"x-api-key": key} if key else {}
    answer = client.answer("/papers", {"fields": FIELDS, "limit": LIMIT}, body, headers)
    try:
        papers = field(answer, "recommendedPapers", list, "answer")
        rows = (paper_row(p, f"answer.recommendedPapers[{i}]") for i, p in enumerate(papers))
        found = [r for r in rows if r is not None]
    except ShapeError as err:
        raise SourceError(f"semantic-scholar: unexpected answer: {err}") from None
    in_it = [r for r in found if in_window(r, since, until)]
    shown = (
        f"Semantic Scholar recommendations from {len(positive)} pooled papers (positive) and "
        f"{len(negative)} exclusions (negative), first public {since}..{until}"
    )
    undated = sum(r.date is None for r in found)
    return Fetched(unique(in_it), shown, len(papers), undated=undated)
