"""The controlled vocabularies, read from ``taxonomy.yaml``."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from masrl_kb.kb.fields import CITATION_FIELDS, DECISION_FIELDS, EXCLUSION_FIELDS, PAPER_FIELDS
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.problem import DataFileError, Problem
from masrl_kb.kb.rules import ABSENT, LEARNED, PRESENT
from masrl_kb.kb.text import shorten, shorten_name, text_problem
from masrl_kb.kb.yamlio import LineDict, LoadedYaml, load_yaml_file

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
        object.__setattr__(self, "_by_id", {v.id: v for v in self.values})

    def value(self, value_id: str) -> Value:
        """The value with this id (KeyError if unknown)."""
        try:
            return self._by_id[value_id]
        except (KeyError, TypeError):
            raise KeyError(f"{self.name}: unknown value {value_id!r}") from None

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


class TaxonomyError(DataFileError):
    """``taxonomy.yaml`` is missing or breaks its rules; ``problems`` lists each."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(problems, f"problem(s) in {TAXONOMY_FILE}")


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


# ---------------------------------------------------------------- rules
# The axes code reads besides the record fields' own: the derived reward
# family, the decision statuses and the exclusion tags.
_EXTRA_AXES = ("reward_family", "decision_status", "benchmark_setting")
_AXIS_KEYS = {"label": True, "description": False, "values": True}
_VALUE_KEYS = {"id": True, "label": True, "definition": True, "example": False}
# Keys a value may carry beyond id/label/definition/example, by axis.
_VALUE_EXTRAS = {"reward_type": {"family": True}, "decision": {"boundary": False}}


def required_axes() -> tuple[str, ...]:
    """Every axis a record field or a derived column takes its values from."""
    names = [
        f.axis
        for fields in (PAPER_FIELDS, DECISION_FIELDS, CITATION_FIELDS, EXCLUSION_FIELDS)
        for f in fields
        if f.axis
    ]
    return tuple(dict.fromkeys([*names, *_EXTRA_AXES]))


def _text_problem(value: object) -> str | None:
    if isinstance(value, bool):
        return f"got boolean {str(value).lower()}: quote yes/no/true/false in YAML"
    if not isinstance(value, str):
        shown = type(value).__name__ if isinstance(value, dict | list) else shorten(value)
        return f"expected text, got {shown}"
    if not value.strip():
        return "must not be empty"
    return text_problem(value)


