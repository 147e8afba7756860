"""The trace JSON Schema (``traces/trace.schema.json``) and validators built from it.

Validation is plain ``jsonschema`` (draft 2020-12) with two speed-ups that keep its results
exact, so a 100,000-event trace validates in seconds rather than tens of seconds:

* the schema's local ``$ref``s are inlined once, and the items of ``events`` and ``edges`` are
  checked one by one with validators built from the schema's own item subschemas (saving the
  per-item reference lookups of a whole-document run);
* results that already passed are remembered, through jsonschema's documented
  ``validators.extend`` hook: ``properties`` remembers scalar values per property subschema
  (agent names, types and tools repeat thousands of times), ``allOf`` remembers the values of
  the few properties its conditionals read (an event's type, decision, to and tool). Failures
  are never remembered, so every error is produced by jsonschema itself.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.protocols import Validator

from masrl_kb.kb.paths import find_root

SCHEMA_PATH = Path("traces") / "trace.schema.json"
# The copy installed with the package (a link to SCHEMA_PATH in a clone; a file in a wheel).
PACKAGED_SCHEMA = Path(__file__).with_name("trace.schema.json")
ITEM_ARRAYS = ("events", "edges")
# Enough for every repeated name of a huge trace; unique ids and times beyond it go uncached.
CACHE_LIMIT = 200_000
_CACHEABLE = (str, bool, int, type(None))
# Keywords whose verdict on an object depends only on the properties they name.
_PROJECTABLE = frozenset(
    {"if", "then", "else", "not", "allOf", "anyOf", "oneOf", "required", "properties"}
    | {"description", "title", "$comment"}
)


def schema_file(root: str | os.PathLike[str] | None = None) -> Path:
    """Where the trace schema lives: ``traces/trace.schema.json`` under the data root.

    Without a data root holding one (an installed wheel run outside a clone), the
    copy shipped in the package.
    """
    try:
        path = find_root(root) / SCHEMA_PATH
    except FileNotFoundError:
        return PACKAGED_SCHEMA
    return path if path.is_file() else PACKAGED_SCHEMA


@lru_cache(maxsize=4)
def _read_schema(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def load_schema(root: str | os.PathLike[str] | None = None) -> dict:
    """The trace schema as a mapping (each file read once per process; do not modify it)."""
    return _read_schema(schema_file(root).resolve())


def enum_of(def_name: str) -> list[str]:
    """The allowed values of a ``$defs`` enum (``event_type`` or ``edge_type``)."""
    return list(load_schema()["$defs"][def_name]["enum"])


def event_types() -> list[str]:
    """Event types in schema order."""
    return enum_of("event_type")


def edge_types() -> list[str]:
    """Edge types in schema order."""
    return enum_of("edge_type")


def decision_ids() -> list[str]:
    """The decisions an ``orchestrator_decision`` event may carry (O1..O5)."""
    return list(load_schema()["$defs"]["event"]["properties"]["decision"]["enum"])


def topology_ids() -> list[str]:
    """The values of a trace's ``topology``."""
    return list(load_schema()["properties"]["topology"]["enum"])


# ------------------------------------------------------------- validators


