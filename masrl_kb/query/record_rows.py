"""The checked records as the rows of the two frames: one row per paper (tags as ordered
categoricals, the derived columns) and one per exclusion. Only :mod:`masrl_kb.query.pool`
calls these, once per read of the records."""

from __future__ import annotations

import collections
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from masrl_kb.kb.crossrules import arxiv_ids_of
from masrl_kb.kb.fields import (
    ARTIFACT_KINDS,
    EXCLUSION_FIELDS,
    PAPER_FIELDS,
    categorical_axes,
    paper_columns,
)
from masrl_kb.kb.records import RecordSet
from masrl_kb.kb.rules import ABSENT, decision_statuses
from masrl_kb.kb.taxonomy import Taxonomy

# The exclusion fields the model types as taxonomy values: categorical columns.
EXCLUSION_TAGS = {f.name: f.axis for f in EXCLUSION_FIELDS if f.axis}


def _categorical(values: Iterable[object], ids: Sequence[str]) -> pd.Categorical:
    return pd.Categorical(list(values), categories=list(ids), ordered=True)


def _without_lines(value: Any) -> Any:
    """A record value as plain dicts and lists, without the YAML reader's line numbers."""
    if isinstance(value, dict):
        return {k: _without_lines(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_lines(v) for v in value]
    return value


def _paper_row(record: object) -> dict[str, Any]:
    row = _without_lines(record)
    citation, artifacts = row["citation"], row.get("artifacts") or {}
    row.update(bibtex_key=citation["bibtex_key"], entry_type=citation["entry_type"])
    row.update(decision_statuses(row["decisions"]))
    for d in row["decisions"]:
        row[f"{d['id']}_mechanism"] = d.get("mechanism")
        row[f"{d['id']}_source"] = (d.get("evidence") or {}).get("source")
    row["credit_source"] = (row.get("credit_evidence") or {}).get("source")
    for kind in ARTIFACT_KINDS:
        url = artifacts.get(kind)
        row[f"has_{kind}"] = isinstance(url, str)
        row[f"{kind}_url"] = url if isinstance(url, str) else None
    row["license"] = artifacts.get("license")
    evaluations = row.get("evaluated_on") or []
    # None when the record has no evaluated_on; [] when it says "checked, none".
    row["evaluated_on"] = evaluations if "evaluated_on" in row else None
    row["n_benchmarks"] = len(evaluations)
    row["ma_native_eval"] = any(e.get("multi_agent_native") for e in evaluations)
    return row


def _tag_columns(frame: pd.DataFrame, tax: Taxonomy) -> None:
    """Every column typed as a taxonomy value (record fields by the model, derived
    columns by :data:`~masrl_kb.kb.fields.DERIVED`) as an ordered categorical."""
    for did in tax["decision"].ids:
        statuses = frame.get(did, [None] * len(frame))
        frame[did] = [s if isinstance(s, str) else ABSENT for s in statuses]
    for name, axis in categorical_axes(tax["decision"].ids).items():
        frame[name] = _categorical(frame.get(name, [None] * len(frame)), tax[axis].ids)


def papers_table(records: RecordSet, tax: Taxonomy) -> pd.DataFrame:
    frame = pd.DataFrame([_paper_row(r.data) for r in records.papers])
    # an optional field no record uses is still a column
    frame = frame.assign(**{f.name: None for f in PAPER_FIELDS if f.name not in frame})
    frame["sources"] = [s if isinstance(s, list) else [] for s in frame["sources"]]
    frame["authors_truncated"] = frame["authors_truncated"].fillna(False).astype(bool)
    frame["extra_urls"] = [u if isinstance(u, list) else [] for u in frame["extra_urls"]]
    frame["reward_family"] = [tax.family_of(r) for r in frame["reward_type"]]
    _tag_columns(frame, tax)
    frame["rl_methods_using"] = _benchmark_use(frame)
    # multi_agent_native holds True/False on benchmark records only; this one is queryable.
    frame["ma_native_benchmark"] = [v is True for v in frame["multi_agent_native"]]
    frame["added"] = pd.to_datetime(frame["added"])
    frame["year"] = frame["year"].astype(int)
    frame["credit_strict"] = frame["credit_strict"].astype(bool)
    return frame.set_index("key").sort_index()[paper_columns(tax["decision"].ids)]


def _benchmark_use(frame: pd.DataFrame) -> list[int]:
    """For each record, how many RL methods report results on it (0 for non-benchmarks)."""
    uses = collections.Counter(
        key
        for category, evaluations in zip(frame["category"], frame["evaluated_on"], strict=True)
        if category == "rl_method"
        for key in {e.get("benchmark") for e in evaluations or []} - {None}
    )
    return [uses[key] for key in frame["key"]]


def exclusions_table(records: RecordSet, tax: Taxonomy) -> pd.DataFrame:
    rows = [_without_lines(rec.data) for rec in records.exclusions]
    for row in rows:
        row["arxiv_id"] = min(arxiv_ids_of(row), default=None)
    frame = pd.DataFrame(rows, columns=[*(f.name for f in EXCLUSION_FIELDS), "arxiv_id"])
    for column, axis in EXCLUSION_TAGS.items():
        frame[column] = _categorical(frame[column], tax[axis].ids)
    frame["screened"] = pd.to_datetime(frame["screened"])
    return frame.set_index("id").sort_index()
