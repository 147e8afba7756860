"""Exports of the pool as data: CSV and JSON text (BibTeX: :mod:`masrl_kb.contrib.export.bibtex`).

Every function takes the DataFrames of :mod:`masrl_kb.query.frames` (load once, pass
them in) and returns text, so the site and the command line share one export.
Output is deterministic: rows in index order, columns in API order.
"""

from __future__ import annotations

import datetime as dt
import json
import math

import pandas as pd

from masrl_kb.contrib.export.csv_io import csv_text


def json_value(value: object) -> object:
    """A JSON-ready value: dates as ISO days, NaN and NA as None."""
    if isinstance(value, pd.Timestamp):
        return value.date().isoformat()
    if isinstance(value, dt.date):  # artifact check days inside mappings
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: json_value(v) for k, v in value.items()}
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


def frame_records(frame: pd.DataFrame, index_name: str) -> list[dict]:
    """Rows as plain dicts, the index first under ``index_name``."""
    # Column lists, not iterrows(): one Series per row was most of an export's time.
    names = list(frame.columns)
    columns = [frame[name].tolist() for name in names]
    return [
        {index_name: key, **{name: json_value(v) for name, v in zip(names, values, strict=True)}}
        for key, *values in zip(frame.index, *columns, strict=True)
    ]


def papers_records(papers: pd.DataFrame) -> list[dict]:
    """The pool as plain dicts (``key`` first), ready for JSON."""
    return frame_records(papers, "key")


def exclusions_records(exclusions: pd.DataFrame) -> list[dict]:
    """The exclusion log as plain dicts (``id`` first), ready for JSON."""
    return frame_records(exclusions, "id")


def records_json(records: list[dict], compact: bool = False) -> str:
    """JSON text of records, two-space indented (one record a line when ``compact``),
    ending in a newline."""
    if compact:
        lines = (json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records)
        return "[\n" + ",\n".join(lines) + "\n]\n" if records else "[]\n"
    return json.dumps(records, indent=2, ensure_ascii=False) + "\n"


def records_csv(records: list[dict]) -> str:
    """CSV text of records, lists and mappings as JSON text, every cell quoted (a bare
    ``\\r``, ``\\u2028`` or other line break stays inside its cell for every reader)."""
    if not records:
        return ""
    rows = [{k: _csv_cell(v) for k, v in record.items()} for record in records]
    return csv_text(list(records[0]), rows, quote_all=True)


def _csv_cell(value: object) -> str:
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def to_csv(papers: pd.DataFrame) -> str:
    """The pool as CSV text."""
    return records_csv(papers_records(papers))


def to_json(papers: pd.DataFrame) -> str:
    """The pool as JSON text (a list of records)."""
    return records_json(papers_records(papers))
