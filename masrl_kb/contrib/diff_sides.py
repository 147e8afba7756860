"""The two sides ``masrl-kb diff`` compares, each one data root read and (when valid) its
frames, cross-tabs and claims computed, and what changed between them: a paper's tags
and decisions, the cross-tab cells, the claims' values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from masrl_kb.kb.editor_schema import to_json_compatible
from masrl_kb.kb.fields import TAG_FIELDS
from masrl_kb.kb.problem import Problem
from masrl_kb.kb.record_checks import validate_records
from masrl_kb.kb.records import RecordFile, read_records
from masrl_kb.kb.rules import crosstab_list, decision_statuses
from masrl_kb.kb.taxonomy import TAXONOMY_FILE, load_taxonomy
from masrl_kb.query.claims import (
    CLAIMS_FILE,
    ClaimResult,
    ClaimsFileError,
    evaluate_claims,
    load_claims,
)
from masrl_kb.query.frames import crosstab, load_pool

# (rows, columns, strict): the survey's cross-tabs, as the site shows them.
CROSSTABS: tuple[tuple[str, str, bool], ...] = tuple(crosstab_list())
JUDGEMENT_FIELDS = (*TAG_FIELDS, "credit_strict")


@dataclass
class Side:
    """One side of the comparison: its records and, when valid, its tables."""

    label: str
    papers_raw: dict[str, dict]
    exclusions_raw: dict[str, dict]
    problems: list[Problem]
    taxonomy_text: str | None
    papers: pd.DataFrame | None = None
    exclusions: pd.DataFrame | None = None
    claims: list[ClaimResult] | None = None
    claims_error: str | None = None
    notes: list[str] = field(default_factory=list)


def _raw(records: list[RecordFile], id_field: str) -> dict[str, Any]:
    return {
        str(r.data.get(id_field, r.stem)): to_json_compatible(r.data)
        for r in records
        if isinstance(r.data, dict)
    }


def load_side(root: Path, label: str, claims_root: Path | None = None) -> Side:
    """Read and, when it is valid, tabulate one data root."""
    tax_path = root / TAXONOMY_FILE
    if not tax_path.is_file():
        return Side(label, {}, {}, [Problem(TAXONOMY_FILE, 1, "file", "missing")], None)
    records = read_records(root)
    tax = load_taxonomy(root)
    problems = validate_records(records, tax)
    side = Side(
        label,
        _raw(records.papers, "key"),
        _raw(records.exclusions, "id"),
        problems,
        tax_path.read_text(encoding="utf-8"),
    )
    if problems:
        return side
    side.papers, side.exclusions = load_pool(root)
    source = root if (root / CLAIMS_FILE).is_file() else claims_root
    if source is None:
        side.claims_error = f"no {CLAIMS_FILE}"
        return side
    if source != root:
        side.notes.append(
            f"{label} has no {CLAIMS_FILE}: its records are checked against the new claims"
        )
    try:
        side.claims = evaluate_claims(
            load_claims(source), papers=side.papers, exclusions=side.exclusions
        )
    except ClaimsFileError as err:
        side.claims_error = str(err)
    return side


def decision_status(record: dict) -> dict[str, str]:
    decisions = record.get("decisions")
    items = decisions if isinstance(decisions, list) else []
    return decision_statuses(d for d in items if isinstance(d, dict))


def shown_value(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return "—" if value is None else str(value)


def paper_changes(old: dict, new: dict) -> tuple[list[str], list[str]]:
    """(tag changes as 'field: old → new', names of other edited fields)."""
    tags = [
        f"`{name}` {shown_value(old.get(name))} → {shown_value(new.get(name))}"
        for name in JUDGEMENT_FIELDS
        if old.get(name) != new.get(name)
    ]
    before, after = decision_status(old), decision_status(new)
    moved = [
        did
        for did in sorted(set(before) | set(after))
        if before.get(did, "absent") != after.get(did, "absent")
    ]
    tags += [f"`{d}` {before.get(d, 'absent')} → {after.get(d, 'absent')}" for d in moved]
    edited = sorted(
        name
        for name in set(old) | set(new)
        if name not in JUDGEMENT_FIELDS and name != "decisions" and old.get(name) != new.get(name)
    )
    if old.get("decisions") != new.get("decisions") and not moved:
        edited.append("decisions (reasons)")
    return tags, edited


def table_cell(text: object) -> str:
    """Text safe in a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def signed(n: int) -> str:
    return f"+{n}" if n > 0 else f"−{-n}"


def cell_changes(old: pd.DataFrame, new: pd.DataFrame) -> list[str]:
    """Table rows for the cells of the survey's cross-tabs whose counts differ."""
    changes = []
    for rows, cols, strict in CROSSTABS:
        a = crosstab(rows, cols, strict=strict, papers=old)
        b = crosstab(rows, cols, strict=strict, papers=new)
        index = list(dict.fromkeys([*a.index, *b.index]))
        columns = list(dict.fromkeys([*a.columns, *b.columns]))
        before = a.reindex(index=index, columns=columns, fill_value=0).to_numpy(dtype=int)
        after = b.reindex(index=index, columns=columns, fill_value=0).to_numpy(dtype=int)
        name = f"{rows} × {cols}" + (" (strict)" if strict else "")
        for i, j in zip(*(before != after).nonzero(), strict=True):
            x, y = int(before[i, j]), int(after[i, j])
            row, column = table_cell(index[i]), table_cell(columns[j])
            changes.append(f"| {name} | {row} | {column} | {x} | {y} | {signed(y - x)} |")
    return changes


def _claim_text(result: ClaimResult | None) -> str:
    if result is None:
        return "—"
    return f"{result.value} ({'holds' if result.holds else 'broken'})"


def claim_changes(old: list[ClaimResult], new: list[ClaimResult]) -> list[tuple[str, str, str]]:
    """(claim id, before, after) for claims whose value or status changes."""
    a = {r.claim.id: r for r in old}
    b = {r.claim.id: r for r in new}
    out = []
    for cid in list(dict.fromkeys([*a, *b])):
        x, y = a.get(cid), b.get(cid)
        if x is None or y is None or (x.value, x.holds) != (y.value, y.holds):
            out.append((cid, _claim_text(x), _claim_text(y)))
    return out


def changed_fields(old: dict, new: dict) -> list[str]:
    return [
        f"`{name}` {shown_value(old.get(name))} → {shown_value(new.get(name))}"
        if name in ("source", "query_family", "stage", "reason")
        else name
        for name in dict.fromkeys([*old, *new])
        if old.get(name) != new.get(name)
    ]
