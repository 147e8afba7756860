"""Reading a CSV or JSON export (``masrl-kb export csv|json``) back into records.

Derived columns are checked against the fields they come from (an edited cell that
disagrees is an error), then dropped; ``NA`` is a real tag value, never a missing one.
Every CSV the project writes guards its cells (:func:`guard_cell`) so a spreadsheet never
runs one as a formula, and every reader unguards them (:func:`unguard_cell`).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
from typing import Any

from masrl_kb.kb.fields import DECISION_ID_PATTERN, PAPER_FIELDS, Field, is_derived
from masrl_kb.kb.rules import ABSENT, decision_statuses

_FIELDS = {f.name: f for f in PAPER_FIELDS}
_JSON_KINDS = ("strings", "urls", "decisions", "citation", "object", "objects")
# The pandas API's derived columns (masrl_kb.kb.fields.DERIVED) are dropped on import;
# the decision and citation ones are checked against their source fields first.
_DECISION_COLUMN = re.compile(f"^{DECISION_ID_PATTERN}$")  # one column per decision id


# Optional fields whose empty or false value says something: "evaluated_on: []" records
# that a method was checked and reports on no benchmark; "multi_agent_native: false" is a finding.
KEEP_EMPTY = ("evaluated_on", "multi_agent_native")


class CsvImportError(ValueError):
    """A row of an export cannot be turned back into a record."""


# A spreadsheet runs a cell beginning with one of these as a formula (tab and CR
# too: some programs drop them and read what follows). The guard is a leading
# apostrophe, which spreadsheets show as text and hide.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# Cells already starting with apostrophes before such a character get one more, so
# that unguarding (removing exactly one) is exact for every text.
_STARTS = "[" + "".join(re.escape(c) for c in FORMULA_START) + "]"
_NEEDS_GUARD = re.compile("'*" + _STARTS)
_GUARDED = re.compile("'+" + _STARTS)


def guard_cell(text: str) -> str:
    """A cell no spreadsheet runs as a formula."""
    return "'" + text if _NEEDS_GUARD.match(text) else text


def unguard_cell(text: str) -> str:
    """The text :func:`guard_cell` was given (cells without a guard are returned as is)."""
    return text[1:] if _GUARDED.match(text) else text


def csv_text(
    columns: list[str] | tuple[str, ...], rows: list[dict], quote_all: bool = False
) -> str:
    """The rows as CSV text, formula-like cells guarded (:func:`guard_cell`). The csv
    module quotes a cell for ``\\n`` but not for a bare ``\\r``, which other readers
    take as a line end: a row holding one is quoted whole (``quote_all``: every row)."""
    out = io.StringIO(newline="")
    minimal, every = (
        csv.DictWriter(out, fieldnames=list(columns), lineterminator="\n", quoting=q)
        for q in (csv.QUOTE_MINIMAL, csv.QUOTE_ALL)
    )
    (every if quote_all else minimal).writeheader()
    for row in rows:
        guarded = {k: guard_cell(v) for k, v in row.items()}
        quoted = quote_all or any("\r" in v for v in guarded.values())
        (every if quoted else minimal).writerow(guarded)
    return out.getvalue()


def unguard_row(row: dict[str, Any]) -> dict[str, Any]:
    """A row read back; a missing cell (None) or extra cells (a list) stay as they are."""
    return {k: unguard_cell(v) if isinstance(v, str) else v for k, v in row.items()}


def canonical_record(data: dict) -> dict:
    """A paper record in field order, empty optional fields (``extra_urls: []``: the same
    as absent) dropped; both sides of a round-trip comparison go through this."""
    out = {}
    for f in PAPER_FIELDS:
        if f.name not in data:
            continue
        value = data[f.name]
        if not f.required and value in (None, "", [], False) and f.name not in KEEP_EMPTY:
            continue
        out[f.name] = _plain(value)
    return out


def _plain(value: object) -> object:
    """Mappings and lists as plain dicts and lists, all the way down."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return [_plain(v) for v in value] if isinstance(value, list) else value


def _cell_value(f: Field, cell: object, where: str) -> object:
    """One cell (CSV text, or a JSON value) as the record field's value."""
    try:
        if f.kind in _JSON_KINDS:
            value = json.loads(cell) if isinstance(cell, str) else cell
            return _revive_dates(value) if f.name == "artifacts" else value
        if not isinstance(cell, str):
            if f.kind == "date" and cell is not None:
                raise ValueError(f"expected an ISO date, got {cell!r}")
            return cell
        if f.kind == "int":
            return int(cell)
        if f.kind == "bool":
            if cell.lower() not in ("true", "false"):
                raise ValueError(f"expected true or false, got {cell!r}")
            return cell.lower() == "true"
        if f.kind == "date":
            return dt.date.fromisoformat(cell)
        return cell
    except ValueError as err:  # json.JSONDecodeError is a ValueError
        raise CsvImportError(f"{where}: {f.name}: {err}") from None


def _revive_dates(artifacts: object) -> object:
    """``{none: "2026-11-30"}`` back to the date the YAML record holds."""
    if not isinstance(artifacts, dict):
        return artifacts
    out = dict(artifacts)
    for kind, value in artifacts.items():
        if isinstance(value, dict) and isinstance(value.get("none"), str):
            out[kind] = {"none": dt.date.fromisoformat(value["none"])}
    return out


def _derived(record: dict, columns) -> dict[str, str]:
    status = decision_statuses(record["decisions"])
    derived = {c: status.get(c, ABSENT) for c in columns if _DECISION_COLUMN.match(c)}
    derived["bibtex_key"] = record["citation"]["bibtex_key"]
    derived["entry_type"] = record["citation"]["entry_type"]
    return derived


def row_to_record(row: dict, where: str = "row") -> dict:
    """One exported row as a paper record (derived columns checked, then dropped)."""
    unknown = [c for c in row if c not in _FIELDS and not is_derived(str(c))]
    if unknown:
        raise CsvImportError(f"{where}: unknown column(s): {', '.join(map(str, unknown))}")
    record = {}
    for f in PAPER_FIELDS:
        cell = row.get(f.name)
        if cell is None or cell == "":
            if f.required:
                raise CsvImportError(f"{where}: {f.name}: missing ({f.doc})")
            continue
        record[f.name] = _cell_value(f, cell, where)
    try:
        derived = _derived(record, row)
    except (KeyError, TypeError) as err:
        raise CsvImportError(f"{where}: decisions or citation malformed: {err}") from None
    for column, expected in derived.items():
        if column in row and str(row[column]) != expected:
            raise CsvImportError(
                f"{where}: {column} is {row[column]!r} but the record fields give {expected!r}; "
                "edit the source field, not the derived column"
            )
    return canonical_record(record)


def records_from_csv(text: str) -> list[dict]:
    """Paper records from the text of ``masrl-kb export csv``."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    return [row_to_record(unguard_row(row), f"line {reader.line_num}") for row in reader]


def records_from_json(text: str) -> list[dict]:
    """Paper records from the text of ``masrl-kb export json``."""
    rows = json.loads(text)
    if not isinstance(rows, list):
        raise CsvImportError("expected a JSON list of records")
    return [row_to_record(row, f"record {i + 1}") for i, row in enumerate(rows)]
