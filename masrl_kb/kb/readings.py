"""Independent readings: other readers' codings of pooled papers.

One file per reader, ``readings/<reader>.yaml``::

    reader: spotcheck-2026-05-03     # equals the file name
    name: The survey's second annotator
    date: 2026-05-03
    source: https://...              # where the readings come from
    method: What the reader read and how, in our words.
    readings:
      - key: c3                      # a pooled paper
        credit_unit: message         # any of READING_AXES
        credit_strict: true

A reading lists only the fields its reader coded. The knowledge base's own
records are a reader too (``kb``), so agreement can be measured against them.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from masrl_kb.kb.paths import find_root
from masrl_kb.kb.problem import Problem
from masrl_kb.kb.taxonomy import Taxonomy, load_taxonomy
from masrl_kb.kb.yamlio import LineDict, load_yaml_file

READINGS_DIR = "readings"
KB_READER = "kb"
# field -> taxonomy axis (None: a boolean field)
READING_AXES: dict[str, str | None] = {
    "category": "category",
    "is_rl": "is_rl",
    "reward_type": "reward_type",
    "credit_unit": "credit_unit",
    "topology": "topology",
    "credit_strict": None,
}
_HEADER = ("reader", "name", "date", "source", "method", "readings")


class ReadingsError(ValueError):
    """A readings file is malformed; ``problem`` says where (``path:line: field: message``)."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        super().__init__(str(problem))


@dataclass(frozen=True)
class Reader:
    """One reader's codings: ``readings[key][field] = value``."""

    id: str
    name: str
    date: dt.date | None
    source: str
    method: str
    readings: dict[str, dict[str, object]]


def _error(rel: str, line: int, field: str, message: str) -> ReadingsError:
    return ReadingsError(Problem(rel, line, field, message))


def _check_value(rel: str, item: LineDict, field: str, tax: Taxonomy) -> object:
    value = item[field]
    axis = READING_AXES[field]
    if axis is None:
        if not isinstance(value, bool):
            raise _error(rel, item.line_of(field), field, "expected true or false")
        return value
    if not isinstance(value, str) or value not in tax[axis].ids:
        allowed = ", ".join(tax[axis].ids)
        raise _error(rel, item.line_of(field), field, f"unknown value; allowed: {allowed}")
    return value


def _reading(rel: str, i: int, item: object, keys: set[str], tax: Taxonomy) -> tuple[str, dict]:
    if not isinstance(item, LineDict) or not isinstance(item.get("key"), str):
        raise _error(rel, getattr(item, "line", 1), f"readings[{i}]", "expected {key: ..., ...}")
    key = item["key"]
    if key not in keys:
        raise _error(rel, item.line_of("key"), f"readings[{i}].key", f"no pooled paper {key!r}")
    coded: dict[str, object] = {}
    for field in item:
        if field in ("key", "note"):
            continue
        if field not in READING_AXES:
            allowed = ", ".join(READING_AXES)
            message = f"unknown field {field!r}; allowed: key, note, {allowed}"
            raise _error(rel, item.line_of(field), f"readings[{i}]", message)
        coded[field] = _check_value(rel, item, field, tax)
    return key, coded


def _reader(path: Path, rel: str, keys: set[str], tax: Taxonomy) -> Reader:
    loaded = load_yaml_file(path)  # refuses links, FIFOs, devices and oversized files
    if loaded.problems:
        p = loaded.problems[0]
        raise _error(rel, p.line, p.field, p.message)
    data = loaded.data
    if not isinstance(data, LineDict):
        raise _error(rel, 1, "file", "expected a mapping with reader, name, readings")
    for field in _HEADER:
        if field not in data:
            raise _error(rel, data.line, field, "missing required field")
    if data["reader"] != path.stem or data["reader"] == KB_READER:
        message = f"must equal the file name {path.stem!r} and not be {KB_READER!r}"
        raise _error(rel, data.line_of("reader"), "reader", message)
    if not isinstance(data["readings"], list):
        raise _error(rel, data.line_of("readings"), "readings", "expected a list")
    readings: dict[str, dict[str, object]] = {}
    for i, item in enumerate(data["readings"]):
        key, coded = _reading(rel, i, item, keys, tax)
        if key in readings:
            raise _error(rel, item.line_of("key"), f"readings[{i}].key", f"{key!r} read twice")
        readings[key] = coded
    date = data["date"] if isinstance(data["date"], dt.date) else None
    return Reader(
        data["reader"], str(data["name"]), date, str(data["source"]), str(data["method"]), readings
    )


def load_readers(paper_keys: set[str], root: str | os.PathLike[str] | None = None) -> list[Reader]:
    """Every reader under ``readings/``, sorted by id (the kb's own reading excluded)."""
    base = find_root(root)
    folder = base / READINGS_DIR
    if not folder.is_dir():
        return []
    tax = load_taxonomy(base)
    paths = sorted(p for p in folder.iterdir() if p.suffix == ".yaml")
    return [_reader(p, f"{READINGS_DIR}/{p.name}", paper_keys, tax) for p in paths]