def inline_refs(node: Any, defs: dict, within: tuple[str, ...] = ()) -> Any:
    """A fresh copy of ``node`` with every ``{"$ref": "#/$defs/x"}`` replaced by ``x`` itself."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if ref is None:
            return {key: inline_refs(value, defs, within) for key, value in node.items()}
        if not ref.startswith("#/$defs/") or len(node) > 1 or ref in within:
            raise ValueError(f"cannot inline $ref {ref!r}: only bare, non-recursive $defs refs")
        return inline_refs(defs[ref.removeprefix("#/$defs/")], defs, (*within, ref))
    if isinstance(node, list):
        return [inline_refs(value, defs, within) for value in node]
    return node


def _scalar_key(value: Any) -> tuple | None:
    """A hashable stand-in for a scalar value (1, 1.0 and True stay apart); None otherwise."""
    return (type(value), value) if isinstance(value, _CACHEABLE) else None


def projection_keys(subschemas: list) -> tuple[str, ...] | None:
    """The properties a list of subschemas can look at, or None if they may look at more.

    Conditionals such as ``if type is spawn then require to`` only read the properties they
    name; any other keyword (``type``, ``additionalProperties``...) could read the whole object.
    """
    keys: set[str] = set()
    stack = list(subschemas)
    while stack:
        node = stack.pop()
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict) or not node.keys() <= _PROJECTABLE:
            return None
        keys.update(node.get("required", ()))
        keys.update(node.get("properties", {}))
        stack += [node[k] for k in ("if", "then", "else", "not") if k in node]
        for k in ("allOf", "anyOf", "oneOf"):
            stack += node.get(k, [])
    return tuple(sorted(keys))


class _Memo:
    """Sub-results known to pass, keyed by subschema id and the (scalar) values they read."""

    def __init__(self) -> None:
        self.passed: set[tuple] = set()
        self.projections: dict[int, tuple[str, ...] | None] = {}

    def remember(self, key: tuple) -> None:
        if len(self.passed) < CACHE_LIMIT:
            self.passed.add(key)

    def projection(self, subschemas: list, instance: Any) -> tuple | None:
        """The values ``subschemas`` can read from ``instance``, if all are scalars."""
        if id(subschemas) not in self.projections:
            self.projections[id(subschemas)] = projection_keys(subschemas)
        keys = self.projections[id(subschemas)]
        if keys is None or not isinstance(instance, dict):
            return None
        parts = [(k, _scalar_key(instance[k])) for k in keys if k in instance]
        if any(part is None for _, part in parts):
            return None
        return (id(subschemas), *parts)


def _memo_validator_class() -> type[Validator]:
    """Draft 2020-12 whose ``properties`` and ``allOf`` skip checks that already passed."""
    plain_properties = Draft202012Validator.VALIDATORS["properties"]
    plain_all_of = Draft202012Validator.VALIDATORS["allOf"]
    memo = _Memo()

    def properties(validator: Validator, props: dict, instance: Any, schema: dict) -> Iterator:
        if not isinstance(instance, dict):
            yield from plain_properties(validator, props, instance, schema)
            return
        for name, subschema in props.items():
            if name not in instance:
                continue
            value = _scalar_key(instance[name])
            key = (id(subschema), value) if value is not None else None
            if key is not None and key in memo.passed:
                continue
            errors = list(validator.descend(instance[name], subschema, path=name, schema_path=name))
            yield from errors
            if not errors and key is not None:
                memo.remember(key)

    def all_of(validator: Validator, subschemas: list, instance: Any, schema: dict) -> Iterator:
        key = memo.projection(subschemas, instance)
        if key is not None and key in memo.passed:
            return
        errors = list(plain_all_of(validator, subschemas, instance, schema))
        yield from errors
        if not errors and key is not None:
            memo.remember(key)

    return validators.extend(Draft202012Validator, {"properties": properties, "allOf": all_of})


@dataclass(frozen=True)
class TraceValidators:
    """A validator for the trace minus its arrays' items, and one per item array."""

    trace: Validator
    items: dict[str, Validator]
    # The remembered results are keyed by id() of these subschemas: keep them alive.
    schema: dict


@lru_cache(maxsize=1)
def trace_validators() -> TraceValidators:
    """Validators built once per process from the schema file."""
    schema = load_schema()
    Draft202012Validator.check_schema(schema)
    shell = inline_refs({k: v for k, v in schema.items() if k != "$defs"}, schema["$defs"])
    cls = _memo_validator_class()
    items = {name: cls(shell["properties"][name].pop("items")) for name in ITEM_ARRAYS}
    return TraceValidators(trace=cls(shell), items=items, schema=shell)
