"""The files of a round folder, as text: ``candidates.csv`` (the candidates, best score first,
then removed duplicates naming what they duplicate; formula-like cells guarded),
``candidates.ris`` (for ASReview or Zotero), ``entries.json`` (the candidates' metadata, so
``decide`` needs no network) and ``round.yaml`` (window, batches, counts, decisions).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from masrl_kb.contrib.export.csv_io import csv_text, unguard_cell
from masrl_kb.contrib.screen.entries import (
    CANDIDATES_CSV,
    CANDIDATES_RIS,
    ENTRIES_JSON,
    Entry,
    entries_json,
)
from masrl_kb.contrib.screen.store import StoreError
from masrl_kb.kb.rounds import ROUND_FILE, Round

CSV_COLUMNS = (
    "id",
    "title",
    "authors",
    "submitted",
    "families",
    "score",
    "duplicate_of",
    "source",
    "url",
)


def candidates_csv(entries: list[Entry], kept: Sequence[list[str]] = ()) -> str:
    """The candidates, then removed duplicates; ``kept``: earlier batches' duplicate rows."""
    rows = []
    for e in entries:
        score = "" if e.score is None else f"{e.score:.4f}"
        cells = [e.id, e.title, "; ".join(e.authors), e.submitted.isoformat()]
        rows.append(cells + [";".join(e.families), score, e.duplicate_of, e.source, e.link])
    rows += kept
    return csv_text(CSV_COLUMNS, [dict(zip(CSV_COLUMNS, r, strict=False)) for r in rows])


def old_duplicate_rows(folder: Path) -> list[list[str]]:
    """The duplicates rows of a round's ``candidates.csv``, unguarded (kept when a batch
    is added: their entries are not stored anywhere else)."""
    path = folder / CANDIDATES_CSV
    if path.is_symlink():
        raise StoreError(f"{path}: a symbolic link; refused")
    if not path.is_file():
        return []
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))[1:]
    width, dup = len(CSV_COLUMNS), CSV_COLUMNS.index("duplicate_of")
    # rounds written before source batches had no source and url columns
    kept = [(r + ["arxiv", ""])[:width] for r in rows if len(r) > dup and r[dup]]
    return [[unguard_cell(c) for c in r] for r in kept]


def _ris_ref(e: Entry, source_label: str) -> dict[str, Any]:
    ref: dict[str, Any] = {
        "type_of_reference": "JOUR",
        "id": e.id,
        "title": e.title,
        "authors": e.authors,
        "year": str(e.submitted.year),
        "date": e.submitted.strftime("%Y/%m/%d"),
        "abstract": e.abstract,
        "urls": [e.link] if e.link else [],
        "keywords": list(e.families),
        "name_of_database": source_label,
    }
    if e.arxiv_id:
        ref["journal_name"] = f"arXiv preprint arXiv:{e.arxiv_id}"
    if e.doi:
        ref["doi"] = e.doi
    return ref


def candidates_ris(entries: list[Entry], labels: dict[str, str]) -> str:
    """RIS for ASReview LAB or Zotero: the candidate id in ID, its address in UR."""
    import rispy

    return str(rispy.dumps([_ris_ref(e, labels.get(e.source, e.source)) for e in entries]))


class _PlainDumper(yaml.SafeDumper):
    """No anchors: a date shared by two fields is written twice, as a person would."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def round_yaml(rnd: Round) -> str:
    """The text of a round's ``round.yaml``."""
    data: dict[str, Any] = {
        "round": rnd.id,
        "window": {"since": rnd.since, "until": rnd.until},
        "run_on": rnd.run_on,
    }
    if rnd.sources:
        data["sources"] = rnd.sources
    else:
        data["source"] = "arxiv"  # a round written before source batches existed
    data |= {
        "families": rnd.families,
        "counts": dict(rnd.counts),
        "duplicates": rnd.duplicates,
        "retrieved_per_family": rnd.per_family,
    }
    if rnd.capped:
        data["capped"] = rnd.capped
    if rnd.decided:
        data["decision_counts"] = {
            "included": rnd.included,
            "excluded": rnd.excluded,
            "awaiting": rnd.awaiting,
        }
        data["decided"] = rnd.decided
    return yaml.dump(data, Dumper=_PlainDumper, sort_keys=False, allow_unicode=True, width=100)


def round_files(
    rnd: Round,
    candidates: list[Entry],
    duplicates: list[Entry],
    labels: dict[str, str],
    kept: Sequence[list[str]] = (),
) -> dict[str, str]:
    """The four files of a round folder (``kept``: earlier batches' duplicate rows)."""
    return {
        CANDIDATES_CSV: candidates_csv(candidates + duplicates, kept),
        CANDIDATES_RIS: candidates_ris(candidates, labels),
        ENTRIES_JSON: entries_json(candidates),
        ROUND_FILE: round_yaml(rnd),
    }
