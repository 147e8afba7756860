"""Drafts: records still holding the ``TODO`` placeholder (``add``, ``exclude`` and
``screen decide`` write them). ``validate`` and the release build refuse drafts; the
read-only commands and ``load_papers(drafts="exclude")`` leave them out instead.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from masrl_kb.kb.fields import PLACEHOLDER
from masrl_kb.kb.records import RecordFile, RecordSet

DRAFT_MODES = ("error", "exclude")


@dataclass(frozen=True)
class Draft:
    """One unfinished record: its file, name, title and the fields still ``TODO``."""

    path: str
    kind: str  # "paper" or "exclusion"
    id: str
    title: str
    unfinished: tuple[str, ...]


def _placeholders(value: object, name: str, seen: set[int] | None = None) -> list[str]:
    """Dotted names of every place ``value`` holds the placeholder; a node that YAML
    aliases share is walked once (a "billion laughs" record must not cost a billion steps)."""
    if value == PLACEHOLDER:
        return [name]
    if not isinstance(value, dict | list):
        return []
    seen = set() if seen is None else seen
    if id(value) in seen:
        return []
    seen.add(id(value))
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _placeholders(v, f"{name}.{k}", seen)]
    return [p for i, v in enumerate(value) for p in _placeholders(v, f"{name}[{i}]", seen)]


def unfinished_fields(rec: RecordFile) -> tuple[str, ...]:
    """The fields of a record still holding ``TODO`` (empty for a finished record)."""
    if not isinstance(rec.data, dict):
        return ()
    return tuple(p for k, v in rec.data.items() for p in _placeholders(v, str(k)))


def _text(value: object) -> str:
    return value if isinstance(value, str) and value != PLACEHOLDER else ""


def as_draft(rec: RecordFile) -> Draft:
    data = rec.data if isinstance(rec.data, dict) else {}
    name = _text(data.get(rec.id_field)) or rec.stem
    return Draft(rec.rel, rec.kind, name, _text(data.get("title")), unfinished_fields(rec))


def split_drafts(records: RecordSet) -> tuple[RecordSet, list[Draft]]:
    """The record set without its drafts, and the drafts (papers first, by path)."""
    drafts = [r for r in records.papers + records.exclusions if unfinished_fields(r)]
    if not drafts:
        return records, []
    left_out = {id(r) for r in drafts}
    finished = replace(
        records,
        papers=[r for r in records.papers if id(r) not in left_out],
        exclusions=[r for r in records.exclusions if id(r) not in left_out],
    )
    return finished, [as_draft(r) for r in drafts]


def check_mode(drafts: str) -> str:
    """``drafts`` itself when it is one of :data:`DRAFT_MODES`, else ValueError."""
    if drafts not in DRAFT_MODES:
        raise ValueError(f"drafts={drafts!r}: allowed: {', '.join(DRAFT_MODES)}")
    return drafts
