"""Screening rounds on the site: PRISMA-style flows, what each round added, and what
changed since the survey's baseline (cross-tab cells and claims)."""

from __future__ import annotations

import pandas as pd

from masrl_kb.kb.protocol import Protocol
from masrl_kb.kb.rounds import Round, load_rounds
from masrl_kb.query.claims import evaluate_claims
from masrl_kb.query.frames import crosstab, pool_as_of
from masrl_kb.site import urls
from masrl_kb.site.components import Page, paper_list
from masrl_kb.site.context import Context, all_crosses
from masrl_kb.site.html import esc
from masrl_kb.site.prisma import Flow, flow_svg
from masrl_kb.site.protocol_pages import PROTOCOL, ROUNDS, site_protocol

SINCE_SURVEY = "since-survey/"


def _baseline(ctx: Context, protocol: Protocol) -> tuple[pd.DataFrame, pd.DataFrame]:
    return pool_as_of(ctx.papers, ctx.exclusions, protocol.baseline)


def _reasons(ctx: Context, rounds: list[Round]) -> list[tuple[str, int]]:
    totals: dict[str, int] = {}
    for rnd in rounds:
        for code, n in rnd.reasons().items():
            totals[code] = totals.get(code, 0) + n
    axis = ctx.tax["exclusion_reason"]
    return [(axis.label_of(c), totals[c]) for c in axis.ids if c in totals]


def round_flow(ctx: Context, rounds: list[Round], previous: int, title: str) -> Flow:
    """The flow of one or more rounds, starting from ``previous`` pooled studies."""
    families = sorted({f for r in rounds for f in r.families})
    return Flow(
        title=title,
        previous=previous,
        identified=sum(r.counts["retrieved"] for r in rounds),
        source_note=f"{len(families)} query families",
        duplicates=sum(r.counts["duplicates_removed"] for r in rounds),
        outside_window=sum(r.counts["outside_window"] for r in rounds),
        screened=sum(r.counts["to_screen"] for r in rounds),
        excluded=sum(r.excluded for r in rounds),
        reasons=_reasons(ctx, rounds),
        awaiting=sum(r.awaiting for r in rounds),
        included=sum(r.included for r in rounds),
    )


def _records_of(rnd: Round, decision: str) -> list[str]:
    return sorted(d["record"] for d in rnd.decided.values() if d["decision"] == decision)


def _new_in_round(page: Page, ctx: Context, rnd: Round) -> list[str]:
    keys = [r.split("/")[-1].removesuffix(".yaml") for r in _records_of(rnd, "include")]
    ready = [k for k in keys if k in ctx.rows]
    unfinished = [k for k in keys if k not in ctx.rows]
    parts = [f"<h3>Included ({len(keys)})</h3>", paper_list(page, ctx, ready)]
    if unfinished:
        parts.append(
            '<p class="kb-dim">Records still being tagged: '
            + ", ".join(f"<code>{esc(k)}</code>" for k in unfinished)
            + "</p>"
        )
    ids = [r.split("/")[-1].removesuffix(".yaml") for r in _records_of(rnd, "exclude")]
    items = []
    for eid in ids:
        title = ctx.exclusions.at[eid, "title"] if eid in ctx.exclusions.index else ""
        items.append(f"<li>{page.link(urls.EXCLUSIONS + '#' + eid, eid)} {esc(title)}</li>")
    parts.append(f"<h3>Excluded ({len(ids)})</h3>")
    parts.append(f"<ul>{''.join(items)}</ul>" if items else '<p class="kb-dim">None.</p>')
    return parts


def _rounds_table(rounds: list[Round]) -> str:
    head = (
        "Round",
        "Window",
        "Retrieved",
        "Duplicates",
        "Screened",
        "Included",
        "Excluded",
        "Awaiting",
    )
    rows = "".join(
        f'<tr data-round="{esc(r.id)}"><td><a href="#r-{esc(r.id)}">{esc(r.id)}</a></td>'
        f"<td>{r.since.isoformat()} to {r.until.isoformat()}</td>"
        + "".join(
            f'<td class="kb-num">{n}</td>'
            for n in (
                r.counts["retrieved"],
                r.counts["duplicates_removed"],
                r.counts["to_screen"],
                r.included,
                r.excluded,
                r.awaiting,
            )
        )
        + "</tr>"
        for r in reversed(rounds)
    )
    th = "".join(f"<th>{h}</th>" for h in head)
    return (
        f'<div class="kb-scroll"><table class="kb-table kb-rounds"><thead><tr>{th}</tr>'
        f"</thead><tbody>{rows}</tbody></table></div>"
    )


