"""``readings/<reader>.yaml``: one reader's codings of pooled papers, as a model. The
context carries the file's stem (``reader`` equals it) and the pooled ``paper_keys``."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import Annotated, Self

from pydantic import Field, ValidationInfo, model_validator

from masrl_kb.kb.model.base import Finding, KbModel, Maybe, field, optional, repeated, report
from masrl_kb.kb.model.types import Axis, Bool, Date, LongText, Text

KB_READER = "kb"


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

    def coded(self) -> dict[str, object]:
        """Field: value of what the reader coded (key and note left out)."""
        return self.model_dump(exclude_unset=True, exclude={"key", "note"})


# field -> taxonomy axis (None: a boolean field): what agreement compares.
READING_AXES: dict[str, str | None] = {
    name: next((m.axis for m in info.metadata if isinstance(m, Axis)), None)
    for name, info in Reading.model_fields.items()
    if name not in ("key", "note")
}


class Reader(KbModel):
    """One reader's file: ``readings[key][field] = value`` once read."""

    reader: Text = field("The reader's id: the file's name, not 'kb'.")
    name: Text = field("Who the reader is.")
    date: Date = field("When the readings were made.")
    source: Text = field("Where the readings come from.")
    method: LongText = field("What the reader read and how, in our words.")
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
