"""Agreement between readers (the files under ``readings/`` and the records, reader
``kb``): percent agreement, Cohen's kappa, Krippendorff's alpha, and disagreements."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterator
from itertools import combinations

import pandas as pd

from masrl_kb.kb.paths import find_root
from masrl_kb.kb.readings import KB_READER, READING_AXES, Reader, load_readers
from masrl_kb.kb.yamlio import UnsafeFileError, read_regular_file
from masrl_kb.query.args import checked
from masrl_kb.query.pool import PathLike, load_papers

CODEBOOK = "docs/codebook.md"  # the rules whose worked examples name papers
AGREEMENT_COLUMNS = ["readers", "axis", "n", "agreement", "kappa", "alpha"]
READING_COLUMNS = ("reader", "key", "axis", "value")  # of a readings() table


@checked(papers=tuple(READING_AXES))
def readings(papers: pd.DataFrame | None = None, root: PathLike = None) -> pd.DataFrame:
    """One row per (reader, paper, axis) with the value that reader coded; the ``kb``
    reader's rows cover only papers some other reader coded."""
    if papers is None:
        root = find_root(root)  # once, for both reads
        papers = load_papers(root)
    return readers_table(papers, reader_list(root))


def readers_table(papers: pd.DataFrame, readers: list[Reader]) -> pd.DataFrame:
    """:func:`readings` of readers already loaded (:func:`reader_list`), for a caller that
    needs them too (their declared pairs): each reader file is read and checked once."""
    rows = [
        (r.id, key, axis, value)
        for r in readers
        for key, coded in r.readings.items()
        if key in papers.index  # a dated pool leaves out papers a reader read later
        for axis, value in coded.items()
    ]
    read = sorted({key for _, key, _, _ in rows})
    # object dtype: the kb's values as plain str and bool, as the readers' files have them
    own = papers.loc[read, list(READING_AXES)].astype(object).to_numpy().tolist()
    rows += [
        (KB_READER, key, axis, value)
        for key, values in zip(read, own, strict=True)
        for axis, value in zip(READING_AXES, values, strict=True)
    ]
    return pd.DataFrame(rows, columns=["reader", "key", "axis", "value"])


def reader_list(root: PathLike = None) -> list[Reader]:
    """The readers under ``readings/`` (the kb's own reading not included); their keys
    are checked by ``validate`` against every record, not against a frame of papers,
    which may be the pool as of a date."""
    return load_readers(None, find_root(root))


def declared_pairs(readers: list[Reader]) -> set[frozenset[str]]:
    """The pairs the readers' files declare: each reader with its ``compare_with``."""
    return {frozenset((r.id, r.compare_with)) for r in readers if r.compare_with}


def codebook_examples(root: PathLike = None) -> set[str]:
    """Keys of the papers docs/codebook.md cites (in backticks) as worked examples: a
    reader who read the codebook first did not read these blind."""
    try:  # bounded, and never through a link: the codebook comes with pull requests
        text = read_regular_file(find_root(root) / CODEBOOK).decode("utf-8", "replace")
    except UnsafeFileError:  # none, or not a regular file: no paper is cited
        return set()
    return set(re.findall(r"`([a-z0-9][a-z0-9.-]*)`", text))


def without_papers(table: pd.DataFrame, keys: set[str]) -> pd.DataFrame:
    """A readings() table with the given papers left out."""
    return table[~table["key"].isin(keys)]


