"""Two views of the pool: the survey's (as of ``protocol.yaml``'s ``survey.baseline``,
where ``claims.yaml``'s expected values are checked) and today's (the live pool).

>>> papers, exclusions = load_pool()
>>> survey_papers, survey_exclusions = survey_view(papers, exclusions)
>>> pool_coverage()                        # the date the live pool covers
>>> pool_searched()                        # the day its searches reached, decided or not
>>> new_papers(papers)                      # added after the baseline: round, posted before/after
>>> moved_cells(papers)                     # cross-tab cells whose count differs
>>> [v for v in claim_views() if v.moved]   # claims whose value differs
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, cast

import numpy as np
import pandas as pd

from masrl_kb.kb.model.types import ARXIV_RE
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.protocol import protocol_baseline
from masrl_kb.kb.rounds import Round, load_rounds
from masrl_kb.kb.rules import crosstab_list
from masrl_kb.query.args import checked
from masrl_kb.query.axes import axis_mask, crosstab
from masrl_kb.query.claim_model import Claim
from masrl_kb.query.claims import ClaimResult, evaluate_claims, load_claims
from masrl_kb.query.lang import select_rows
from masrl_kb.query.pool import Frames, PathLike, load_pool, pool_as_of

NEW_PAPER_COLUMNS = ["title", "added", "round", "posted", "url"]
MOVED_CELL_COLUMNS = "rows row_value cols col_value strict survey today change papers".split()


@checked()
def survey_baseline(root: PathLike = None) -> dt.date | None:
    """The survey's cut-off (``protocol.yaml`` ``survey.baseline``); None for a data
    root without a protocol (a bare root has no survey to compare with)."""
    return protocol_baseline(root)


def _baseline(root: PathLike, baseline: dt.date | None) -> dt.date | None:
    return survey_baseline(root) if baseline is None else baseline


@checked()
def pool_coverage(root: PathLike = None, baseline: dt.date | None = None) -> dt.date | None:
    """The date the live pool covers: the last day of the unbroken run of screening
    rounds from the baseline on that every source searched reached and whose candidates
    are all decided (:func:`masrl_kb.query.coverage.covered_until`); the latest round's
    end without a baseline; None when there is neither. :func:`pool_searched` is the
    day the searches reached, decided or not."""
    return _covered(root, baseline, decided=True)


@checked()
def pool_searched(root: PathLike = None, baseline: dt.date | None = None) -> dt.date | None:
    """The last day of the unbroken run of rounds every source searched reached, whether
    or not their candidates are decided yet (on or after :func:`pool_coverage`)."""
    return _covered(root, baseline, decided=False)


def _covered(root: PathLike, baseline: dt.date | None, decided: bool) -> dt.date | None:
    from masrl_kb.query.coverage import covered_until

    base = find_root(root)
    day = _baseline(base, baseline)
    rounds = load_rounds(base)
    if day is None:
        return max((r.until for r in rounds), default=None)
    return covered_until(rounds, day, decided=decided)


@checked(papers=("added",), exclusions=("screened",))
def survey_view(
    papers: pd.DataFrame | None = None,
    exclusions: pd.DataFrame | None = None,
    root: PathLike = None,
    baseline: dt.date | None = None,
) -> Frames:
    """``(papers, exclusions)`` as they stood on the survey's baseline (if there is one)."""
    if (papers is None or exclusions is None) and baseline is None:
        root = find_root(root)  # once, for both files read below
    if papers is None or exclusions is None:
        papers, exclusions = load_pool(root)
    day = _baseline(root, baseline)
    if day is None:
        return papers, exclusions
    then, logged = pool_as_of(papers, exclusions, day)
    return with_view_reading(then, root), logged


# A decision's or the strict reading's companions: coded with it, or empty with it.
_COMPANIONS: dict[str, tuple[str, ...]] = {
    f"O{n}": (f"O{n}_mechanism", f"O{n}_source") for n in range(1, 6)
}
_COMPANIONS["credit_strict"] = ("credit_mechanism",)


