"""The Markdown report of ``masrl-kb diff``: papers and exclusions added, removed or changed,
the cross-tab cells and claims whose values move, and the problems of a side that does
not validate (at most :data:`SHOWN_PROBLEMS`), every cell escaped for a table.
"""

from __future__ import annotations

from masrl_kb.contrib.diff_sides import (
    Side,
    cell_changes,
    changed_fields,
    claim_changes,
    decision_status,
    paper_changes,
    shown_value,
    table_cell,
)

SHOWN_PROBLEMS = 10


def _paper_line(key: str, data: dict) -> str:
    title = table_cell(data.get("title", ""))
    tags = ", ".join(
        f"{name} {shown_value(data.get(name))}"
        for name in ("reward_type", "credit_unit", "topology")
    )
    learned = [d for d, s in decision_status(data).items() if s == "learned"]
    extra = f"; learns {', '.join(learned)}" if learned else ""
    return f"- `{key}` — {title} ({tags}{extra})"


def _exclusion_line(eid: str, data: dict) -> str:
    return f"- `{eid}` — {table_cell(data.get('title', ''))}"


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
            f"- `{e}`: {', '.join(changed_fields(ea[e], eb[e]))}"
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
            out += [f"_Claims of {side.label} not evaluated: {table_cell(side.claims_error)}_", ""]
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
