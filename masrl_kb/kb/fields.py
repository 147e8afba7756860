"""Flat record field lists (name, kind, doc, required...) read from the models, for code
that walks fields generically: ``masrl-kb add``, exports, frames, the field reference.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import get_origin

from pydantic import BaseModel

from masrl_kb.kb.model.base import PLACEHOLDER, nested_model
from masrl_kb.kb.model.exclusion import Exclusion
from masrl_kb.kb.model.paper import ARTIFACT_KINDS, Citation, Decision, Paper
from masrl_kb.kb.model.types import (
    ARXIV_ID_PATTERN,
    EXCLUSION_ID_PATTERN,
    KEY_PATTERN,
    MULTILINE,
    Axis,
    Check,
)

__all__ = [
    "ARTIFACT_KINDS",
    "ARXIV_ID_PATTERN",
    "EXCLUSION_ID_PATTERN",
    "KEY_PATTERN",
    "PLACEHOLDER",
]
# Nested records whose kind has its own name (the CSV and JSON exports treat them apart).
_NAMED_KINDS: dict[type[BaseModel], str] = {Decision: "decisions", Citation: "citation"}
# The axes code reads besides the record fields' and the derived columns' own.
_EXTRA_AXES = ("benchmark_setting",)


@dataclass(frozen=True)
class Field:
    """One field of a record, as the model declares it; ``kind`` is its type's
    :attr:`~masrl_kb.kb.model.types.Check.kind`, or decisions, citation, object (a mapping
    of ``sub`` fields) or objects (a list of such mappings)."""

    name: str
    kind: str
    doc: str
    required: bool = True
    axis: str | None = None
    pattern: str | None = None
    sub: tuple[Field, ...] = ()
    multiline: bool = False  # text that may hold line breaks (\n only)


def fields_of(model: type[BaseModel]) -> tuple[Field, ...]:
    """The fields of ``model`` in declaration order."""
    out = []
    for name, info in model.model_fields.items():
        check = next((m for m in info.metadata if isinstance(m, Check)), None)
        sub = nested_model(info.annotation)
        subs: tuple[Field, ...] = ()
        if check is not None:
            kind = check.kind
        elif sub is not None:
            many = get_origin(info.annotation) is list
            kind = _NAMED_KINDS.get(sub, "objects" if many else "object")
            subs = fields_of(sub)
        else:  # pragma: no cover - every model field is a Check or a nested model
            raise TypeError(f"{model.__name__}.{name}: no field kind")
        out.append(
            Field(
                name,
                kind,
                info.description or "",
                info.is_required(),
                check.axis if isinstance(check, Axis) else None,
                check.schema.get("pattern") if check and kind == "pattern" else None,
                subs,
                check is MULTILINE,
            )
        )
    return tuple(out)


PAPER_FIELDS = fields_of(Paper)
EXCLUSION_FIELDS = fields_of(Exclusion)

# The survey's tags: every required axis field (credit_mechanism qualifies a reading, it is no tag).
TAG_FIELDS: tuple[str, ...] = tuple(f.name for f in PAPER_FIELDS if f.kind == "axis" and f.required)


def required_axes() -> tuple[str, ...]:
    """Every axis a record field (nested ones too) or a derived column takes its values from:
    ``taxonomy.yaml`` must define each (checked when :func:`~masrl_kb.kb.taxonomy.load_taxonomy`
    validates the file)."""

    def axes(fields: tuple[Field, ...]) -> Iterator[str | None]:
        for f in fields:
            yield f.axis
            yield from axes(f.sub)

    names = [a for a in axes((*PAPER_FIELDS, *EXCLUSION_FIELDS)) if a]
    derived = [d.axis for d in DERIVED if d.axis]
    return tuple(dict.fromkeys([*names, *derived, *_EXTRA_AXES]))


# ---------------------------------------------------------------- derived columns

DECISION = "{decision}"  # in a derived column's name: one column per decision id
# The decision ids of taxonomy.yaml, as a reader without the taxonomy (a CSV import)
# recognises them in a column name.
DECISION_ID_PATTERN = "O[0-9]+"


@dataclass(frozen=True)
class Derived:
    """A column the papers frame (and so the CSV and JSON exports and the downloads page)
    computes from a record field and shows right after that field's own column."""

    name: str  # with DECISION: one column per decision id, in taxonomy order
    source: str  # the record field it is computed from
    doc: str
    axis: str | None = None  # an ordered categorical over this taxonomy axis

    def names(self, decisions: Sequence[str]) -> list[str]:
        """The column names, given the taxonomy's decision ids."""
        if DECISION not in self.name:
            return [self.name]
        return [self.name.replace(DECISION, d) for d in decisions]

    def matches(self, column: str) -> bool:
        """Whether ``column`` is one of this entry's columns (decision ids by pattern)."""
        parts = (re.escape(p) for p in self.name.split(DECISION))
        return re.fullmatch(DECISION_ID_PATTERN.join(parts), column) is not None