def with_view_reading(papers: pd.DataFrame, root: PathLike = None) -> pd.DataFrame:
    """``papers`` with the codings of the survey's view reading (the reader under
    readings/ marked ``view: survey``) in place of the records' own, for the papers it
    reads: the records carry today's reading under the codebook, the survey's claims were
    checked against the codings of the view reading. Unchanged when there is none."""
    from masrl_kb.kb.readings import READING_FIELDS, load_readers

    base = find_root(root)
    # the keys are not checked against this (possibly dated) frame: validate checks them all
    reader = next((r for r in load_readers(None, base) if r.view == "survey"), None)
    if reader is None:
        return papers
    out = papers.copy()
    for key, coded in reader.readings.items():
        if key not in out.index:
            continue
        for name in READING_FIELDS:
            if name in coded:
                out.at[key, name] = cast(Any, coded[name])
        for lead, companions in _COMPANIONS.items():
            for name in companions if lead in coded else ():
                out.at[key, name] = cast(Any, coded.get(name, np.nan))
    return out


@checked(papers=("added",))
def new_papers(
    papers: pd.DataFrame | None = None, root: PathLike = None, baseline: dt.date | None = None
) -> pd.DataFrame:
    """Papers added after the baseline, newest first, with the round that brought each
    in (None: added by hand) and whether it was ``posted`` after the baseline or before it
    and found late (None: not known). Empty without a baseline."""
    base = find_root(root)
    papers = load_pool(base)[0] if papers is None else papers
    return papers_added_since(papers, load_rounds(base), _baseline(base, baseline))


def posted_side(
    window: tuple[dt.date, dt.date] | None, arxiv_id: object, day: dt.date
) -> str | None:
    """``after`` the baseline ``day`` or ``before`` it: from the window of the round that
    brought the paper in (screening keeps a candidate only inside its round's window),
    else from the arXiv id's month; None when neither tells (a window or month that
    spans the day, or no id)."""
    if window is not None:
        since, until = window
        if since >= day:
            return "after"
        if until < day:
            return "before"
    text = arxiv_id if isinstance(arxiv_id, str) else ""
    if not ARXIV_RE.match(text) or not text[:4].isdigit():
        return None
    month, cut = (int(text[:2]), int(text[2:4])), (day.year % 100, day.month)
    return "after" if month > cut else "before" if month < cut else None


def papers_added_since(
    papers: pd.DataFrame, rounds: list[Round], day: dt.date | None
) -> pd.DataFrame:
    """:func:`new_papers` of rounds already loaded (a site build loads them once) and the
    baseline ``day``."""
    later = papers.iloc[:0] if day is None else papers[papers["added"] > pd.Timestamp(day)]
    brought = {  # paper key -> the round whose decisions brought it in (the first one)
        PurePosixPath(d["record"]).stem: rnd.id
        for rnd in reversed(rounds)
        for d in rnd.decided.values()
        if d["decision"] == "include"
    }
    frame = later[["title", "added", "url"]].copy()
    # object dtype: a paper added by hand has None, not a missing-string NaN
    frame["round"] = pd.Series(
        [brought.get(k) for k in frame.index], index=frame.index, dtype=object
    )
    windows = {rnd.id: (rnd.since, rnd.until) for rnd in rounds}
    frame["posted"] = pd.Series(
        [
            posted_side(windows.get(r) if r else None, a, cast(dt.date, day))
            for r, a in zip(frame["round"], later["arxiv_id"], strict=True)
        ],
        index=frame.index,
        dtype=object,
    )
    newest = frame.sort_index().sort_values("added", ascending=False, kind="stable")
    return newest[NEW_PAPER_COLUMNS]


def _cell_sets(frame: pd.DataFrame, rows_axis: str, cols_axis: str, strict: bool):
    """``(row value, column value) -> the keys in that cell of frame``, masks made once."""
    keys = frame.index.to_numpy()
    keep = frame["credit_strict"].to_numpy(dtype=bool) if strict else True
    row_masks: dict[object, np.ndarray] = {}
    col_masks: dict[object, np.ndarray] = {}

    def cell(row_value: object, col_value: object) -> set[str]:
        if row_value not in row_masks:
            row_masks[row_value] = axis_mask(frame, rows_axis, row_value).to_numpy(dtype=bool)
        if col_value not in col_masks:
            col_masks[col_value] = axis_mask(frame, cols_axis, col_value).to_numpy(dtype=bool)
        return set(map(str, keys[row_masks[row_value] & col_masks[col_value] & keep]))

    return cell


