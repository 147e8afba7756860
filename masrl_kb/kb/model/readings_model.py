"""``readings/<reader>.yaml``: one reader's codings of pooled papers, as a model. The
context carries the file's stem (``reader`` equals it) and the pooled ``paper_keys``."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import Annotated, Literal, Self

from pydantic import Field, ValidationInfo, model_validator

from masrl_kb.kb.model.base import Finding, KbModel, Maybe, field, optional, repeated, report
from masrl_kb.kb.model.types import Axis, Bool, Date, LongText, Text

KB_READER = "kb"
Status = Annotated[str, Axis("decision_status")]
Mechanism = Annotated[str, Axis("decision_mechanism")]
Source = Annotated[str, Axis("evidence_source")]


class Reading(KbModel):
    """One paper as one reader coded it: only the fields that reader coded."""

    key: Text = field("A pooled paper's key.")
    note: Maybe[LongText] = optional("The reader's note.")
    category: Maybe[Annotated[str, Axis("category")]] = optional("Kind of work.")
    is_rl: Maybe[Annotated[str, Axis("is_rl")]] = optional("Whether RL is used.")
    reward_type: Maybe[Annotated[str, Axis("reward_type")]] = optional("Reward tag.")
    credit_unit: Maybe[Annotated[str, Axis("credit_unit")]] = optional("Finest unit.")
    topology: Maybe[Annotated[str, Axis("topology")]] = optional("Team topology.")
    credit_strict: Maybe[Bool] = optional("The strict credit reading.")
    credit_mechanism: Maybe[Annotated[str, Axis("credit_mechanism")]] = optional(
        "Estimator or shaping (with credit_strict true)."
    )
    O1: Maybe[Status] = optional("Spawn: learned, present or absent.")
    O2: Maybe[Status] = optional("Delegate: learned, present or absent.")
    O3: Maybe[Status] = optional("Communicate: learned, present or absent.")
    O4: Maybe[Status] = optional("Aggregate: learned, present or absent.")
    O5: Maybe[Status] = optional("Stop: learned, present or absent.")
    O1_mechanism: Maybe[Mechanism] = optional("A learned O1: explicit or implicit.")
    O2_mechanism: Maybe[Mechanism] = optional("A learned O2: explicit or implicit.")
    O3_mechanism: Maybe[Mechanism] = optional("A learned O3: explicit or implicit.")
    O4_mechanism: Maybe[Mechanism] = optional("A learned O4: explicit or implicit.")
    O5_mechanism: Maybe[Mechanism] = optional("A learned O5: explicit or implicit.")
    O1_source: Maybe[Source] = optional("What a learned O1's reading rests on.")
    O2_source: Maybe[Source] = optional("What a learned O2's reading rests on.")
    O3_source: Maybe[Source] = optional("What a learned O3's reading rests on.")
    O4_source: Maybe[Source] = optional("What a learned O4's reading rests on.")
    O5_source: Maybe[Source] = optional("What a learned O5's reading rests on.")

    def coded(self) -> dict[str, object]:
        """Field: value of what the reader coded (key and note left out)."""
        return self.model_dump(exclude_unset=True, exclude={"key", "note"})


# Every coded field -> its taxonomy axis (None: a boolean field).
READING_FIELDS: dict[str, str | None] = {
    name: next((m.axis for m in info.metadata if isinstance(m, Axis)), None)
    for name, info in Reading.model_fields.items()
    if name not in ("key", "note")
}
# What agreement compares: every coded field but where a reading's evidence came from,
# which two readers may find in different places while agreeing on the coding.
READING_AXES: dict[str, str | None] = {
    name: axis for name, axis in READING_FIELDS.items() if axis != "evidence_source"
}


class Reader(KbModel):
    """One reader's file: ``readings[key][field] = value`` once read."""

    reader: Text = field("The reader's id: the file's name, not 'kb'.")
    name: Text = field("Who the reader is.")
    date: Date = field("When the readings were made.")
    source: Text = field("Where the readings come from.")
    method: LongText = field("What the reader read and how, in our words.")
    view: Maybe[Literal["survey"]] = optional(
        "'survey': the survey's view shows these codings for its papers in place of the "
        "records' own (the codings its claims were checked against); one reader at most."
    )
    compare_with: Maybe[Text] = optional(
        "The reader this reading is measured against (a blind reading's frozen first "
        "reading, or 'kb'): the agreement page leads with these pairs."
    )
    entries: list[Reading] = Field(alias="readings", description="One reading per paper.")

    @property
    def id(self) -> str:
        return self.reader

    @cached_property
    def readings(self) -> dict[str, dict[str, object]]:
        """Paper key: the fields this reader coded."""
        return {r.key: r.coded() for r in self.entries}

    @model_validator(mode="after")
    def _rules(self, info: ValidationInfo) -> Self:
        ctx = info.context or {}
        report(self._findings(ctx.get("stem"), ctx.get("paper_keys")))
        return self

    def _findings(self, stem: object, keys: object) -> Iterator[Finding]:
        if self.reader != stem or self.reader == KB_READER:
            message = f"must equal the file name {stem!r} and not be {KB_READER!r}"
            yield Finding(("reader",), message)
        for i, reading in enumerate(self.entries):
            if isinstance(keys, set | frozenset) and reading.key not in keys:
                yield Finding(("readings", i, "key"), f"no pooled paper {reading.key!r}")
        yield from repeated(("readings",), (r.key for r in self.entries), key="key")
