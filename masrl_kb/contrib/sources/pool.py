"""What the adapters need to know of the pool and the exclusions: each record's arXiv id, DOI
and title (records that cannot be read are skipped; ``masrl-kb validate`` reports them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from masrl_kb.contrib.sources.rows import doi_of
from masrl_kb.contrib.text import MAX_TITLE, clean_text
from masrl_kb.kb.crossrules import arxiv_ids_of
from masrl_kb.kb.records import read_records


@dataclass(frozen=True)
class Seed:
    """One record as a seed for a citation or recommendation query."""

    name: str  # key or id, for messages
    arxiv_id: str
    doi: str
    title: str


def _seed(data: object, id_field: str) -> Seed | None:
    if not isinstance(data, dict):
        return None
    arxiv = sorted(arxiv_ids_of(data))
    doi = ""
    for name in ("doi", "identifier", "url"):
        doi = doi_of(data.get(name))
        if doi:
            break
    return Seed(
        name=str(data.get(id_field, "")),
        arxiv_id=arxiv[0] if arxiv else "",
        doi=doi,
        title=clean_text(data.get("title"), MAX_TITLE),
    )


def seeds(root: str | Path | None) -> tuple[list[Seed], list[Seed]]:
    """(pooled papers, exclusions) as seeds, in file order."""
    records = read_records(root)
    papers = [s for r in records.papers if (s := _seed(r.data, "key"))]
    excluded = [s for r in records.exclusions if (s := _seed(r.data, "id"))]
    return papers, excluded
