"""The trace JSON Schema (package data) and the checks compiled from it once per process.

A compiled check per part (the trace without its arrays, one event, one edge) answers
"certainly valid" or "look closer"; only the latter reach ``jsonschema``, for its messages.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).parent / "data"
SCHEMA_FILE = DATA_DIR / "trace.schema.json"  # the trace schema shipped with the package
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


@lru_cache(maxsize=1)
def load_schema() -> dict:
    """The trace schema as a mapping (read once per process; do not modify it)."""
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def enum_of(def_name: str) -> list[str]:
    """The allowed values of a ``$defs`` enum (``event_type`` or ``edge_type``)."""
    return list(load_schema()["$defs"][def_name]["enum"])


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


def _number(node: dict) -> Check:
    low, high = node.get("minimum", -math.inf), node.get("maximum", math.inf)
    # A bool is no number; NaN fails both bounds and goes on to jsonschema.
    return lambda v: (v.__class__ is int or v.__class__ is float) and low <= v <= high


def _string(node: dict) -> Check:
    n = node.get("minLength", 0)
    return lambda v: v.__class__ is str and len(v) >= n


def _enum(node: dict) -> Check | None:
    allowed = frozenset(node["enum"])
    if not all(isinstance(v, str) for v in allowed):
        return None
    return lambda v: v.__class__ is str and v in allowed


def _array(node: dict) -> Check:
    if "items" not in node:
        return lambda v: v.__class__ is list
    check_item = compile_check(node["items"])
    return lambda v: v.__class__ is list and all(map(check_item, v))


def _object(node: dict) -> Check:
    props = {name: compile_check(sub) for name, sub in node.get("properties", {}).items()}
    required = frozenset(node.get("required", ()))
    extra_schema = node.get("additionalProperties", True)
    extra = None if extra_schema is True else compile_check(extra_schema)
    names = props.keys()

    def check(value: Any) -> bool:
        if value.__class__ is not dict or not required <= value.keys():
            return False
        if extra is None:  # only the named properties have rules: check those present
            for key in names & value.keys():
                if not props[key](value[key]):
                    return False
            return True
        for key, item in value.items():
            if not props.get(key, extra)(item):
                return False
        return True

    return check


# Per ``type``, the keywords compiled beside it and the check built from them. Exact-class
# tests are conservative: a subclass of str or dict looks closer.
_SHAPES: dict[str | None, tuple[frozenset[str], Callable[[dict], Check | None]]] = {
    "number": (frozenset({"minimum", "maximum"}), _number),
    "string": (frozenset({"minLength"}), _string),
    "boolean": (frozenset(), lambda node: lambda v: v.__class__ is bool),
    "array": (frozenset({"items"}), _array),
    "object": (frozenset({"properties", "required", "additionalProperties"}), _object),
    None: (frozenset({"enum"}), _enum),
}


def _validator(schema: Any) -> Any:
    """jsonschema's draft 2020-12 validator, imported only when a check needs it."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema)


def compile_check(node: Any) -> Check:
    """A predicate that is True only for values ``node`` accepts (False means "look closer");
    shapes outside :data:`_SHAPES` are left to jsonschema's own ``is_valid``."""
    if isinstance(node, bool):
        return lambda value: node
    kind = node.get("type") if isinstance(node, dict) else False
    shape = _SHAPES.get(kind) if kind is None or isinstance(kind, str) else None
    check = None
    if shape is not None and node.keys() - _ANNOTATIONS - {"type"} <= shape[0]:
        check = shape[1](node)
    return check or _validator(node).is_valid


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
