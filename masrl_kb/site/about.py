"""Downloads, how to contribute, how to cite, and the trace format."""

from __future__ import annotations

import datetime as dt
import re

import yaml
from markupsafe import Markup

from masrl_kb.contrib.export import tables
from masrl_kb.kb.fields import DERIVED, EXCLUSION_FIELDS, PAPER_FIELDS
from masrl_kb.kb.text import capped_list
from masrl_kb.site import lists, urls
from masrl_kb.site.build import source_file
from masrl_kb.site.components import Page
from masrl_kb.site.context import SURVEY, Context
from masrl_kb.site.diagrams import trace_diagram
from masrl_kb.site.judgement_pages import results_csv
from masrl_kb.traces.render import DIAGRAM_EXAMPLE, load_examples, trace_page_markdown
from masrl_kb.traces.trace_schema import SCHEMA_PATH

MERMAID_FENCE = re.compile(r"^```mermaid\n.*?\n```$", re.S | re.M)


def download_files(ctx: Context) -> dict[str, str]:
    """The data files written into the site, by site path."""
    exclusions = tables.exclusions_records(ctx.exclusions)
    papers = tables.papers_records(ctx.papers)
    return {
        "downloads/papers.csv": tables.records_csv(papers),
        # One record a line: a third smaller than indented, and still diffs by record.
        "downloads/papers.json": tables.records_json(papers, compact=True),
        "downloads/papers.bib": ctx.bibtex,
        "downloads/exclusions.csv": tables.records_csv(exclusions),
        "downloads/exclusions.json": tables.records_json(exclusions, compact=True),
        "downloads/results.csv": results_csv(ctx, ctx.boards),
    }


def derived_fields(ctx: Context) -> list[tuple[str, str]]:
    """(column, meaning) of every derived column, the values of its axis from the taxonomy."""
    decisions = ctx.tax["decision"].ids
    rows = []
    for d in DERIVED:
        names = d.names(decisions)
        name = names[0] if len(names) == 1 else f"{names[0]}..{names[-1]}"
        values = f" Values: {capped_list(ctx.tax[d.axis].ids)}." if d.axis else ""
        rows.append((name, f"{d.doc}{values}"))
    return rows


def downloads_page(ctx: Context, files: dict[str, str]) -> Page:
    page = Page(urls.DOWNLOADS, "Downloads")
    return page.show(
        "downloads.md",
        sizes={path: f"{len(text.encode('utf-8')) / 1024:.0f}" for path, text in files.items()},
        paper_fields=[(f.name, f.doc) for f in PAPER_FIELDS],
        derived_fields=derived_fields(ctx),
        exclusion_fields=[(f.name, f.doc) for f in EXCLUSION_FIELDS],
        list_columns=lists.COLUMNS,
    )


# A link from CONTRIBUTING.md to a hand-written page, as GitHub resolves it at the top of
# the clone: ](docs/codebook.md) or ](docs/codebook.md#anchor).
_DOCS_LINK = re.compile(r"\]\(docs/([A-Za-z0-9_-]+\.md(?:#[A-Za-z0-9_-]*)?)\)")


def site_links(text: str) -> str:
    """CONTRIBUTING.md's links into docs/ as the contribute page (one folder down) needs them."""
    return _DOCS_LINK.sub(r"](../\1)", text)


def contribute_page(ctx: Context) -> Page:
    """CONTRIBUTING.md as a page (trusted repository text, rendered as Markdown)."""
    source = source_file(ctx.root, "CONTRIBUTING.md")
    text = source.read_text(encoding="utf-8") if source else "# How to contribute\n"
    return Page(urls.CONTRIBUTE, "How to contribute", [site_links(text.strip())])


