"""The controlled vocabularies, read from ``taxonomy.yaml``."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from masrl_kb.kb.paths import find_root
from masrl_kb.kb.yamlio import load_yaml_file

TAXONOMY_FILE = "taxonomy.yaml"


@dataclass(frozen=True)
class Value:
    """One allowed value of an axis."""

    id: str
    label: str
    definition: str
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Axis:
    """A controlled vocabulary: its values in table order."""

    name: str
    label: str
    description: str
    values: tuple[Value, ...]
    ids: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        # Validation asks for the ids once per field per record: compute them once.
        object.__setattr__(self, "ids", tuple(v.id for v in self.values))

    def value(self, value_id: str) -> Value:
        """The value with this id (KeyError if unknown)."""
        for v in self.values:
            if v.id == value_id:
                return v
        raise KeyError(f"{self.name}: unknown value {value_id!r}")

    def label_of(self, value_id: str) -> str:
        """A value's short label."""
        return self.value(value_id).label


@dataclass(frozen=True)
class Taxonomy:
    """Every axis of ``taxonomy.yaml``."""

    version: int
    axes: dict[str, Axis]

    def __getitem__(self, name: str) -> Axis:
        return self.axes[name]

    def family_of(self, reward_type: str) -> str:
        """The reward family (R1..R8, NA) a reward type belongs to."""
        return self.axes["reward_type"].value(reward_type).extra["family"]


def _axis(name: str, raw: dict) -> Axis:
    values = tuple(
        Value(
            id=str(v["id"]),
            label=str(v["label"]),
            definition=str(v["definition"]),
            extra={k: x for k, x in v.items() if k not in ("id", "label", "definition")},
        )
        for v in raw["values"]
    )
    return Axis(name, raw["label"], raw.get("description", ""), values)


def parse_taxonomy(data: dict) -> Taxonomy:
    """Build a :class:`Taxonomy` from the loaded YAML mapping."""
    axes = {name: _axis(name, raw) for name, raw in data["axes"].items()}
    return Taxonomy(version=int(data["version"]), axes=axes)


@lru_cache(maxsize=8)
def _load_cached(path: Path, mtime: float) -> Taxonomy:
    return parse_taxonomy(load_yaml_file(path).data)


def load_taxonomy(root: str | os.PathLike[str] | None = None) -> Taxonomy:
    """Load ``taxonomy.yaml`` from the data root."""
    path = find_root(root) / TAXONOMY_FILE
    return _load_cached(path.resolve(), path.stat().st_mtime)