def rounds_page(ctx: Context) -> Page:
    protocol = site_protocol(ctx)
    rounds = load_rounds(ctx.root)
    base_papers, _ = _baseline(ctx, protocol)
    page = Page(ROUNDS, "Screening rounds")
    page.add(
        "# Screening rounds",
        "<p>Since the survey's cut-off on "
        f"{esc(protocol.baseline.isoformat())}, the knowledge base is a living review: each "
        f"round runs the {page.link(PROTOCOL, 'protocol')}'s query families against arXiv "
        "for a window of submission dates, removes duplicates, and records every screening "
        "decision. The diagrams follow the PRISMA 2020 flow for updated reviews. See also "
        f"{page.link(SINCE_SURVEY, 'what changed since the survey')}.</p>",
    )
    if not rounds:
        page.add('<p class="kb-dim">No screening round has been recorded yet.</p>')
        return page
    page.add(
        "## All rounds together",
        flow_svg(round_flow(ctx, rounds, len(base_papers), "Screening flow, all rounds")),
        _rounds_table(rounds),
    )
    previous = len(base_papers)
    sections = []
    for rnd in rounds:
        flow = round_flow(ctx, [rnd], previous, f"Screening flow, round {rnd.id}")
        sections.append(
            [
                f"## Round {esc(rnd.id)} {{#r-{rnd.id}}}",
                f"<p>Papers submitted from {rnd.since.isoformat()} to {rnd.until.isoformat()}, "
                f"searched on {rnd.run_on.isoformat()}.</p>",
                flow_svg(flow),
                *_new_in_round(page, ctx, rnd),
            ]
        )
        previous = flow.total
    for parts in reversed(sections):  # newest round first
        page.add(*parts)
    in_rounds = {
        d["record"] for r in rounds for d in r.decided.values() if d["decision"] == "include"
    }
    later = ctx.papers[ctx.papers["added"] > pd.Timestamp(protocol.baseline)]
    by_hand = [k for k in later.index if f"papers/{k}.yaml" not in in_rounds]
    page.add(
        "## Added outside screening rounds",
        "<p>Papers added after the baseline with <code>masrl-kb add</code> rather than "
        "through a round.</p>",
        paper_list(page, ctx, by_hand),
    )
    return page


# ---------------------------------------------------------------- since the survey


def _changed_cells(page: Page, ctx: Context, base_papers: pd.DataFrame) -> list[str]:
    parts = []
    for cross in all_crosses():
        after = ctx.tables[cross]
        before = crosstab(cross.rows, cross.cols, strict=cross.strict, papers=base_papers)
        before = before.reindex(index=after.index, columns=after.columns, fill_value=0)
        rows = []
        for rv in after.index:
            for cv in after.columns:
                old, new = int(before.at[rv, cv]), int(after.at[rv, cv])
                if old == new:
                    continue
                label = (
                    f"{urls.value_label(ctx, cross.rows, rv)} × "
                    f"{urls.value_label(ctx, cross.cols, cv)}"
                )
                cell = page.link(urls.cell(cross, rv, cv), label)
                rows.append(
                    f'<tr data-cell="{esc(cross.slug)}"><td>{cell}</td>'
                    f'<td class="kb-num">{old}</td><td class="kb-num">{new}</td>'
                    f'<td class="kb-num">{new - old:+d}</td></tr>'
                )
        if rows:
            parts.append(
                f"<h3>{esc(urls.cross_title(ctx, cross))}</h3>"
                '<div class="kb-scroll"><table class="kb-table kb-changed"><thead><tr>'
                "<th>Cell</th><th>Baseline</th><th>Now</th><th>Change</th></tr></thead>"
                f"<tbody>{''.join(rows)}</tbody></table></div>"
            )
    return parts or ['<p class="kb-dim" data-kb-unchanged="cells">No cell has changed.</p>']


def _moved_claims(ctx: Context, base_papers, base_exclusions) -> list[str]:
    if ctx.claims is None:
        return ['<p class="kb-dim">This data root has no claims file.</p>']
    before = {
        r.claim.id: r
        for r in evaluate_claims(
            [r.claim for r in ctx.claims], papers=base_papers, exclusions=base_exclusions
        )
    }
    rows = []
    for now in ctx.claims:
        old = before[now.claim.id]
        if old.value == now.value:
            continue
        rows.append(
            f'<tr data-claim="{esc(now.claim.id)}"><td><code>{esc(now.claim.id)}</code></td>'
            f'<td>{esc(now.claim.statement)}</td><td class="kb-num">{old.value}</td>'
            f'<td class="kb-num">{now.value}</td>'
            f"<td>{'holds' if now.holds else 'no longer holds'}</td></tr>"
        )
    if not rows:
        return ['<p class="kb-dim" data-kb-unchanged="claims">No claim\'s value has moved.</p>']
    return [
        '<div class="kb-scroll"><table class="kb-table kb-moved"><thead><tr><th>Claim</th>'
        "<th>Statement</th><th>Baseline</th><th>Now</th><th>Status</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    ]


def since_survey_page(ctx: Context) -> Page:
    protocol = site_protocol(ctx)
    base_papers, base_exclusions = _baseline(ctx, protocol)
    page = Page(SINCE_SURVEY, "Since the survey")
    page.add(
        "# Since the survey",
        f"<p>The baseline is the pool as it stood on {esc(protocol.baseline.isoformat())}, "
        f'the survey\'s cut-off: <span data-kb-stat="baseline-papers">{len(base_papers)}'
        f"</span> papers and {len(base_exclusions)} exclusions. Now: "
        f'<span data-kb-stat="current-papers">{len(ctx.papers)}</span> papers and '
        f"{len(ctx.exclusions)} exclusions ({page.link(ROUNDS, 'screening rounds')}).</p>",
        "## Cross-tab cells that changed",
        *_changed_cells(page, ctx, base_papers),
        "## Claims whose value moved",
        *_moved_claims(ctx, base_papers, base_exclusions),
    )
    return page