# The one list of derived columns: frames (columns, order, categoricals), the CSV/JSON
# readers (which drop them) and the downloads page (their docs) all read it.
DERIVED: tuple[Derived, ...] = (
    Derived("reward_family", "reward_type", "The reward family of reward_type.", "reward_family"),
    Derived(
        "credit_source", "credit_evidence", "credit_evidence's source label.", "evidence_source"
    ),
    Derived(DECISION, "decisions", "One column per orchestration decision.", "decision_status"),
    Derived(
        f"{DECISION}_mechanism",
        "decisions",
        "How a learned decision is reached (empty otherwise).",
        "decision_mechanism",
    ),
    Derived(
        f"{DECISION}_source",
        "decisions",
        "The source label of the decision's evidence.",
        "evidence_source",
    ),
    Derived("bibtex_key", "citation", "The citation key (from citation)."),
    Derived("entry_type", "citation", "The BibTeX entry type (from citation).", "entry_type"),
    *(Derived(f"has_{k}", "artifacts", f"True when {k} was released.") for k in ARTIFACT_KINDS),
    *(Derived(f"{k}_url", "artifacts", f"The released {k}'s URL.") for k in ARTIFACT_KINDS),
    Derived("license", "artifacts", "The code's licence (from artifacts)."),
    Derived("n_benchmarks", "evaluated_on", "How many benchmarks the work reports on."),
    Derived("ma_native_eval", "evaluated_on", "True when one of them is multi-agent-native."),
    Derived(
        "rl_methods_using", "evaluated_on", "Benchmarks: how many RL methods report results on it."
    ),
    Derived(
        "ma_native_benchmark",
        "multi_agent_native",
        "multi_agent_native as True/False (False for records other than benchmarks).",
    ),
)


def is_derived(column: str) -> bool:
    """Whether ``column`` is a derived column (any decision id of the pattern)."""
    return any(d.matches(column) for d in DERIVED)


def paper_columns(decisions: Sequence[str]) -> list[str]:
    """The papers frame's columns after ``key``: record fields in field-list order, each
    derived column right after its source."""
    after: dict[str, list[str]] = {}
    for d in DERIVED:
        after.setdefault(d.source, []).extend(d.names(decisions))
    return [c for f in PAPER_FIELDS[1:] for c in (f.name, *after.get(f.name, ()))]


def categorical_axes(decisions: Sequence[str]) -> dict[str, str]:
    """Column -> taxonomy axis for every column the papers frame holds as an ordered
    categorical: each record field the model types as an axis value, and each derived
    column with an axis."""
    axes = {f.name: f.axis for f in PAPER_FIELDS if f.axis}
    for d in DERIVED:
        axes |= dict.fromkeys(d.names(decisions), d.axis) if d.axis else {}
    return axes
