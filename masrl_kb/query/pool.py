"""Loading the pool: the records of a data root read, checked and turned into the papers
and exclusions frames once, kept in the per-user cache (:mod:`masrl_kb.kb.cache`).

Load once (``papers = load_papers()``) and pass ``papers=`` to the other functions of the
pandas API (:mod:`masrl_kb.query.axes`, :mod:`masrl_kb.query.evaluation_table`...).
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd

from masrl_kb.kb import cache
from masrl_kb.kb.drafts import Draft, check_mode, split_drafts
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.problem import Problem
from masrl_kb.kb.record_checks import validate_records
from masrl_kb.kb.records import RecordSet, read_records
from masrl_kb.kb.taxonomy import Taxonomy, TaxonomyError, load_taxonomy
from masrl_kb.query.args import checked
from masrl_kb.query.record_rows import exclusions_table, papers_table

PathLike = str | os.PathLike[str] | None
Frames = tuple[pd.DataFrame, pd.DataFrame]
DateLike = dt.date | str | None
DRAFT_COLUMNS = ["path", "kind", "id", "title", "unfinished"]


class InvalidRecordsError(ValueError):
    """Raised when records fail validation; ``problems`` lists every one."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        shown = "\n".join(str(p) for p in problems[:20])
        more = f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""
        start = " " if len(problems) == 1 else "\n"  # one problem, one line
        super().__init__(f"{len(problems)} invalid record problem(s):{start}{shown}{more}")


@checked()
def load_papers(
    root: PathLike = None, as_of: DateLike = None, drafts: str = "error"
) -> pd.DataFrame:
    """One row per pooled paper, indexed by ``key``, tags as ordered categoricals, derived
    columns (``reward_family``, ``bibtex_key``, one per decision id: its status).
    ``as_of``: papers added by that day; ``drafts``: records with ``TODO`` fields invalid
    (``"error"``) or left out (``"exclude"``). Raises :class:`InvalidRecordsError`."""
    return load_pool(root, as_of=as_of, drafts=drafts)[0]


@checked()
def load_exclusions(
    root: PathLike = None, as_of: DateLike = None, drafts: str = "error"
) -> pd.DataFrame:
    """One row per excluded record, indexed by ``id``; ``as_of`` and ``drafts`` as for
    :func:`load_papers` (``as_of`` by the day screened)."""
    return load_pool(root, as_of=as_of, drafts=drafts)[1]


@checked()
def load_pool(root: PathLike = None, as_of: DateLike = None, drafts: str = "error") -> Frames:
    """``(load_papers(), load_exclusions())`` from one read and validation."""
    papers, exclusions = _built_pool(find_root(root), check_mode(drafts))
    return (papers, exclusions) if as_of is None else pool_as_of(papers, exclusions, as_of)


@checked()
def load_drafts(root: PathLike = None) -> pd.DataFrame:
    """The records holding ``TODO`` fields: what ``load_papers(drafts="exclude")`` leaves out."""
    _, found = split_drafts(read_records(root))
    rows = [[d.path, d.kind, d.id, d.title, list(d.unfinished)] for d in found]
    return pd.DataFrame(rows, columns=DRAFT_COLUMNS)


def pool_as_of(papers: pd.DataFrame, exclusions: pd.DataFrame, as_of: dt.date | str) -> Frames:
    """The pool as it stood on ``as_of``: papers added, exclusions screened by that day."""
    day = pd.Timestamp(as_of)
    return papers[papers["added"] <= day], exclusions[exclusions["screened"] <= day]


def _built_pool(base: Path, drafts: str) -> Frames:
    """Both frames, kept (:mod:`masrl_kb.kb.cache`) when the pool has no drafts."""
    salt = f"frames {pd.__version__} {np.__version__}"
    key = cache.pool_fingerprint(base, salt)  # before reading: the frames are of these files
    kept = cache.load(f"frames-{key}", base) if key is not None else None
    if isinstance(kept, tuple) and [type(f) for f in kept] == [pd.DataFrame] * 2:
        return cast(Frames, kept)
    records = read_records(base)
    left_out: list[Draft] = []
    if drafts == "exclude":
        records, left_out = split_drafts(records)
    tax = _checked(records)
    built = papers_table(records, tax), exclusions_table(records, tax)
    if not left_out:
        cache.store_if_unchanged(
            "frames", key, built, lambda: cache.pool_fingerprint(base, salt), base
        )
    return built


def _checked(records: RecordSet) -> Taxonomy:
    """The taxonomy, once every record of ``records`` has passed validation."""
    try:
        tax = load_taxonomy(records.root)
    except TaxonomyError as err:
        raise InvalidRecordsError(err.problems) from None
    problems = validate_records(records, tax)
    if problems:
        raise InvalidRecordsError(problems)
    return tax