@checked(papers=("added",))
def moved_cells(
    papers: pd.DataFrame | None = None,
    root: PathLike = None,
    baseline: dt.date | None = None,
    crosstabs: list[tuple[str, str, bool]] | None = None,
) -> pd.DataFrame:
    """Every cross-tab cell whose count differs between the survey's view and today's,
    with the ``papers`` in one view's cell only. ``crosstabs``: ``(rows, cols, strict)``
    triples, by default every cross-tab the site shows."""
    if papers is None and baseline is None:
        root = find_root(root)  # once, for both files read below
    papers = load_pool(root)[0] if papers is None else papers
    day = _baseline(root, baseline)
    then = papers
    if day is not None:  # the survey's view: its papers, with the view reading's codings
        then = with_view_reading(papers[papers["added"] <= pd.Timestamp(day)], root)
    rows = []
    for rows_axis, cols_axis, strict in crosstabs or crosstab_list():
        now = crosstab(rows_axis, cols_axis, strict=strict, papers=papers)
        before = crosstab(rows_axis, cols_axis, strict=strict, papers=then)
        old = before.reindex(index=now.index, columns=now.columns, fill_value=0).to_numpy()
        new = now.to_numpy()
        row_values, col_values = now.index.tolist(), now.columns.tolist()
        # One mask per value and view (the query API's axis_mask), so a moved cell is an
        # AND of two masks; a mover is in one view's cell only (added since, or recoded).
        cells = [_cell_sets(frame, rows_axis, cols_axis, strict) for frame in (papers, then)]
        for i, j in zip(*np.nonzero(old != new), strict=True):
            movers = sorted(
                cells[0](row_values[i], col_values[j]) ^ cells[1](row_values[i], col_values[j])
            )
            a, b = int(old[i, j]), int(new[i, j])
            cell = [rows_axis, row_values[i], cols_axis, col_values[j], strict]
            rows.append([*cell, a, b, b - a, movers])
    return pd.DataFrame(rows, columns=MOVED_CELL_COLUMNS)


# ---------------------------------------------------------------- claims


@dataclass(frozen=True)
class ClaimViews:
    """One claim in both views: checked in the survey's, shown beside today's."""

    survey: ClaimResult
    today: ClaimResult
    papers: tuple[str, ...]  # pooled papers behind the difference
    exclusions: tuple[str, ...]  # exclusion records behind the difference

    @property
    def claim(self) -> Claim:
        return self.survey.claim

    @property
    def moved(self) -> bool:
        """The value a reader sees differs (a count, or the denominator of "N of M")."""
        return self.survey.shown_value != self.today.shown_value


def _movers(claim: Claim, now: pd.DataFrame, then: pd.DataFrame) -> tuple[str, ...]:
    """Rows that count toward the claim's value or total in one view and not the other:
    papers added since, and the survey's papers whose codings moved them (a recoding)."""
    if not claim.where:
        return tuple(sorted(map(str, now.index.symmetric_difference(then.index))))
    keys: set[str] = set()
    for query in (claim.where, claim.of):
        if query:
            were = set(map(str, select_rows(then, query).index))
            keys |= were ^ set(map(str, select_rows(now, query).index))
    return tuple(sorted(keys))


@checked(papers=("added",), exclusions=("screened",))
def claim_views(
    claims: list[Claim] | None = None,
    papers: pd.DataFrame | None = None,
    exclusions: pd.DataFrame | None = None,
    root: PathLike = None,
    baseline: dt.date | None = None,
) -> list[ClaimViews]:
    """Every claim of ``claims.yaml`` evaluated in the survey's view and today's."""
    if any(v is None for v in (claims, papers, exclusions, baseline)):
        root = find_root(root)  # once, for every file read below
    claims = load_claims(root) if claims is None else claims
    if papers is None or exclusions is None:
        papers, exclusions = load_pool(root)
    survey = survey_view(papers, exclusions, root, baseline)
    then = evaluate_claims(claims, papers=survey[0], exclusions=survey[1])
    now = evaluate_claims(claims, papers=papers, exclusions=exclusions)
    today, out = (papers, exclusions), []
    tables = {"papers": (0,), "exclusions": (1,), "audited": (0, 1)}
    for old, new in zip(then, now, strict=True):
        used = tables[new.claim.table] if old.shown_value != new.shown_value else ()
        movers = [_movers(new.claim, today[i], survey[i]) if i in used else () for i in (0, 1)]
        out.append(ClaimViews(old, new, *movers))
    return out


@checked(papers=("added",), exclusions=("screened",))
def moved_claims(
    claims: list[Claim] | None = None,
    papers: pd.DataFrame | None = None,
    exclusions: pd.DataFrame | None = None,
    root: PathLike = None,
    baseline: dt.date | None = None,
) -> list[ClaimViews]:
    """The claims whose value differs between the survey's view and today's."""
    return [v for v in claim_views(claims, papers, exclusions, root, baseline) if v.moved]
