"""``protocol.yaml``: the survey's search and screening protocol, as a model that is the parser.
Source and query family ids are taxonomy values, so the exclusions a round writes validate."""

from __future__ import annotations

import re
from typing import Annotated, Literal, Self

from pydantic import PrivateAttr, ValidationInfo, field_validator, model_validator

from masrl_kb.kb.model.base import KbModel, field, repeated, report
from masrl_kb.kb.model.types import Axis, Bool, Check, Date, Text, pattern

RULE_ID = re.compile(r"^I[0-9]+$")


def _number(low: float, high: float) -> Check:
    def test(value: object, ctx: object) -> str | None:
        if isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high:
            return None
        return f"expected a number from {low:g} to {high:g}"

    return Check("number", test, {"type": "number", "minimum": low, "maximum": high})


def _terms(value: object, ctx: object) -> str | None:
    if isinstance(value, list) and value and all(_term(t) for t in value):
        return None
    return "expected a list of terms without '\"'"


def _term(term: object) -> bool:
    return isinstance(term, str) and bool(term.strip()) and '"' not in term


class Survey(KbModel):
    title: Text = field("The survey's title.")
    arxiv_id: Text = field("The survey's arXiv id.")
    baseline: Date = field("The day the pool stops: the baseline round of the living review.")


class Source(KbModel):
    """A source searched: an ``exclusion_source`` id; ``automated`` when a program queries it."""

    id: Annotated[str, Axis("exclusion_source")] = field("An exclusion_source id.")
    automated: Bool = field("A program queries it (screen run or an adapter).", default=False)
    _label: str = PrivateAttr("")

    @model_validator(mode="after")
    def _name(self, info: ValidationInfo) -> Self:
        self._label = (info.context or {})["taxonomy"]["exclusion_source"].label_of(self.id)
        return self

    @property
    def label(self) -> str:
        return self._label


class QueryFamily(KbModel):
    """One query family: its id (a ``query_family`` value), label and terms."""

    id: Annotated[str, Axis("query_family")] = field("A query_family id.")
    label: Text = field("The family's label.")
    terms: Annotated[tuple[str, ...], Check("terms", _terms, {"type": "array"})] = field(
        "Terms matched in titles and abstracts."
    )

    @field_validator("terms")
    @classmethod
    def _strip(cls, terms: list[str]) -> tuple[str, ...]:
        return tuple(t.strip() for t in terms)


class InclusionRule(KbModel):
    id: Annotated[str, pattern(RULE_ID.pattern)] = field("The rule's id, I1, I2...")
    label: Text = field("A short label.")
    rule: Text = field("The rule, in one paragraph.")


class Deduplication(KbModel):
    title_similarity: Annotated[float, _number(50, 100)] = field("Score of the same title.")


class Ranking(KbModel):
    family_weight: Annotated[float, _number(0, 1)] = field("Weight of each family matched.")


class Protocol(KbModel):
    """The whole protocol, checked against the taxonomy."""

    version: Literal[1] = field("The file format's version.", default=1)
    survey: Survey = field("The survey and its baseline.")
    sources: list[Source] = field("Where records were searched.", min_length=1)
    query_families: list[QueryFamily] = field("The query families of the search.", min_length=1)
    inclusion_rules: list[InclusionRule] = field("The inclusion rules.", min_length=1)
    screening_stages: Literal["exclusion_stage"] = field("The taxonomy axis of the stages.")
    exclusion_reasons: Literal["exclusion_reason"] = field("The taxonomy axis of the reasons.")
    deduplication: Deduplication = field("How duplicates are found.")
    ranking: Ranking = field("How candidates are ranked.")

    @model_validator(mode="after")
    def _unique(self) -> Self:
        names = ("sources", "query_families", "inclusion_rules")
        report(f for n in names for f in repeated((n,), (x.id for x in getattr(self, n))))
        return self

    # The names the screening code and the pages have always read.
    survey_title = property(lambda self: self.survey.title)
    survey_arxiv_id = property(lambda self: self.survey.arxiv_id)
    baseline = property(lambda self: self.survey.baseline)
    families = property(lambda self: self.query_families)
    stage_axis = property(lambda self: self.screening_stages)
    reason_axis = property(lambda self: self.exclusion_reasons)
    title_similarity = property(lambda self: self.deduplication.title_similarity)
    family_weight = property(lambda self: self.ranking.family_weight)

    def family(self, family_id: str) -> QueryFamily:
        for f in self.query_families:
            if f.id == family_id:
                return f
        raise KeyError(family_id)
