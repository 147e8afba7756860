"""``masrl-kb diff <git-ref>``: what a change does to the knowledge base, as Markdown.

Compares the data files at a git ref (extracted with ``git archive``) with the
working tree: papers and exclusions added, removed or changed (tags old -> new),
and, when both sides validate, the cross-tab cells and claims whose values move.
CI posts it as each pull request's job summary.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from masrl_kb.kb.benchmarks import BENCHMARKS_FILE
from masrl_kb.kb.editor_schema import to_json_compatible
from masrl_kb.kb.fields import TAG_FIELDS
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.problem import Problem
from masrl_kb.kb.record_checks import validate_records
from masrl_kb.kb.records import EXCLUSIONS_DIR, PAPERS_DIR, RecordFile, read_records
from masrl_kb.kb.rules import crosstab_list, decision_statuses
from masrl_kb.kb.taxonomy import TAXONOMY_FILE, load_taxonomy
from masrl_kb.query.axes import crosstab
from masrl_kb.query.claims import (
    CLAIMS_FILE,
    ClaimResult,
    ClaimsFileError,
    evaluate_claims,
    load_claims,
)
from masrl_kb.query.pool import load_pool

DATA_PATHS = (PAPERS_DIR, EXCLUSIONS_DIR, TAXONOMY_FILE, CLAIMS_FILE, BENCHMARKS_FILE)
# (rows, columns, strict): the survey's cross-tabs, as the site shows them.
CROSSTABS: tuple[tuple[str, str, bool], ...] = tuple(crosstab_list())
JUDGEMENT_FIELDS = (*TAG_FIELDS, "credit_strict")
SHOWN_PROBLEMS = 10


class DiffError(Exception):
    """The ref cannot be read (not a git repository, unknown ref...)."""


# ---------------------------------------------------------------- git


def _git(root: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, check=False, timeout=120
        )
    except FileNotFoundError:
        raise DiffError("git is not installed or not on PATH") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DiffError(f"git {' '.join(args)}: {message[-1] if message else 'failed'}")
    return done.stdout


def extract_ref(root: Path, ref: str, dest: Path) -> None:
    """Write the ref's data files (those that exist there) under ``dest``."""
    try:
        prefix = _git(root, "rev-parse", "--show-prefix").decode().strip()
    except DiffError:
        raise DiffError(f"{root} is not inside a git repository") from None
    try:
        _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except DiffError:
        raise DiffError(
            f"unknown git ref {ref!r} (fetch it first, e.g. git fetch origin)"
        ) from None
    tree = f"{ref}:{prefix}" if prefix else ref
    listed = _git(root, "ls-tree", "--name-only", tree).decode().splitlines()
    present = [p for p in DATA_PATHS if p in listed]
    dest.mkdir(parents=True, exist_ok=True)
    if not present:
        return
    archive = _git(root, "archive", "--format=tar", tree, "--", *present)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")


# ---------------------------------------------------------------- one side


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


# ---------------------------------------------------------------- comparing


def _status(record: dict) -> dict[str, str]:
    decisions = record.get("decisions")
    items = decisions if isinstance(decisions, list) else []
    return decision_statuses(d for d in items if isinstance(d, dict))


