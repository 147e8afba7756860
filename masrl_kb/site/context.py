"""Everything a build needs, loaded once: records, taxonomy, claims, cross-tabs."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from masrl_kb.kb.paths import find_root
from masrl_kb.kb.rules import CROSSTAB_PAIRS
from masrl_kb.kb.taxonomy import Taxonomy, load_taxonomy
from masrl_kb.query.claims import CLAIMS_FILE, ClaimResult, evaluate_claims
from masrl_kb.query.frames import cell_papers, crosstab, load_pool

# The survey this knowledge base curates (facts about the source, not counts).
SURVEY = {
    "title": "Reinforcement Learning for LLM-based Multi-Agent Systems "
    "through Orchestration Traces",
    "author": "Chenchen Zhang",
    "arxiv_id": "2605.02801",
    "cutoff": "2026-05-04",
}
# The package's own clone: fallback for files a bare data root lacks.
CLONE = Path(__file__).resolve().parents[2]
# The axes that get a taxonomy page, in tab order.
TAXONOMY_AXES = ("reward_family", "credit_unit", "decision", "topology", "category", "scenario")


@dataclass(frozen=True)
class Cross:
    """One cross-tab: two axes and the reading (strict credit or broad)."""

    rows: str
    cols: str
    strict: bool = False

    @property
    def slug(self) -> str:
        return f"{self.rows}-x-{self.cols}" + ("-strict" if self.strict else "")


# Pairs of (broad, variant): credit tables get a strict twin, decision
# tables a learned twin (rows = decision_learned).
CROSSTABS: tuple[tuple[Cross, Cross | None], ...] = tuple(
    (Cross(*broad), Cross(*variant) if variant else None) for broad, variant in CROSSTAB_PAIRS
)


def all_crosses() -> list[Cross]:
    """Every cross-tab page, broad ones first within each pair."""
    return [c for pair in CROSSTABS for c in pair if c is not None]


@dataclass
class Context:
    """The loaded data of one build plus the derived cross-tabs."""

    root: Path
    tax: Taxonomy
    papers: pd.DataFrame
    exclusions: pd.DataFrame
    claims: list[ClaimResult] | None
    site_url: str = ""
    tables: dict[Cross, pd.DataFrame] = field(default_factory=dict)
    cells: dict[tuple[Cross, object, object], list[str]] = field(default_factory=dict)
    paper_cells: dict[str, list[tuple[Cross, object, object]]] = field(default_factory=dict)
    rows: dict[str, dict] = field(default_factory=dict)

    def row(self, key: str) -> dict:
        """One paper's fields as a plain dict (pandas row access is slow in loops)."""
        return self.rows[key]

    def source_file(self, name: str) -> Path | None:
        """A repository file from the data root, else from the package clone."""
        for folder in (self.root, CLONE):
            if (folder / name).is_file():
                return folder / name
        return None


def load_context(root: object = None, site_url: str = "") -> Context:
    """Load records, taxonomy and claims once and compute every cross-tab."""
    root_path = find_root(root)
    papers, exclusions = load_pool(root_path)
    claims = None
    if (root_path / CLAIMS_FILE).is_file():  # a bare data root may carry no claims
        claims = evaluate_claims(papers=papers, exclusions=exclusions, root=root_path)
    ctx = Context(root_path, load_taxonomy(root_path), papers, exclusions, claims, site_url)
    ctx.rows = papers.to_dict("index")
    _fill_cells(ctx)
    return ctx


def _fill_cells(ctx: Context) -> None:
    """Counts per cross-tab and the papers of each non-empty cell."""
    by_paper: dict[str, list] = defaultdict(list)
    for cross in all_crosses():
        table = crosstab(cross.rows, cross.cols, strict=cross.strict, papers=ctx.papers)
        ctx.tables[cross] = table
        for rv in table.index:
            for cv in table.columns:
                if table.at[rv, cv] == 0:
                    continue
                keys = list(
                    cell_papers(
                        cross.rows, rv, cross.cols, cv, strict=cross.strict, papers=ctx.papers
                    ).index
                )
                ctx.cells[(cross, rv, cv)] = keys
                for key in keys:
                    by_paper[key].append((cross, rv, cv))
    ctx.paper_cells = dict(by_paper)
