"""``masrl-kb agreement --snapshot``: the records' own codings written as a reader's file.

Two uses keep a reading as it stood while the records move on: the survey's view reading
(the codings the survey's claims were checked against, before a recoding) and a first
reading before it is compared with a blind second one and adjudicated, so that
``masrl-kb agreement`` measures two independent readings rather than one reading against
its own adjudicated copy.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from masrl_kb.kb.atomic import write_atomic
from masrl_kb.kb.readings import READING_FIELDS, READINGS_DIR
from masrl_kb.query.pool import load_papers

READER_ID = r"^[a-z0-9][a-z0-9-]{0,60}$"


class SnapshotError(ValueError):
    """The snapshot cannot be written (the message says why); nothing was written."""


def _value(value: Any) -> Any:
    """A frame cell as the readings file holds it: None for a missing value."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return None
    return bool(value) if isinstance(value, bool) else str(value)


def coded_fields(row: pd.Series) -> dict[str, Any]:
    """A paper's codings as a reading: every field the records give a value."""
    out = {}
    for name in READING_FIELDS:
        value = _value(row[name]) if name in row.index else None
        if value is not None:
            out[name] = value
    return out


def snapshot_text(reader: str, name: str, method: str, papers: pd.DataFrame, today: dt.date) -> str:
    """The YAML text of a readings file with the records' codings of ``papers``."""
    data = {
        "reader": reader,
        "name": name,
        "date": today,
        "source": "the records under papers/ as they stood on this date",
        "method": method,
        "readings": [{"key": key} | coded_fields(row) for key, row in papers.iterrows()],
    }
    header = f"# Written by `masrl-kb agreement --snapshot {reader}`; edit only to fix it.\n"
    return header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def write_snapshot(
    root: Path,
    reader: str,
    name: str,
    method: str,
    added_on: dt.date | None = None,
    keys: list[str] | None = None,
    today: dt.date | None = None,
) -> Path:
    """Write ``readings/<reader>.yaml`` from the records (the papers added on
    ``added_on``, or those of ``keys``, or all); refuses to replace a file."""
    if not re.match(READER_ID, reader):
        raise SnapshotError(f"reader {reader[:60]!r}: expected lower-case letters, digits and -")
    path = root / READINGS_DIR / f"{reader}.yaml"
    if path.exists() or path.is_symlink():
        raise SnapshotError(f"{READINGS_DIR}/{reader}.yaml already exists; nothing written")
    papers = load_papers(root, drafts="exclude")  # a snapshot is of finished records
    if added_on is not None:
        papers = papers[papers["added"] == pd.Timestamp(added_on)]
    if keys:
        unknown = [k for k in keys if k not in papers.index]
        if unknown:
            raise SnapshotError(f"no pooled paper {unknown[0]!r}; nothing written")
        papers = papers.loc[keys]
    if papers.empty:
        raise SnapshotError("no paper to snapshot; nothing written")
    text = snapshot_text(reader, name, method, papers.sort_index(), today or dt.date.today())
    write_atomic(path, text)
    return path
