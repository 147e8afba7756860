"""The files of a round folder, as text: ``candidates.csv`` (the candidates, best score first,
then removed duplicates naming what they duplicate; formula-like cells guarded),
``candidates.ris`` (for ASReview or Zotero), ``entries.json`` (the candidates' metadata, so
``decide`` needs no network), ``duplicates.csv`` (every removed duplicate and what it
duplicates, bounded by :data:`MAX_DUPLICATES_BYTES`) and ``round.yaml`` (window, batches,
counts, decisions; duplicates only counted, so it stays small whatever a batch removes).
Files read back are checked first (:func:`read_csv_file`): a tampered one is one line.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import replace
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
from masrl_kb.kb.model.rounds_model import DUPLICATES_CSV
from masrl_kb.kb.rounds import ROUND_FILE, SCREENING_DIR, Round, round_dir

MAX_CSV_BYTES = 100 * 1024 * 1024  # a round's candidates.csv read back
MAX_DUPLICATES_BYTES = 16 * 1024 * 1024  # about 150,000 rows; rows past it are counted only
DUPLICATE_COLUMNS = ("id", "duplicate_of", "match", "source")  # source: the batch

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


def read_csv_file(
    root: Path, rid: str, name: str, columns: Sequence[str], max_bytes: int = MAX_CSV_BYTES
) -> list[list[str]]:
    """The rows of a round's CSV file ``name`` after its header (none when absent), checked
    before use: a real file, bounded, UTF-8, a known header, rows of its width. Its
    problems are one :class:`StoreError` line naming file, line and field."""
    path = round_dir(root, rid) / name
    rel = f"{SCREENING_DIR}/{rid}/{name}"
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise StoreError(f"{rel}:1: file: not a regular file (links are refused)")
    if not path.is_file():
        return []
    if path.stat().st_size > max_bytes:
        raise StoreError(f"{rel}:1: file: larger than {max_bytes} bytes")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        message = f"{rel}:{line}: file: not UTF-8 text; restore it from git or remove the round"
        raise StoreError(message) from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        rows = list(reader)
    except csv.Error as err:
        raise StoreError(f"{rel}:{reader.line_num}: csv: {str(err)[:120]}") from None
    header = rows[0] if rows else []
    if tuple(header[: len(columns)]) != tuple(columns[: len(header)]) or not header:
        raise StoreError(f"{rel}:1: header: expected {','.join(columns)}")
    for number, row in enumerate(rows[1:], 2):
        if row and len(row) != len(header):
            raise StoreError(f"{rel}:{number}: row: {len(row)} cells, the header has {len(header)}")
    return [[unguard_cell(c) for c in r] for r in rows[1:] if r]


def old_duplicate_rows(root: Path, rid: str) -> list[list[str]]:
    """The duplicates rows of a round's ``candidates.csv``, unguarded (kept when a batch
    is added: their entries are not stored anywhere else)."""
    rows = read_csv_file(root, rid, CANDIDATES_CSV, CSV_COLUMNS)
    width, dup = len(CSV_COLUMNS), CSV_COLUMNS.index("duplicate_of")
    # rounds written before source batches had no source and url columns
    return [(r + ["arxiv", ""])[:width] for r in rows if len(r) > dup and r[dup]]


def read_duplicates(root: Path, rid: str) -> list[dict[str, str]]:
    """The listed duplicates of a round: ``{id, duplicate_of, match, source}`` from its
    side file (``source``, the batch that found it, is empty in files written before it)."""
    rows = read_csv_file(root, rid, DUPLICATES_CSV, DUPLICATE_COLUMNS, MAX_DUPLICATES_BYTES)
    return [
        dict.fromkeys(DUPLICATE_COLUMNS, "") | dict(zip(DUPLICATE_COLUMNS, r, strict=False))
        for r in rows
    ]


def check_round_csv(root: Path, rid: str) -> None:
    """Refuse a round whose CSV files cannot be read back (one :class:`StoreError` line)."""
    old_duplicate_rows(root, rid)
    read_duplicates(root, rid)


def duplicates_csv(rows: Sequence[dict[str, str]]) -> tuple[str, int]:
    """The side file's text and how many rows it lists: rows past
    :data:`MAX_DUPLICATES_BYTES` are left out (``round.yaml`` still counts them)."""
    header = csv_text(DUPLICATE_COLUMNS, [])
    parts, size = [header], len(header.encode())
    for row in rows:
        line = csv_text(DUPLICATE_COLUMNS, [row])[len(header) :]
        size += len(line.encode())
        if size > MAX_DUPLICATES_BYTES:
            break
        parts.append(line)
    return "".join(parts), len(parts) - 1


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
        "duplicates": {
            "count": rnd.counts["duplicates_removed"],
            "listed": rnd.duplicates_listed,
            "file": DUPLICATES_CSV,
        },
        "retrieved_per_family": rnd.per_family,
    }
    if rnd.in_progress:
        data["in_progress"] = True
    if rnd.capped:
        data["capped"] = rnd.capped
    if rnd.decided:
        data["decision_counts"] = {
            "included": rnd.included,
            "excluded": rnd.excluded,
            "awaiting": rnd.awaiting,
        }
        data["decided"] = rnd.decided
    waiting = {k: v for k, v in rnd.waiting.items() if k not in rnd.decided}
    if waiting:
        data["waiting"] = waiting
    return dump_round(data)


def dump_round(data: dict[str, Any]) -> str:
    """``round.yaml``'s text from its mapping, in the mapping's key order."""
    return yaml.dump(data, Dumper=_PlainDumper, sort_keys=False, allow_unicode=True, width=100)


def round_files(
    rnd: Round,
    candidates: list[Entry],
    duplicates: list[Entry],
    labels: dict[str, str],
    kept: Sequence[list[str]] = (),
    listed: Sequence[dict[str, str]] = (),
) -> tuple[Round, dict[str, str]]:
    """The round (its listed duplicates counted) and the five files of its folder
    (``kept``: earlier batches' duplicate rows of candidates.csv; ``listed``: earlier
    batches' rows of duplicates.csv)."""
    added = [
        {"id": e.id, "duplicate_of": e.duplicate_of, "match": e.match, "source": e.source}
        for e in duplicates
    ]
    dup_text, count = duplicates_csv([*listed, *added])
    rnd = replace(rnd, duplicates_listed=count)
    return rnd, {
        CANDIDATES_CSV: candidates_csv(candidates + duplicates, kept),
        CANDIDATES_RIS: candidates_ris(candidates, labels),
        ENTRIES_JSON: entries_json(candidates),
        DUPLICATES_CSV: dup_text,
        ROUND_FILE: round_yaml(rnd),
    }