def _show(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return "—" if value is None else str(value)


def paper_changes(old: dict, new: dict) -> tuple[list[str], list[str]]:
    """(tag changes as 'field: old → new', names of other edited fields)."""
    tags = [
        f"`{name}` {_show(old.get(name))} → {_show(new.get(name))}"
        for name in JUDGEMENT_FIELDS
        if old.get(name) != new.get(name)
    ]
    before, after = _status(old), _status(new)
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
            row, column = _cell(index[i]), _cell(columns[j])
            changes.append(f"| {name} | {row} | {column} | {x} | {y} | {_signed(y - x)} |")
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


# ---------------------------------------------------------------- report


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _paper_line(key: str, data: dict) -> str:
    title = _cell(data.get("title", ""))
    tags = ", ".join(
        f"{name} {_show(data.get(name))}" for name in ("reward_type", "credit_unit", "topology")
    )
    learned = [d for d, s in _status(data).items() if s == "learned"]
    extra = f"; learns {', '.join(learned)}" if learned else ""
    return f"- `{key}` — {title} ({tags}{extra})"


def _exclusion_line(eid: str, data: dict) -> str:
    return f"- `{eid}` — {_cell(data.get('title', ''))}"


def _signed(n: int) -> str:
    return f"+{n}" if n > 0 else f"−{-n}"


def _problems_note(side: Side) -> list[str]:
    lines = [
        f"**{side.label} fails validation** ({len(side.problems)} problem(s)); "
        "cross-tab and claim changes are not computed:",
        "",
    ]
    lines += [f"- `{p}`" for p in side.problems[:SHOWN_PROBLEMS]]
    if len(side.problems) > SHOWN_PROBLEMS:
        lines.append(f"- … and {len(side.problems) - SHOWN_PROBLEMS} more")
    return [*lines, ""]


def _record_sections(old: Side, new: Side) -> dict[str, list[str]]:
    """Section title -> one line per paper or exclusion added, removed or changed."""
    pa, pb, ea, eb = old.papers_raw, new.papers_raw, old.exclusions_raw, new.exclusions_raw
    retagged, edited = [], []
    for key in sorted(pa.keys() & pb.keys()):
        tags, other = paper_changes(pa[key], pb[key])
        if tags:
            also = f" (also edited: {', '.join(other)})" if other else ""
            retagged.append(f"- `{key}`: {'; '.join(tags)}{also}")
        elif other:
            edited.append(f"- `{key}`: {', '.join(other)}")
    return {
        "Papers added": [_paper_line(k, pb[k]) for k in sorted(pb.keys() - pa.keys())],
        "Papers removed": [_paper_line(k, pa[k]) for k in sorted(pa.keys() - pb.keys())],
        "Papers retagged": retagged,
        "Papers edited": edited,
        "Exclusions added": [_exclusion_line(e, eb[e]) for e in sorted(eb.keys() - ea.keys())],
        "Exclusions removed": [_exclusion_line(e, ea[e]) for e in sorted(ea.keys() - eb.keys())],
        "Exclusions changed": [
            f"- `{e}`: {', '.join(_changed_fields(ea[e], eb[e]))}"
            for e in sorted(ea.keys() & eb.keys())
            if ea[e] != eb[e]
        ],
    }


def _table_sections(old: Side, new: Side) -> tuple[list[str], bool]:
    """The cross-tab and claim sections (both sides valid), and whether anything changes."""
    if old.papers is None or new.papers is None:
        return [], False
    out = []
    cells = cell_changes(old.papers, new.papers)
    if cells:
        out += [
            "### Cross-tab cells that change",
            "",
            "| table | row | column | before | after | change |",
            "| --- | --- | --- | ---: | ---: | ---: |",
            *cells,
            "",
        ]
    claims = []
    if old.claims is not None and new.claims is not None:
        claims = claim_changes(old.claims, new.claims)
    for side in (old, new):
        if side.claims_error:
            out += [f"_Claims of {side.label} not evaluated: {_cell(side.claims_error)}_", ""]
    if claims:
        out += ["### Claims that change", "", "| claim | before | after |", "| --- | --- | --- |"]
        out += [f"| `{cid}` | {a} | {b} |" for cid, a, b in claims]
        out.append("")
    return out, bool(cells or claims)


def render(old: Side, new: Side, ref: str) -> str:
    """The Markdown report."""
    sections = _record_sections(old, new)
    n = {title: len(lines) for title, lines in sections.items()}
    out = [
        f"## Knowledge-base changes against `{ref}`",
        "",
        f"**Papers:** {n['Papers added']} added, {n['Papers removed']} removed, "
        f"{n['Papers retagged']} retagged, {n['Papers edited']} edited otherwise. "
        f"**Exclusions:** {n['Exclusions added']} added, {n['Exclusions removed']} removed, "
        f"{n['Exclusions changed']} changed.",
        "",
    ]
    for side in (old, new):
        if side.problems:
            out += _problems_note(side)
        out += [f"_{note}_" for note in side.notes]
    if old.taxonomy_text != new.taxonomy_text and old.taxonomy_text is not None:
        out += ["`taxonomy.yaml` changes: check the values the changed records use.", ""]
    order = ("added", "removed", "retagged", "edited", "changed")
    for title in sorted(
        sections, key=lambda t: (t.split()[0] != "Papers", order.index(t.split()[1]))
    ):
        if sections[title]:
            out += [f"### {title}", "", *sections[title], ""]
    tables, moved = _table_sections(old, new)
    out += tables
    if not (any(sections.values()) or moved):
        out += ["No paper, exclusion, cross-tab cell or claim changes.", ""]
    return "\n".join(out).rstrip() + "\n"


def _changed_fields(old: dict, new: dict) -> list[str]:
    return [
        f"`{name}` {_show(old.get(name))} → {_show(new.get(name))}"
        if name in ("source", "query_family", "stage", "reason")
        else name
        for name in dict.fromkeys([*old, *new])
        if old.get(name) != new.get(name)
    ]


@dataclass
class DiffResult:
    """The report and whether the working tree side is valid."""

    markdown: str
    old: Side
    new: Side


def diff_against(ref: str, root: str | os.PathLike[str] | None = None) -> DiffResult:
    """Compare the data root's working tree with the same files at ``ref``."""
    base = find_root(root).resolve()
    with tempfile.TemporaryDirectory(prefix="masrl-kb-diff-") as tmp:
        ref_root = Path(tmp)
        extract_ref(base, ref, ref_root)
        old = load_side(ref_root, f"`{ref}`", claims_root=base)
        new = load_side(base, "the working tree")
        return DiffResult(render(old, new, ref), old, new)
