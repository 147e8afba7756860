"""``taxonomy.yaml``: the controlled vocabularies, as a model that is also the parser."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cached_property
from typing import Self

from pydantic import PrivateAttr, ValidationInfo, model_validator

from masrl_kb.kb.model.base import Finding, KbModel, Maybe, field, optional, repeated, report
from masrl_kb.kb.model.types import Int, Text
from masrl_kb.kb.rules import ABSENT, LEARNED, PRESENT
from masrl_kb.kb.text import capped_list, shorten

# Keys a value may carry beyond id/label/definition/example, by axis.
_VALUE_EXTRAS = {"family": "reward_type", "boundary": "decision"}


class Value(KbModel):
    """One allowed value of an axis."""

    id: Text = field("What a record stores.")
    label: Text = field("A short label.")
    definition: Text = field("A one-line definition.")
    example: Maybe[Text] = optional("An example record.")
    family: Maybe[Text] = optional("reward_type only: its reward_family id.")
    boundary: Maybe[Text] = optional("decision only: where the value stops.")

    @property
    def extra(self) -> dict[str, str]:
        """The keys given beyond id, label and definition."""
        keys = ("example", *_VALUE_EXTRAS)
        return {k: v for k in keys if (v := getattr(self, k)) is not None}


class Axis(KbModel):
    """A controlled vocabulary: its values in table order."""

    label: Text = field("The axis's label.")
    description: Text = field("What the axis describes.", default="")
    values: list[Value] = field("The allowed values, in table order.", min_length=1)
    _name: str = PrivateAttr("")

    @property
    def name(self) -> str:
        """The axis's key in ``taxonomy.yaml``."""
        return self._name

    @cached_property
    def ids(self) -> tuple[str, ...]:
        # Validation asks for the ids once per field per record: compute them once.
        return tuple(v.id for v in self.values)

    @cached_property
    def _by_id(self) -> dict[str, Value]:
        return {v.id: v for v in self.values}

    def value(self, value_id: str) -> Value:
        """The value with this id (KeyError if unknown)."""
        try:
            return self._by_id[value_id]
        except (KeyError, TypeError):
            raise KeyError(f"{self.name}: unknown value {value_id!r}") from None

    def label_of(self, value_id: str) -> str:
        """A value's short label."""
        return self.value(value_id).label


class Taxonomy(KbModel):
    """Every axis of ``taxonomy.yaml``."""

    version: Int = field("The file format's version.")
    axes: dict[str, Axis] = field("Axis name: axis.")

    def __getitem__(self, name: str) -> Axis:
        return self.axes[name]

    def family_of(self, reward_type: str) -> str:
        """The reward family (an id of the reward_family axis) a reward type belongs to."""
        family = self.axes["reward_type"].value(reward_type).family
        assert family is not None  # every reward_type value names one (checked below)
        return family

    @model_validator(mode="after")
    def _rules(self, info: ValidationInfo) -> Self:
        for name, axis in self.axes.items():
            axis._name = name
        # Which axes the records use is the records' models' fact, not this file's shape:
        # the loader (masrl_kb.kb.taxonomy) passes them in, so this model imports no record.
        required = (info.context or {}).get("required_axes", ())
        report([*self._required(required), *self._unique(), *self._extras(), *self._references()])
        return self

    def _required(self, required: Sequence[str]) -> Iterator[Finding]:
        if not self.axes:
            yield Finding(("axes",), "expected a non-empty mapping of axis name: axis")
        for name in required:
            if self.axes and name not in self.axes:
                message = "missing required axis (records or tables use it)"
                yield Finding(("axes", name), message, at=("axes",))

    def _unique(self) -> Iterator[Finding]:
        for name, axis in self.axes.items():
            yield from repeated(("axes", name, "values"), (v.id for v in axis.values), "id ")

    def _extras(self) -> Iterator[Finding]:
        """``family`` belongs to (and is required in) reward_type, ``boundary`` to decision."""
        for name, axis in self.axes.items():
            for i, value in enumerate(axis.values):
                loc = ("axes", name, "values", i)
                for key, owner in _VALUE_EXTRAS.items():
                    if getattr(value, key) is not None and name != owner:
                        yield Finding((*loc, key), f"unknown key; only {owner} values have {key}")
                if name == "reward_type" and value.family is None:
                    yield Finding((*loc, "family"), "missing required key (its reward_family)", loc)

    def _references(self) -> Iterator[Finding]:
        families, rtypes = self.axes.get("reward_family"), self.axes.get("reward_type")
        if families and rtypes:
            for i, value in enumerate(rtypes.values):
                if value.family is not None and value.family not in families.ids:
                    loc = ("axes", "reward_type", "values", i, "family")
                    message = f"unknown reward family {shorten(value.family)}; allowed: "
                    yield Finding(loc, message + capped_list(families.ids))
        status = self.axes.get("decision_status")
        missing = [s for s in (ABSENT, PRESENT, LEARNED) if status and s not in status.ids]
        if missing:
            message = f"must include {', '.join(missing)}"
            yield Finding(
                ("axes", "decision_status", "values"), message, ("axes", "decision_status")
            )
