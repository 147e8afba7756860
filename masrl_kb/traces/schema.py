"""The trace JSON Schema (package data) and the checks compiled from it once per process.

Validation has two tiers that agree by construction:

* a *compiled check* per part of a trace (the trace without its arrays, one event, one edge):
  a plain Python predicate built from the schema's own keywords (``type``, ``minLength``,
  ``minimum``, ``maximum``, ``enum``, ``const``, ``properties``, ``required``,
  ``additionalProperties``, ``items``). It only answers "certainly valid" or "look closer",
  and is conservative: whatever it cannot decide (NaN, a keyword it does not know) it sends on;
* ``jsonschema`` (draft 2020-12), run only on the parts the compiled check did not pass, so
  every message is jsonschema's own.

A valid 1,000,000-event trace therefore never reaches jsonschema.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).parent / "data"
SCHEMA_FILE = DATA_DIR / "trace.schema.json"
# The copy at the repository root that the docs link to; `masrl-kb trace schema` writes it.
SCHEMA_PATH = Path("traces") / "trace.schema.json"
ITEM_ARRAYS = ("events", "edges")

Check = Callable[[Any], bool]
# Keywords that only annotate: they never change a verdict ($id only sets the base of
# references, and every reference is inlined before compiling).
_ANNOTATIONS = frozenset(
    {"description", "title", "$comment", "enumDescriptions", "enumFields", "default"}
    | {"examples", "$schema", "$id"}
)
_COMPILED = frozenset(
    {"type", "minLength", "minimum", "maximum", "enum", "const"}
    | {"properties", "required", "additionalProperties", "items"}
)
# jsonschema's types: a boolean is no number, 1.0 is an integer.
_TYPE_TESTS: dict[str, Check] = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}
_is_number = _TYPE_TESTS["number"]


def schema_file() -> Path:
    """The trace schema shipped with the package."""
    return SCHEMA_FILE


@lru_cache(maxsize=1)
def load_schema() -> dict:
    """The trace schema as a mapping (read once per process; do not modify it)."""
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


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


# ------------------------------------------------------------ compiled checks


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


def _type_check(kind: str | list[str]) -> Check | None:
    names = [kind] if isinstance(kind, str) else kind
    if not set(names) <= _TYPE_TESTS.keys():
        return None
    tests = [_TYPE_TESTS[name] for name in names]
    return tests[0] if len(tests) == 1 else lambda v: any(test(v) for test in tests)


def _strings(values: list) -> frozenset[str] | None:
    return frozenset(values) if all(isinstance(v, str) for v in values) else None


def _leaf_checks(node: dict) -> list[Check] | None:
    """Checks of the scalar keywords, or None when one of them cannot be compiled exactly."""
    checks: list[Check] = []
    if "type" in node:
        type_check = _type_check(node["type"])
        if type_check is None:
            return None
        checks.append(type_check)
    if "minLength" in node:
        n = node["minLength"]
        checks.append(lambda v: not isinstance(v, str) or len(v) >= n)
    if "minimum" in node:
        low = node["minimum"]
        # `v >= low` is False for NaN, so NaN goes on to jsonschema (conservative).
        checks.append(lambda v: not _is_number(v) or v >= low)
    if "maximum" in node:
        high = node["maximum"]
        checks.append(lambda v: not _is_number(v) or v <= high)
    if "enum" in node or "const" in node:
        allowed = _strings(node["enum"] if "enum" in node else [node["const"]])
        if allowed is None:
            return None
        checks.append(lambda v: isinstance(v, str) and v in allowed)
    return checks


def _object_check(node: dict, strict: bool) -> Check:
    props = {name: compile_check(sub) for name, sub in node.get("properties", {}).items()}
    required = frozenset(node.get("required", ()))
    extra_schema = node.get("additionalProperties", True)
    extra = None if extra_schema is True else compile_check(extra_schema)
    names = props.keys()

    def check(value: Any) -> bool:
        if value.__class__ is not dict:
            return not strict and not isinstance(value, dict)
        keys = value.keys()
        if not required <= keys:
            return False
        if extra is None:
            # Only the named properties have rules: check those present.
            for key in names & keys:
                if not props[key](value[key]):
                    return False
            return True
        for key, item in value.items():
            check_item = props.get(key, extra)
            if not check_item(item):
                return False
        return True

    return check


def _items_check(node: dict) -> Check:
    check_item = compile_check(node["items"])
    return lambda v: not isinstance(v, list) or all(map(check_item, v))


def _validator(schema: Any) -> Any:
    """jsonschema's draft 2020-12 validator, imported only when a check needs it."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema)


def _fused_check(node: dict) -> Check | None:
    """One closure for the common leaf shapes (a bounded number, a non-empty string, a
    string enum), or None. Exact-class tests are conservative: a subclass looks closer."""
    kind = node.get("type")
    keys = node.keys() - _ANNOTATIONS
    if kind == "number" and keys <= {"type", "minimum", "maximum"}:
        low = node.get("minimum", -math.inf)
        high = node.get("maximum", math.inf)
        return lambda v: (v.__class__ is int or v.__class__ is float) and low <= v <= high
    if kind == "string" and keys <= {"type", "minLength"}:
        n = node.get("minLength", 0)
        return lambda v: v.__class__ is str and len(v) >= n
    if keys <= {"type", "enum"} and "enum" in node and kind in (None, "string"):
        allowed = _strings(node["enum"])
        if allowed is not None:
            return lambda v: v.__class__ is str and v in allowed
    return None


def compile_check(node: Any) -> Check:
    """A predicate that is True only for values ``node`` accepts (False means "look closer")."""
    if node is True:
        return _always
    if node is False:
        return _never
    if not isinstance(node, dict) or not node.keys() <= _COMPILED | _ANNOTATIONS:
        return _validator(node).is_valid
    fused = _fused_check(node)
    if fused is not None:
        return fused
    checks = _leaf_checks(node)
    if checks is None:
        return _validator(node).is_valid
    if node.get("type") == "object":
        # The object check tests the class itself: it replaces the type check.
        checks = [*checks[1:], _object_check(node, strict=True)]
    elif {"properties", "required", "additionalProperties"} & node.keys():
        checks.append(_object_check(node, strict=False))
    if "items" in node:
        checks.append(_items_check(node))
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) and second(v)
    return lambda v: all(check(v) for check in checks)


# ------------------------------------------------------------------ validators


def _parts() -> dict[str, dict]:
    """The trace without its arrays' items, one event and one edge, each a schema of its own."""
    schema = load_schema()
    shell = inline_refs({k: v for k, v in schema.items() if k != "$defs"}, schema["$defs"])
    items = {name: shell["properties"][name].pop("items") for name in ITEM_ARRAYS}
    return {"trace": shell} | items


@lru_cache(maxsize=1)
def compiled_checks() -> dict[str, Check]:
    """A compiled check per part (``trace``, ``events``, ``edges``), built once per process."""
    return {name: compile_check(part) for name, part in _parts().items()}


@lru_cache(maxsize=4)
def explainer(part: str) -> Any:
    """The jsonschema validator of one part, built only when something failed its check."""
    return _validator(_parts()[part])