def _compared(
    table: pd.DataFrame, pairs: set[frozenset[str]] | None = None
) -> Iterator[tuple[str, str, str, list[str], list[object], list[object]]]:
    """(first reader, second reader, axis, the keys of the papers both coded, in key order,
    and the two readers' codings of them); only the given pairs when ``pairs`` is set."""
    coded: dict[str, dict[str, dict[str, object]]] = {}  # axis -> reader -> key -> value
    columns = (table[c] for c in ("reader", "key", "axis", "value"))
    for reader, key, axis, value in zip(*columns, strict=True):
        if not pd.isna(value):
            coded.setdefault(axis, {}).setdefault(reader, {})[key] = value
    readers = sorted(table["reader"].unique(), key=lambda r: (r != KB_READER, r))  # kb first
    for a, b in combinations(readers, 2):
        if pairs is not None and frozenset((a, b)) not in pairs:
            continue
        for axis in READING_AXES:
            codings = coded.get(axis, {})
            if a not in codings or b not in codings:
                continue
            first, second = codings[a], codings[b]
            keys = sorted(first.keys() & second.keys())
            if keys:
                yield a, b, axis, keys, [first[k] for k in keys], [second[k] for k in keys]


def _kappa_alpha(x: list[str], y: list[str], labels: list[str]) -> tuple[float, float]:
    """Cohen's kappa and Krippendorff's alpha (nominal) of two codings."""
    return _kappa_alpha_of(tuple(x), tuple(y), tuple(labels))


@functools.lru_cache(maxsize=4096)
def _kappa_alpha_of(
    x: tuple[str, ...], y: tuple[str, ...], labels: tuple[str, ...]
) -> tuple[float, float]:
    """:func:`_kappa_alpha`, once per distinct pair of codings: a build asks for the same
    pairs several times (every pair, the declared ones, without the codebook's examples),
    and scikit-learn's checks cost more than the sums."""
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    if len(labels) < 2:
        return math.nan, math.nan  # one category only: chance agreement is total, undefined
    code = {label: i for i, label in enumerate(labels)}
    data = [[code[v] for v in x], [code[v] for v in y]]
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    return float(cohen_kappa_score(list(x), list(y), labels=list(labels))), float(alpha)


@checked(papers=tuple(READING_AXES), table=READING_COLUMNS)
def agreement(
    papers: pd.DataFrame | None = None,
    root: PathLike = None,
    table: pd.DataFrame | None = None,
    pairs: set[frozenset[str]] | None = None,
) -> pd.DataFrame:
    """Per reader pair and axis: ``n`` papers coded by both, ``agreement`` (share coded
    alike), ``kappa`` and ``alpha`` (NaN when both used one value only). ``table``
    reuses :func:`readings` already loaded; ``pairs`` keeps only those reader pairs
    (:func:`declared_pairs`)."""
    table = readings(papers, root) if table is None else table
    rows = []
    for a, b, axis, _, first, second in _compared(table, pairs):
        x, y = [str(v) for v in first], [str(v) for v in second]  # codes compare as text
        labels = sorted(set(x) | set(y))
        same = sum(i == j for i, j in zip(x, y, strict=True)) / len(x)
        rows.append([f"{a} / {b}", axis, len(x), same, *_kappa_alpha(x, y, labels)])
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


@checked(papers=tuple(READING_AXES), table=READING_COLUMNS)
def disagreements(
    papers: pd.DataFrame | None = None,
    root: PathLike = None,
    table: pd.DataFrame | None = None,
    pairs: set[frozenset[str]] | None = None,
) -> pd.DataFrame:
    """Every (reader pair, axis, paper) where the two readers coded differently (only
    the given pairs when ``pairs`` is set)."""
    table = readings(papers, root) if table is None else table
    rows = [
        {"readers": f"{a} / {b}", "axis": axis, "key": key, "first": x, "second": y}
        for a, b, axis, keys, first, second in _compared(table, pairs)
        for key, x, y in zip(keys, first, second, strict=True)
        if str(x) != str(y)
    ]
    return pd.DataFrame(rows, columns=["readers", "axis", "key", "first", "second"])


def paper_readings(
    key: str,
    papers: pd.DataFrame | None = None,
    root: PathLike = None,
    table: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Every reader's coding of one paper: one row per reader, one column per axis."""
    table = readings(papers, root) if table is None else table
    rows = table[table["key"] == key]
    if rows.empty:
        return pd.DataFrame()
    return rows.pivot(index="reader", columns="axis", values="value")
