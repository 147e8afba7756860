"""Everything a build needs, loaded once: records, taxonomy, claims, cross-tabs."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import cast

import pandas as pd

from masrl_kb.contrib.export.bibtex import to_bibtex
from masrl_kb.kb import cache
from masrl_kb.kb.paths import CLONE, find_root
from masrl_kb.kb.protocol import PROTOCOL_FILE, Protocol, load_protocol
from masrl_kb.kb.readings import Reader
from masrl_kb.kb.rounds import Round, load_rounds
from masrl_kb.kb.rules import CROSSTAB_PAIRS
from masrl_kb.kb.taxonomy import Taxonomy, load_taxonomy
from masrl_kb.query import agreement, axes, evaluation_table, pool, values, views
from masrl_kb.query.authors import authors as author_rows
from masrl_kb.query.claims import CLAIMS_FILE, ClaimResult, evaluate_claims
from masrl_kb.query.coverage import covered_until

# The survey this knowledge base curates (facts about the source, not counts).
SURVEY = {
    "title": "Reinforcement Learning for LLM-based Multi-Agent Systems "
    "through Orchestration Traces",
    "author": "Chenchen Zhang",
    "arxiv_id": "2605.02801",
    "cutoff": "2026-05-04",
}
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

# Every cross-tab page, broad ones first within each pair.
ALL_CROSSES = tuple(c for pair in CROSSTABS for c in pair if c is not None)


# Each variant's broad cross-tab and its reading (strict or learned), and each cross-tab's
# other reading (its twin).
BROAD = {variant: broad for broad, variant in CROSSTABS if variant is not None}
READING = {variant: "strict" if variant.strict else "learned" for variant in BROAD}
TWINS = {broad: variant for broad, variant in CROSSTABS} | BROAD


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
    # Each paper's fields as a plain dict, by key (pandas row access is slow in loops).
    rows: dict[str, dict] = field(default_factory=dict)
    # Per cross-tab and side ("rows"/"cols"): each paper's positions along that axis
    # (strict tables count strict papers only). Computed once; gaps and totals reuse it.
    spots: dict[tuple[Cross, str], dict[str, list[int]]] = field(default_factory=dict)
    repo_url: str = ""
    # Records left out of a preview build (masrl-kb build --preview); empty otherwise.
    drafts: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=pool.DRAFT_COLUMNS))
    preview: bool = False
    # Values several pages share (a cell's label and count), computed on first use.
    memo: dict[tuple[object, ...], dict] = field(default_factory=dict)
    # The named lists of papers the pages link to (masrl_kb.site.lists), filled while the
    # pages render; each becomes downloads/lists/<name>.csv.
    lists: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @cached_property
    def readers(self) -> list[Reader]:
        """The readers under readings/, read and checked once per build."""
        return agreement.reader_list(self.root)

    @cached_property
    def readings(self) -> pd.DataFrame:
        """Every independent reading (reader, key, axis, value), loaded once per build."""
        return agreement.readers_table(self.papers, self.readers)

    @cached_property
    def codings(self) -> dict[str, dict[str, dict[str, object]]]:
        """Each paper's codings, reader -> axis -> value (the kb's included), from
        :attr:`readings` in one pass: a paper page reads its own without a pandas pivot."""
        by_key: dict[str, dict[str, dict[str, object]]] = defaultdict(dict)
        table = self.readings
        columns = (table[c] for c in ("reader", "key", "axis", "value"))
        for reader, key, axis, value in zip(*columns, strict=True):
            by_key[key].setdefault(reader, {})[axis] = value
        return dict(by_key)

    @cached_property
    def authors(self) -> pd.DataFrame:
        """One row per (author, paper), spellings joined into people (C-AUT-2), once."""
        return author_rows(self.papers)

    @cached_property
    def evaluations(self) -> pd.DataFrame:
        """One row per (paper, benchmark), computed once per build."""
        return evaluation_table.evaluations(self.papers, self.root)

    @cached_property
    def results(self) -> pd.DataFrame:
        """One row per reported value (:func:`masrl_kb.query.evaluation_table.results`)."""
        return evaluation_table.results(self.papers, self.root)

    @cached_property
    def boards(self) -> pd.DataFrame:
        """:attr:`results` with each value's date, setting kind, group and rank on its
        benchmark (:func:`masrl_kb.query.values.boards`)."""
        return values.boards(self.results, self.evaluations, self.papers)

    @cached_property
    def with_results(self) -> frozenset[str]:
        """The papers that report at least one value (a row of :attr:`results`)."""
        return frozenset(map(str, self.results["key"]))

    @cached_property
    def evaluations_by_paper(self) -> dict[str, list[dict]]:
        """Each paper's rows of :attr:`evaluations`, grouped in one pass."""
        grouped: dict[str, list[dict]] = defaultdict(list)
        for row in self.evaluations.to_dict("records"):
            grouped[row["key"]].append(row)
        return dict(grouped)

    @cached_property
    def bibtex(self) -> str:
        """BibTeX of the whole pool, kept in the per-user cache (LaTeX-encoding is costly),
        keyed by the pool's files and the papers this build shows."""
        shown = hashlib.blake2b("\n".join(map(str, self.papers.index)).encode()).hexdigest()
        salt = f"bibtex {shown}"
        key = cache.pool_fingerprint(self.root, salt)
        kept = cache.load(f"bibtex-{key}", self.root) if key is not None else None
        if isinstance(kept, str):
            return kept
        text = to_bibtex(self.papers)
        again = lambda: cache.pool_fingerprint(self.root, salt)  # noqa: E731
        cache.store_if_unchanged("bibtex", key, text, again, self.root)
        return text

    @cached_property
    def bibtex_entries(self) -> dict[str, str]:
        """Each paper's entry cut from :attr:`bibtex`, by record key."""
        by_cite = {}
        for entry in re.split(r"\n(?=@)", self.bibtex):
            found = re.match(r"@\w+\{([^,\s]+),", entry)
            if found:
                by_cite[found.group(1)] = entry.strip() + "\n"
        return {
            key: by_cite.get(str(row["bibtex_key"]), "")
            for key, row in zip(self.papers.index, self.rows.values(), strict=True)
        }

    @cached_property
    def protocol(self) -> Protocol:
        """The data root's protocol.yaml (the clone's for a bare data root), read once."""
        return load_protocol(self.root if (self.root / PROTOCOL_FILE).is_file() else CLONE)

    @cached_property
    def coverage(self) -> dt.date:
        """The date the live pool covers (:func:`masrl_kb.query.views.pool_coverage`)."""
        baseline = self.protocol.baseline  # the survey's cut-off
        return covered_until(self.rounds, baseline, decided=True) or baseline  # never None

    @cached_property
    def searched(self) -> dt.date:
        """The day the searches reached, decided or not (on or after ``coverage``)."""
        baseline = self.protocol.baseline  # pool_searched(), of the rounds read once
        return covered_until(self.rounds, baseline, decided=False) or baseline

    @cached_property
    def awaiting(self) -> int:
        """Candidates of every round still awaiting a decision."""
        return sum(r.awaiting for r in self.rounds)

    @cached_property
    def rounds(self) -> list[Round]:
        """Every screening round, read once per build (the rounds page, What's new, the
        coverage date and the candidates awaiting all use them)."""
        return load_rounds(self.root)

    @cached_property
    def survey(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Papers and exclusions in the survey's view (as of the baseline)."""
        return views.survey_view(self.papers, self.exclusions, self.root, self.protocol.baseline)

    @cached_property
    def claim_views(self) -> list | None:
        """Each claim in the survey's view and today's (None without claims.yaml)."""
        if self.claims is None:
            return None
        claims = [r.claim for r in self.claims]
        return views.claim_views(
            claims, self.papers, self.exclusions, self.root, self.protocol.baseline
        )


def load_context(
    root: str | os.PathLike[str] | None = None, site_url: str = "", drafts: str = "error"
) -> Context:
    """Load records, taxonomy and claims once and compute every cross-tab. ``drafts=
    "exclude"`` (preview) lists records with ``TODO`` fields in ``ctx.drafts``."""
    root_path = find_root(root)
    papers, exclusions = pool.load_pool(root_path, drafts=drafts)
    claims = None
    if (root_path / CLAIMS_FILE).is_file():  # a bare data root may carry no claims
        claims = evaluate_claims(papers=papers, exclusions=exclusions, root=root_path)
    ctx = Context(root_path, load_taxonomy(root_path), papers, exclusions, claims, site_url)
    if drafts == "exclude":
        ctx.preview, ctx.drafts = True, pool.load_drafts(root_path)
    ctx.rows = {str(key): row for key, row in papers.to_dict("index").items()}
    _fill_cells(ctx)
    return ctx


def count_at(table: pd.DataFrame, row: object, col: object) -> int:
    """One count of a cross-tab (pandas types a cell as any scalar; these are ints)."""
    return int(cast(int, table.at[row, col]))


def _fill_cells(ctx: Context) -> None:
    """Counts per cross-tab, the papers of each non-empty cell and each paper's spots;
    each cell is an AND of two masks of the query API's ``axis_mask``."""
    by_paper: dict[str, list] = defaultdict(list)
    keys = ctx.papers.index.to_numpy()
    strict = ctx.papers["credit_strict"].to_numpy(dtype=bool)
    for cross in ALL_CROSSES:
        table = axes.crosstab(cross.rows, cross.cols, strict=cross.strict, papers=ctx.papers)
        ctx.tables[cross] = table
        masks = {}
        for side, axis in (("rows", cross.rows), ("cols", cross.cols)):
            values = axes.axis_values(axis, ctx.papers)
            masks[side] = [axes.axis_mask(ctx.papers, axis, v).to_numpy(dtype=bool) for v in values]
            if cross.strict:
                masks[side] = [m & strict for m in masks[side]]
            spots: dict[str, list[int]] = defaultdict(list)
            for position, mask in enumerate(masks[side]):
                for key in keys[mask]:
                    spots[key].append(position)
            ctx.spots[(cross, side)] = dict(spots)
        for r_i, rv in enumerate(table.index):
            for c_i, cv in enumerate(table.columns):
                if table.iat[r_i, c_i] == 0:
                    continue
                members = [str(k) for k in keys[masks["rows"][r_i] & masks["cols"][c_i]]]
                ctx.cells[(cross, rv, cv)] = members
                for key in members:
                    by_paper[key].append((cross, rv, cv))
    ctx.paper_cells = dict(by_paper)
