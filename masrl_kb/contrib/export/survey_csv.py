"""The survey's own CSV format, both ways: ``papers.csv`` and ``excluded.csv``.

The column lists and the survey column -> record field maps live here only:
``export survey-csv`` writes the files and :mod:`masrl_kb.contrib.upstream` reads a
newer release. Tags are taxonomy ids; the exclusion ``source`` and ``query_family``
are taxonomy labels (the survey's spellings); free text is ours.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pandas as pd

from masrl_kb.contrib.export.tables import csv_text, json_value
from masrl_kb.kb.atomic import write_atomic
from masrl_kb.kb.taxonomy import Taxonomy, load_taxonomy
from masrl_kb.query.pool import load_pool

PAPERS_FILE = "papers.csv"
EXCLUDED_FILE = "excluded.csv"
PAPER_COLUMNS = (
    "key",
    "title",
    "first_author",
    "affiliation",
    "year",
    "arxiv_id",
    "venue",
    "url",
    "category",
    "is_rl",
    "reward_type",
    "credit_granularity",
    "orchestration_form",
    "scenario",
    "is_core",
    "one_liner",
    "verified",
    "notes",
)
EXCLUDED_COLUMNS = (
    "record_id",
    "source",
    "query_family",
    "screening_label",
    "identifier",
    "url",
    "date_screened",
    "stage",
    "exclusion_reason",
)
# Survey column -> record field. (key, first_author and record_id are handled apart.)
PAPER_FACTS = {name: name for name in ("title", "affiliation", "year", "arxiv_id", "venue")}
URL_SEPARATOR = " ; "  # the survey joins a record's links in its one url cell
PAPER_TAGS = {
    "category": "category",
    "is_rl": "is_rl",
    "reward_type": "reward_type",
    "credit_granularity": "credit_unit",
    "orchestration_form": "topology",
    "scenario": "scenario",
    "is_core": "pool_role",
    "verified": "verified",
}
PAPER_TEXT = {"one_liner": "summary", "notes": "notes"}  # ours: exported, never imported
EXCLUDED_FACTS = {
    "screening_label": "title",
    "identifier": "identifier",
    "url": "url",
    "date_screened": "screened",
    "stage": "stage",
}
# Exclusion columns written with the taxonomy label of the value (the survey's spelling).
EXCLUDED_LABELLED = {"source": "exclusion_source", "query_family": "query_family"}
EXCLUDED_TEXT = {"exclusion_reason": "note"}


def cell(value: object) -> str:
    """A value as the survey writes it: ISO dates, whole years, empty for none."""
    value = json_value(value)
    return "" if value is None else str(value)


def paper_rows(papers: pd.DataFrame) -> list[dict[str, str]]:
    """One survey row per pooled paper, by key."""
    fields = {**PAPER_FACTS, **PAPER_TAGS, **PAPER_TEXT}
    rows = []
    for key, row in papers.sort_index().iterrows():
        out = {
            "key": str(key),
            "first_author": cell(row["authors"][0]),
            "url": URL_SEPARATOR.join([row["url"], *row["extra_urls"]]),
        }
        out.update({column: cell(row[field]) for column, field in fields.items()})
        rows.append({c: out[c] for c in PAPER_COLUMNS})
    return rows


def excluded_rows(exclusions: pd.DataFrame, tax: Taxonomy) -> list[dict[str, str]]:
    """One survey row per exclusion record, by id."""
    rows = []
    for eid, row in exclusions.sort_index().iterrows():
        out = {"record_id": str(eid)}
        out.update({c: cell(row[f]) for c, f in {**EXCLUDED_FACTS, **EXCLUDED_TEXT}.items()})
        out.update({c: tax[axis].label_of(str(row[c])) for c, axis in EXCLUDED_LABELLED.items()})
        rows.append({c: out[c] for c in EXCLUDED_COLUMNS})
    return rows


def survey_csv_texts(
    root: str | os.PathLike[str] | None = None, as_of: dt.date | None = None
) -> dict[str, str]:
    """``{file name: CSV text}`` of both files (``as_of``: the pool on that day)."""
    papers, exclusions = load_pool(root, as_of=as_of)
    tax = load_taxonomy(root)
    return {
        PAPERS_FILE: csv_text(PAPER_COLUMNS, paper_rows(papers)),
        EXCLUDED_FILE: csv_text(EXCLUDED_COLUMNS, excluded_rows(exclusions, tax)),
    }


def write_survey_csv(
    folder: Path, root: str | os.PathLike[str] | None = None, as_of: dt.date | None = None
) -> list[Path]:
    """Write both files into ``folder`` (each atomically); returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {folder / name: text for name, text in survey_csv_texts(root, as_of).items()}
    for path, text in files.items():
        write_atomic(path, text, newline="")
    return list(files)