def _fence(text: str, lang: str) -> str:
    """A code fence longer than any backtick run in the text."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def _bib_key(entry: dict, fallback: str) -> str:
    """A key like zhang2026reinforcement: first author, year, first title word."""
    people = entry.get("authors") or [{}]
    family = str(people[0].get("family-names") or people[0].get("name") or fallback)
    year = str(entry.get("year") or entry.get("date-released") or "")[:4]
    word = next(iter(re.findall(r"[A-Za-z]+", str(entry.get("title", "")))), "")
    return re.sub(r"[^a-z0-9]", "", f"{family}{year}{word}".lower()) or fallback


def _bib(entry_type: str, key: str, entry: dict, **fields: object) -> str:
    """A BibTeX entry: the braced title and authors of a CFF entry, then ``fields``."""
    title = "{" + str(entry.get("title", "")) + "}"
    author = " and ".join(  # an entity's name braced whole
        "{" + str(p["name"]) + "}"
        if "name" in p
        else f"{p.get('family-names', '')}, {p.get('given-names', '')}".strip(", ")
        for p in entry.get("authors", [])
    )
    pairs = {"title": title, "author": author, **fields}
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in pairs.items() if value)
    return f"@{entry_type}{{{key},\n{body}\n}}"


def cff_doi(cff: dict) -> str | None:
    """The DOI a CITATION.cff names (``doi:``, else its first identifier of type doi)."""
    found = cff.get("doi") or next(
        (
            i.get("value")
            for i in cff.get("identifiers") or []
            if isinstance(i, dict) and i.get("type") == "doi"
        ),
        None,
    )
    return found if isinstance(found, str) and DOI.fullmatch(found) else None


DOI = re.compile(r"10\.\d{4,9}/[^\s{}\\]+")


def pool_note(version: object, coverage: dt.date | None, papers: int) -> str:
    """What a citation of the knowledge base names: the version and the pool's state."""
    covers = f"pool covers papers up to {coverage.isoformat()}" if coverage else "pool"
    return f"version {version}; {covers} ({papers} papers)"


def cff_bibtex(cff: dict, coverage: dt.date | None = None, papers: int | None = None) -> list[str]:
    """BibTeX for the knowledge base and for each reference of a CITATION.cff. With the
    pool's ``coverage`` date and its number of ``papers``, the knowledge base's entry
    names them in its note and its key (masrlkb-0.2.0-2026-09-04), so two states of the
    pool are never cited alike."""
    year = str(cff.get("date-released", ""))[:4]
    version = cff.get("version")
    key, note = "masrlkb", None
    if papers is not None:
        note = pool_note(version, coverage, papers)
        state = f"-{coverage.isoformat()}" if coverage else ""
        key = re.sub(r"[^A-Za-z0-9.-]", "", f"masrlkb-{version}{state}")
    kb = _bib(
        "misc",
        key,
        cff,
        year=year,
        version=version,
        doi=cff_doi(cff),
        url=cff.get("url"),
        note=note,
    )
    fields = ("journal", "year", "url")
    return [kb] + [
        _bib("article", _bib_key(ref, "survey"), ref, **{f: ref.get(f) for f in fields})
        for ref in cff.get("references", [])
    ]


def cite_page(ctx: Context) -> Page:
    page = Page(urls.CITE, "How to cite")
    source = source_file(ctx.root, "CITATION.cff")
    if source is None:
        return page.show("cite.md", name="CITATION.cff", cff=None)
    text = source.read_text(encoding="utf-8")
    cff = yaml.safe_load(text)
    released = cff.get("date-released")
    return page.show(
        "cite.md",
        ctx=ctx,
        cff=cff,
        doi=cff_doi(cff),
        note=pool_note(cff.get("version", ""), ctx.coverage, len(ctx.papers)),
        # The pool has grown past the release when it covers days after the release date.
        after=isinstance(released, dt.date) and ctx.coverage > released,
        arxiv_id=SURVEY["arxiv_id"],
        # Trusted repository text in Markdown code fences (Markdown escapes it).
        bibtex=Markup(
            _fence("\n\n".join(cff_bibtex(cff, ctx.coverage, len(ctx.papers))), "bibtex")
        ),
        source=Markup(_fence(text, "yaml")),
    )


def traces_page(ctx: Context) -> Page:
    """The orchestration-trace format page, written by ``masrl_kb.traces.render``."""
    if not (ctx.root / SCHEMA_PATH).is_file():  # a bare data root carries no trace format
        page = Page(urls.TRACES, "Orchestration traces", ["# Orchestration traces"])
        return page.show("missing.md", name=SCHEMA_PATH.as_posix())
    examples = load_examples(ctx.root)
    name = DIAGRAM_EXAMPLE if DIAGRAM_EXAMPLE in examples else next(iter(examples))
    # The trace module writes the page with a Mermaid diagram; the site draws the same
    # trace as inline SVG so the page needs no script from another host.
    markdown = trace_page_markdown(ctx.tax, ctx.root)
    text = MERMAID_FENCE.sub(lambda _: trace_diagram(examples[name]), markdown)
    return Page(urls.TRACES, "Orchestration traces", [text.strip()])
