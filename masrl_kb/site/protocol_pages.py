"""The protocol page: the survey's sources, query families, inclusion rules and
exclusion codes, rendered from ``protocol.yaml`` and ``taxonomy.yaml``."""

from __future__ import annotations

from pathlib import Path

from masrl_kb.kb.protocol import PROTOCOL_FILE, Protocol, load_protocol
from masrl_kb.site.components import Page
from masrl_kb.site.context import CLONE, Context
from masrl_kb.site.html import esc

PROTOCOL = "protocol/"
ROUNDS = "rounds/"


def protocol_root(ctx: Context) -> Path:
    """The data root whose protocol.yaml the site shows (the clone's for a bare root)."""
    return ctx.root if (ctx.root / PROTOCOL_FILE).is_file() else CLONE


def site_protocol(ctx: Context) -> Protocol:
    return load_protocol(protocol_root(ctx))


def _table(head: tuple[str, ...], rows: list[list[str]], cls: str = "") -> str:
    th = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return (
        f'<div class="kb-scroll"><table class="kb-table {cls}"><thead><tr>{th}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _families(protocol: Protocol) -> str:
    rows = [
        [
            f'<span id="f-{esc(f.id)}">{esc(f.label)}</span><br><code>{esc(f.id)}</code>',
            ", ".join(f"<code>{esc(t)}</code>" for t in f.terms),
        ]
        for f in protocol.families
    ]
    return _table(("Family", "Terms (any, in title or abstract)"), rows, "kb-protocol-families")


def _axis_rows(ctx: Context, axis: str) -> list[list[str]]:
    return [
        [f'<code id="{esc(axis)}-{esc(v.id)}">{esc(v.id)}</code>', esc(v.label), esc(v.definition)]
        for v in ctx.tax[axis].values
    ]


def protocol_page(ctx: Context) -> Page:
    protocol = site_protocol(ctx)
    page = Page(PROTOCOL, "Search and screening protocol")
    sources = [
        [
            esc(s.label),
            f"<code>{esc(s.id)}</code>",
            "by <code>masrl-kb screen run</code>"
            if s.automated
            else "by hand (<code>masrl-kb exclude</code>)",
        ]
        for s in protocol.sources
    ]
    rules = [
        [f'<code id="{esc(r.id)}">{esc(r.id)}</code>', esc(r.label), esc(r.rule)]
        for r in protocol.inclusion_rules
    ]
    page.add(
        "# Search and screening protocol",
        f"<p>The protocol of the survey <em>{esc(protocol.survey_title)}</em> "
        f"(arXiv {esc(protocol.survey_arxiv_id)}), kept as data in <code>protocol.yaml</code>. "
        f"Its pool stops on {esc(protocol.baseline.isoformat())}, the baseline of this living "
        f"review; each {page.link(ROUNDS, 'screening round')} since then runs the same query "
        "families again.</p>",
        "## Sources",
        _table(("Source", "Id", "Searched"), sources),
        "## Query families",
        f"<p>{len(protocol.families)} families. A family matches an arXiv entry when any of "
        "its terms occurs in the title or the abstract.</p>",
        _families(protocol),
        "## Inclusion rules",
        "<p>A record enters the pool when at least one rule holds.</p>",
        _table(("Id", "Rule", "What it asks"), rules, "kb-protocol-rules"),
        "## Exclusion reasons",
        "<p>Every exclusion record names one reason code and the screening stage that "
        "excluded it.</p>",
        _table(
            ("Code", "Reason", "Definition"),
            _axis_rows(ctx, protocol.reason_axis),
            "kb-protocol-reasons",
        ),
        "## Screening stages",
        _table(("Code", "Stage", "Definition"), _axis_rows(ctx, protocol.stage_axis)),
        "## Duplicates and ranking",
        "<p>A new arXiv entry duplicates a record when it has the same arXiv id (whatever "
        "its version suffix) or when both titles, lower-cased and stripped of accents, "
        "punctuation and spacing, reach a rapidfuzz similarity of "
        f"<strong>{protocol.title_similarity:g}</strong> out of 100. Candidates are ranked by "
        "the TF-IDF cosine similarity of their title and abstract to the most similar pooled "
        f"paper's title and summary, plus <strong>{protocol.family_weight:g}</strong> for each "
        "query family that found them.</p>",
    )
    return page
