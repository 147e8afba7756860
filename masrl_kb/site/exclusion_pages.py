"""The exclusions page: the screening flow as a diagram and the exclusion log."""

from __future__ import annotations

from masrl_kb.query.frames import crosstab, value_counts
from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context
from masrl_kb.site.html import esc, ext_link, mermaid_label


def _stage_counts(ctx: Context) -> list[tuple[str, str, int]]:
    counts = value_counts("stage", papers=ctx.exclusions)
    spec = ctx.tax["exclusion_stage"]
    return [(str(s), spec.label_of(str(s)), int(n)) for s, n in counts.items()]


def flow_diagram(ctx: Context) -> str:
    """A Mermaid flowchart; every label is escaped for Mermaid."""
    pooled, excluded = len(ctx.papers), len(ctx.exclusions)
    lines = [
        "```mermaid",
        "flowchart TD",
        f'  S["{mermaid_label(f"Records screened: {pooled + excluded}")}"]',
        f'  S --> K["{mermaid_label(f"Retained in the pool: {pooled}")}"]',
        f'  S --> X["{mermaid_label(f"Excluded: {excluded}")}"]',
    ]
    for i, (_, label, n) in enumerate(_stage_counts(ctx)):
        lines.append(f'  X --> X{i}["{mermaid_label(f"{label}: {n}")}"]')
    return "\n".join([*lines, "```"])


def flow_table(ctx: Context) -> str:
    """The same numbers as the diagram, as text (readable without JavaScript)."""
    pooled, excluded = len(ctx.papers), len(ctx.exclusions)
    rows = [
        ("Records screened", pooled + excluded, "screened"),
        ("Retained in the pool", pooled, "retained"),
        ("Excluded", excluded, "excluded"),
    ]
    rows += [(f"Excluded at: {label}", n, f"stage-{sid}") for sid, label, n in _stage_counts(ctx)]
    body = "".join(
        f'<tr><td>{esc(t)}</td><td class="kb-num" data-kb-flow="{esc(k)}">{n}</td></tr>'
        for t, n, k in rows
    )
    return (
        f'<div class="kb-scroll"><table class="kb-table kb-flow"><tbody>{body}</tbody>'
        "</table></div>"
    )


def reason_table(ctx: Context) -> str:
    table = crosstab("reason", "stage", papers=ctx.exclusions)
    stage, reason = ctx.tax["exclusion_stage"], ctx.tax["exclusion_reason"]
    head = "".join(f"<th>{esc(stage.label_of(str(s)))}</th>" for s in table.columns)
    rows = "".join(
        f'<tr><th scope="row" title="{esc(reason.value(str(r)).definition)}">'
        f"{esc(reason.label_of(str(r)))}</th>"
        + "".join(f'<td class="kb-num">{int(table.at[r, s])}</td>' for s in table.columns)
        + "</tr>"
        for r in table.index
    )
    return (
        f'<div class="kb-scroll"><table class="kb-table"><thead><tr><th>Reason</th>{head}'
        f"</tr></thead><tbody>{rows}</tbody></table></div>"
    )


def log_table(ctx: Context) -> str:
    tax = ctx.tax
    rows = []
    for eid, row in ctx.exclusions.iterrows():
        cells = [
            f"<code>{esc(eid)}</code>",
            esc(row["title"]) + f'<br><small class="kb-dim">{esc(row["note"])}</small>',
            ext_link(row["url"], row["identifier"]),
            esc(tax["exclusion_source"].label_of(row["source"])),
            esc(tax["query_family"].label_of(row["query_family"])),
            esc(tax["exclusion_stage"].label_of(row["stage"])),
            esc(tax["exclusion_reason"].label_of(row["reason"])),
            esc(row["screened"].date().isoformat()),
        ]
        rows.append(
            f'<tr id="{esc(eid)}" data-exclusion="{esc(eid)}">'
            + "".join(f"<td>{c}</td>" for c in cells)
            + "</tr>"
        )
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "Id",
            "Record",
            "Identifier",
            "Source",
            "Query family",
            "Stage",
            "Reason",
            "Screened",
        )
    )
    return (
        f'<div class="kb-scroll"><table class="kb-table kb-log"><thead><tr>{head}</tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def exclusions_page(ctx: Context) -> Page:
    page = Page(urls.EXCLUSIONS, "Exclusions")
    page.add(
        "# Exclusions",
        "<p>Every record the survey screened either entered the pool or was excluded at "
        "one screening stage, with a reason. The log below is the full list of "
        "exclusions.</p>",
        f"<p>Reason codes and stages are defined in the {page.link('protocol/', 'protocol')}; "
        f"later screening rounds are on the {page.link('rounds/', 'rounds page')}.</p>",
        "## Screening flow",
        flow_diagram(ctx),
        flow_table(ctx),
        "## Reasons by stage",
        reason_table(ctx),
        "## The exclusion log",
        log_table(ctx),
    )
    return page
