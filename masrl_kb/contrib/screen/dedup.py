"""Duplicates of a screening round: what the knowledge base already holds.

An entry duplicates what has its arXiv id, DOI or OpenReview id, or a look-alike title (a
rapidfuzz ratio of at least ``deduplication.title_similarity``). Titles are compared only
within blocks (first two, last two and two longest words): comparing every pair took
minutes at 40,000 entries (bench/bench_screening.py measures it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from masrl_kb.contrib.screen.entries import (
    CANDIDATES_CSV,
    Entry,
    or_empty,
    parse_doi,
    parse_openreview,
    read_entries,
    title_key,
)
from masrl_kb.kb.crossrules import arxiv_ids_of
from masrl_kb.kb.records import RecordSet, read_records
from masrl_kb.kb.rounds import SCREENING_DIR, Round

BLOCK_WORDS = 2
_DOI_IN_TEXT = re.compile(r"(?:doi\.org/|^doi:\s*)(10\.[0-9]{4,9}/\S+)", re.I)


def _blocks(key: str) -> set[str]:
    words = key.split()
    longest = sorted(sorted(set(words)), key=len, reverse=True)[:2]
    return {
        "^" + " ".join(words[:BLOCK_WORDS]),
        "$" + " ".join(words[-BLOCK_WORDS:]),
        "~" + " ".join(sorted(longest)),
    }


@dataclass
class TitleIndex:
    """Normalised titles with their labels, blocked for look-alike search."""

    labels: dict[str, str] = field(default_factory=dict)
    blocks: dict[str, list[str]] = field(default_factory=dict)

    def add(self, key: str, label: str) -> None:
        if not key or key in self.labels:
            return
        self.labels[key] = label
        for block in _blocks(key):
            self.blocks.setdefault(block, []).append(key)

    def find(self, key: str, threshold: float) -> tuple[str, float] | None:
        """(label, similarity) of the most similar title at or above ``threshold``."""
        from rapidfuzz import fuzz, process

        if key in self.labels:
            return self.labels[key], 100.0
        near = {k for block in _blocks(key) for k in self.blocks.get(block, ())}
        best = process.extractOne(key, sorted(near), scorer=fuzz.ratio, score_cutoff=threshold)
        return None if best is None else (self.labels[best[0]], float(best[1]))


def _typed_ids(entry: Entry) -> list[str]:
    ids = [f"arxiv:{entry.arxiv_id}"] if entry.arxiv_id else []
    ids += [f"doi:{entry.doi}"] if entry.doi else []
    ids += [f"openreview:{entry.openreview_id}"] if entry.openreview_id else []
    return ids


_ID_MATCH = {"arxiv": "same arXiv id", "doi": "same DOI", "openreview": "same OpenReview id"}


@dataclass
class Known:
    """What the knowledge base already holds: typed ids and titles, each with its label."""

    ids: dict[str, str] = field(default_factory=dict)  # "arxiv:..", "doi:..", "openreview:.."
    titles: TitleIndex = field(default_factory=TitleIndex)

    def add(self, label: str, ids: Iterable[str], title: object) -> None:
        for typed in ids:
            self.ids.setdefault(typed, label)
        if isinstance(title, str):
            self.titles.add(title_key(title), label)

    def add_entry(self, label: str, entry: Entry) -> None:
        self.add(label, _typed_ids(entry), entry.title)

    def match(self, entry: Entry, threshold: float) -> tuple[str, str] | None:
        """(label, how) of what ``entry`` duplicates, or None."""
        for typed in _typed_ids(entry):
            if typed in self.ids:
                return self.ids[typed], _ID_MATCH[typed.split(":", 1)[0]]
        found = self.titles.find(title_key(entry.title), threshold)
        if found is None:
            return None
        return found[0], f"look-alike title (similarity {found[1]:.1f})"


def record_ids(data: dict) -> list[str]:
    """The typed ids a paper or exclusion record names (arXiv ids, DOIs, OpenReview ids)."""
    ids = [f"arxiv:{a}" for a in sorted(arxiv_ids_of(data))]
    texts = [data.get(f) for f in ("identifier", "url")]
    texts += data.get("extra_urls") or [] if isinstance(data.get("extra_urls"), list) else []
    for text in texts:
        if not isinstance(text, str):
            continue
        found = _DOI_IN_TEXT.search(text.strip())
        doi = or_empty(parse_doi, found.group(1)) if found else ""
        host = urlsplit(text.strip()).netloc.lower().removeprefix("www.")
        is_openreview = host == "openreview.net" or text.lower().startswith("openreview:")
        openreview = or_empty(parse_openreview, text) if is_openreview else ""
        ids += [f"doi:{doi}"] if doi else []
        ids += [f"openreview:{openreview}"] if openreview else []
    return ids


def known_records(
    root: Path, rounds: Iterable[Round] = (), records: RecordSet | None = None
) -> Known:
    """Pool, exclusions and the candidates of the given rounds; ``records``: the root's
    records when the caller has read them already (an import reads them once)."""
    known = Known()
    records = read_records(root) if records is None else records
    for rec in records.papers + records.exclusions:
        if isinstance(rec.data, dict):
            known.add(rec.rel, record_ids(rec.data), rec.data.get("title"))
    for rnd in rounds:
        add_round(known, root, rnd.id)
    return known


def add_round(known: Known, root: Path, rid: str) -> None:
    for cid, entry in read_entries(root, rid).items():
        known.add_entry(f"{SCREENING_DIR}/{rid}/{CANDIDATES_CSV} ({cid})", entry)


def mark_duplicates(
    entries: Iterable[Entry], known: Known, threshold: float, within: str = ""
) -> None:
    """Set ``duplicate_of`` and ``match`` on every entry ``known`` already holds; with
    ``within`` (a label prefix) each other entry joins ``known``, so later entries of the
    batch can duplicate it."""
    for entry in entries:
        if entry.duplicate_of:
            continue
        found = known.match(entry, threshold)
        if found is not None:
            entry.duplicate_of, entry.match = found
        elif within:
            known.add_entry(f"{within} ({entry.id})", entry)