class _Checker:
    """Collects ``taxonomy.yaml`` problems as (line, field, message)."""

    def __init__(self) -> None:
        self.found: list[tuple[int, str, str]] = []

    def add(self, line: int, name: str, message: str) -> None:
        self.found.append((line, name, message))

    def keys(self, data: LineDict, spec: dict[str, bool], prefix: str) -> None:
        for key in data:
            if key not in spec:
                allowed = ", ".join(spec)
                self.add(
                    data.line_of(key),
                    f"{prefix}{shorten_name(key)}",
                    f"unknown key; allowed: {allowed}",
                )
        for key, required in spec.items():
            if required and key not in data:
                self.add(data.line, f"{prefix}{key}", "missing required key")
            elif key in data and key != "values":
                problem = _text_problem(data[key])
                if problem:
                    self.add(data.line_of(key), f"{prefix}{key}", problem)

    def top(self, data: object) -> None:
        if not isinstance(data, LineDict):
            kind = "an empty file" if data is None else type(data).__name__
            self.add(1, "taxonomy", f"expected a mapping with version and axes, got {kind}")
            return
        for key in data:
            if key not in ("version", "axes"):
                self.add(
                    data.line_of(key), shorten_name(key), "unknown key; allowed: version, axes"
                )
        version = data.get("version")
        if "version" not in data:
            self.add(data.line, "version", "missing required key")
        elif isinstance(version, bool) or not isinstance(version, int):
            self.add(
                data.line_of("version"),
                "version",
                f"expected a whole number, got {shorten(version)}",
            )
        axes = data.get("axes")
        if not isinstance(axes, LineDict) or not axes:
            self.add(
                data.line_of("axes"), "axes", "expected a non-empty mapping of axis name: axis"
            )
            return
        for name, axis in axes.items():
            self.axis(str(name), axis, axes.line_of(name))
        for name in required_axes():
            if name not in axes:
                self.add(
                    axes.line, f"axes.{name}", "missing required axis (records or tables use it)"
                )
        self.cross_references(axes)

    def axis(self, name: str, axis: object, line: int) -> None:
        prefix = f"axes.{shorten_name(name)}."
        if not isinstance(axis, LineDict):
            self.add(line, prefix[:-1], "expected a mapping with label, description and values")
            return
        self.keys(axis, _AXIS_KEYS, prefix)
        values = axis.get("values")
        if "values" in axis and (not isinstance(values, list) or not values):
            self.add(
                axis.line_of("values"), f"{prefix}values", "expected a non-empty list of values"
            )
            return
        seen: dict[str, int] = {}
        spec = {**_VALUE_KEYS, **_VALUE_EXTRAS.get(name, {})}
        for i, value in enumerate(values or []):
            where = f"{prefix}values[{i}]"
            if not isinstance(value, LineDict):
                self.add(
                    axis.line_of("values"), where, "expected a mapping with id, label, definition"
                )
                continue
            self.keys(value, spec, f"{where}.")
            vid = value.get("id")
            if isinstance(vid, str):
                if vid in seen:
                    self.add(
                        value.line_of("id"),
                        f"{where}.id",
                        f"id {shorten(vid)} given twice (first on line {seen[vid]})",
                    )
                else:
                    seen[vid] = value.line_of("id")

    def cross_references(self, axes: LineDict) -> None:
        families = axes.get("reward_family")
        rtypes = axes.get("reward_type")
        if not isinstance(families, LineDict) or not isinstance(rtypes, LineDict):
            return
        family_ids = _ids(families)
        for i, value in enumerate(rtypes.get("values") or []):
            if not isinstance(value, LineDict) or not isinstance(value.get("family"), str):
                continue
            if value["family"] not in family_ids:
                self.add(
                    value.line_of("family"),
                    f"axes.reward_type.values[{i}].family",
                    f"unknown reward family {shorten(value['family'])}; "
                    f"allowed: {', '.join(family_ids)}",
                )
        status = axes.get("decision_status")
        if isinstance(status, LineDict):
            missing = [s for s in (ABSENT, PRESENT, LEARNED) if s not in _ids(status)]
            if missing:
                self.add(
                    status.line, "axes.decision_status.values", f"must include {', '.join(missing)}"
                )


def _ids(axis: LineDict) -> list[str]:
    values = axis.get("values")
    if not isinstance(values, list):
        return []
    return [v["id"] for v in values if isinstance(v, dict) and isinstance(v.get("id"), str)]


def taxonomy_problems(loaded: LoadedYaml, rel: str = TAXONOMY_FILE) -> list[Problem]:
    """Every problem in a loaded ``taxonomy.yaml``, as ``path:line: field: message``."""
    problems = [Problem(rel, p.line, p.field, p.message) for p in loaded.problems]
    if loaded.data is None and loaded.problems:
        return problems
    checker = _Checker()
    checker.top(loaded.data)
    problems += [Problem(rel, line, name, msg) for line, name, msg in checker.found]
    return sorted(set(problems))


def parse_taxonomy(data: dict) -> Taxonomy:
    """Build a :class:`Taxonomy` from a loaded mapping that passed :func:`taxonomy_problems`."""
    axes = {name: _axis(name, raw) for name, raw in data["axes"].items()}
    return Taxonomy(version=int(data["version"]), axes=axes)


@lru_cache(maxsize=8)
def _load_cached(path: Path, mtime_ns: int, size: int) -> Taxonomy:
    loaded = load_yaml_file(path)
    problems = taxonomy_problems(loaded)
    if problems:
        raise TaxonomyError(problems)
    return parse_taxonomy(loaded.data)


def load_taxonomy(root: str | os.PathLike[str] | None = None) -> Taxonomy:
    """Load and check ``taxonomy.yaml`` from the data root.

    Raises :class:`TaxonomyError` (one ``path:line: field: message`` per
    problem) when the file is missing, unsafe, malformed or breaks a rule.
    """
    path = find_root(root) / TAXONOMY_FILE
    try:
        info = os.lstat(path)
    except OSError:
        raise TaxonomyError(
            [Problem(TAXONOMY_FILE, 1, "file", f"does not exist in the data root {path.parent}")]
        ) from None
    return _load_cached(path.absolute(), info.st_mtime_ns, info.st_size)
