"""Flat record field lists (name, kind, doc, required...) read from the models, for code
that walks fields generically: ``masrl-kb add``, exports, frames, the field reference.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import get_origin

from pydantic import BaseModel

from masrl_kb.kb.model.base import PLACEHOLDER, nested_model
from masrl_kb.kb.model.exclusion import Exclusion
from masrl_kb.kb.model.paper import Citation, Decision, Paper
from masrl_kb.kb.model.types import (
    ARXIV_ID_PATTERN,
    EXCLUSION_ID_PATTERN,
    KEY_PATTERN,
    MULTILINE,
    Axis,
    Check,
)

__all__ = ["ARXIV_ID_PATTERN", "EXCLUSION_ID_PATTERN", "KEY_PATTERN", "PLACEHOLDER"]
# Nested records whose kind has its own name (the CSV and JSON exports treat them apart).
_NAMED_KINDS: dict[type[BaseModel], str] = {Decision: "decisions", Citation: "citation"}
# The axes code reads besides the record fields' own: the derived reward
# family, the decision statuses and the exclusion tags.
_EXTRA_AXES = ("reward_family", "decision_status", "benchmark_setting")


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
    return tuple(dict.fromkeys([*names, *_EXTRA_AXES]))
