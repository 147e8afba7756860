"""``masrl-kb add``: a new paper record from an arXiv id (or, from a screening source, a
paper not on arXiv).

The facts the API knows are filled in and every judgement field is left ``TODO``,
which ``validate`` reports as unfinished. Nothing is written for a paper already
pooled or excluded (same arXiv id, URL or normalised title); a file is never
overwritten, and writes are atomic. ``MASRL_KB_ARXIV_URL`` replaces the API endpoint.
Naming lives in `masrl_kb/contrib/record_keys.py`, the writing shared with ``exclude`` in
`masrl_kb/contrib/new_record.py`, ``exclude`` itself in `masrl_kb/contrib/new_exclusion.py`;
their public names are re-exported here.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from typing import Any

from masrl_kb.contrib.new_exclusion import check_choice, exclude_record, next_exclusion_id
from masrl_kb.contrib.new_record import (
    AlreadyRecorded,
    ArxivImportError,
    Written,
    checked_paper,
    describe_written,
    refuse_existing,
    terminate_as_exit,
    write_new_file,
    write_record,
)
from masrl_kb.contrib.record_keys import bibtex_key_for, derive_key, family_given
from masrl_kb.contrib.sources.arxiv import ArxivPaper, fetch_paper, parse_arxiv_id
from masrl_kb.kb.fields import KEY_PATTERN, PLACEHOLDER
from masrl_kb.kb.records import PAPERS_DIR, RECORD_SUFFIX, RecordSet, read_records

__all__ = [  # what this module has always offered, wherever it now lives
    "ARXIV_VENUE",
    "AlreadyRecorded",
    "ArxivImportError",
    "Written",
    "add_other_paper",
    "add_paper",
    "bibtex_key_for",
    "check_choice",
    "checked_paper",
    "derive_key",
    "describe_written",
    "exclude_record",
    "family_given",
    "next_exclusion_id",
    "refuse_existing",
    "terminate_as_exit",
    "write_new_file",
]
ARXIV_VENUE = "arXiv"
_KEY_RE = re.compile(KEY_PATTERN)


def _paper_key(records: RecordSet, key: str | None, title: str, year: int) -> str:
    """The new record's key: ``key`` checked (pattern, not taken), else derived."""
    folder = records.root / PAPERS_DIR
    taken = {p.stem for p in folder.glob(f"*{RECORD_SUFFIX}")} if folder.is_dir() else set()
    if key is None:
        return derive_key(title, year, taken)
    if not _KEY_RE.match(key):
        raise ArxivImportError(
            f"--key {key!r} does not match {KEY_PATTERN} (lower-case letters, digits, '-')"
        )
    if key in taken or (folder / f"{key}{RECORD_SUFFIX}").exists():
        raise ArxivImportError(
            f"{PAPERS_DIR}/{key}{RECORD_SUFFIX} already exists: refusing to overwrite it"
        )
    return key


def _new_paper(
    records: RecordSet,
    key: str | None,
    authors: tuple[str, ...] | list[str],
    facts: dict[str, Any],
    paper: ArxivPaper | None = None,
) -> Written:
    """Write a paper record from ``facts`` (title, year, ...), with its key, authors
    ('Family, Given') and citation key."""
    key = _paper_key(records, key, facts["title"], facts["year"])
    citation = {"bibtex_key": bibtex_key_for(key, facts["year"]), **facts["citation"]}
    facts = {
        **facts,
        "key": key,
        "title": " ".join(facts["title"].split()),
        "authors": [family_given(a) for a in authors] or [PLACEHOLDER],
        "citation": citation,
    }
    return write_record(records, "paper", f"{PAPERS_DIR}/{key}{RECORD_SUFFIX}", facts, paper)


def add_paper(
    reference: str,
    root: str | os.PathLike[str] | None = None,
    key: str | None = None,
    today: dt.date | None = None,
    paper: ArxivPaper | None = None,
    notes: str | None = None,
    stubs: tuple[str, ...] = (),
) -> Written:
    """Fetch an arXiv paper and write its unfinished record under ``papers/``. ``paper``:
    its metadata when already fetched (a screening round; cleaned and checked the same);
    ``stubs``: optional fields written as TODO too."""
    arxiv_id = parse_arxiv_id(reference)
    records = read_records(root)
    if key is not None:
        _paper_key(records, key, "", 0)  # a bad or taken key is refused before any request
    refuse_existing(records, arxiv_id=arxiv_id)
    paper = checked_paper(paper or fetch_paper(arxiv_id))
    refuse_existing(records, title=paper.title, url=paper.url)
    facts = {
        "title": paper.title,
        "year": paper.published.year,
        "venue": ARXIV_VENUE,
        "arxiv_id": paper.arxiv_id,
        "url": paper.url,
        "added": today or dt.date.today(),
        "citation": {
            "entry_type": "article",
            "journal": f"arXiv preprint arXiv:{paper.arxiv_id}",
        },
        "notes": notes,
        "comments": (f"arXiv primary category: {paper.primary_category or 'unknown'}",),
    } | dict.fromkeys(stubs, PLACEHOLDER)
    return _new_paper(records, key, paper.authors, facts, paper)


def add_other_paper(
    title: str,
    authors: list[str] | tuple[str, ...],
    published: dt.date,
    url: str,
    root: str | os.PathLike[str] | None = None,
    key: str | None = None,
    today: dt.date | None = None,
    notes: str | None = None,
    comment: str = "",
    stubs: tuple[str, ...] = (),
) -> Written:
    """Write the unfinished record of a paper not on arXiv (an OpenReview submission,
    a DOI, a web page) from a screening source's facts; venue and entry type stay TODO."""
    records = read_records(root)
    if key is not None:
        _paper_key(records, key, "", 0)
    refuse_existing(records, title=title, url=url)
    facts = {
        "title": title,
        "year": published.year,
        "url": url,
        "added": today or dt.date.today(),
        "citation": {"entry_type": "misc"},
        "notes": notes,
        "comments": (comment,) if comment else (),
    } | dict.fromkeys(stubs, PLACEHOLDER)
    return _new_paper(records, key, authors, facts)
