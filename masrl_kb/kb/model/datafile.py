"""Reading one data file (``taxonomy.yaml``, ``protocol.yaml``, ``claims.yaml``...) as a model.

Records have their own reader; the other data files share this one: load the
YAML safely, refuse a document that is not a mapping in one line naming the
file, then let the model (:func:`.base.validate_mapping`) report every problem.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from masrl_kb.kb.model.base import (
    M,
    describe,
    field_name,
    line_at,
    nested_model,
    problems_of,
    unknown_field,
)
from masrl_kb.kb.problem import Problem
from masrl_kb.kb.yamlio import LineDict, load_yaml_file


def validate_file(
    model: type[M],
    path: str | os.PathLike[str],
    rel: str,
    ctx: Mapping[str, object] | None = None,
    top: str = "file",
) -> tuple[M | None, list[Problem]]:
    """The file at ``path`` as a ``model``, or None and every problem (named ``rel``).

    A document that is not a mapping is one problem on field ``top``, worded
    with the model's fields, rather than a pydantic type error.
    """
    loaded = load_yaml_file(path)  # refuses links, FIFOs, devices and oversized files
    if loaded.problems:
        return None, [Problem(rel, p.line, p.field, p.message) for p in loaded.problems]
    if not isinstance(loaded.data, LineDict):
        got = "an empty file" if loaded.data is None else describe(loaded.data)
        fields = ", ".join(n for n, f in _fields(model).items() if f.is_required())
        return None, [Problem(rel, 1, top, f"expected a mapping with {fields}, got {got}")]
    return validate_data(model, loaded.data, rel, ctx)


def validate_data(
    model: type[M], data: Any, rel: str, ctx: Mapping[str, object] | None = None, prefix: str = ""
) -> tuple[M | None, list[Problem]]:
    """:func:`.base.validate_mapping`, also naming the allowed fields of models inside
    ``dict[str, Model]`` values (``axes.topology.colour``) and under aliases."""
    try:
        return model.model_validate(data, context=ctx), []
    except ValidationError as err:
        found = problems_of(err, data, model, rel, prefix)
        for error in err.errors():
            loc = error["loc"]
            owner = _owner(model, loc[:-1]) if error["type"] == "extra_forbidden" else None
            if owner is not None:
                at = Problem(rel, line_at(data, loc), field_name(loc, prefix), "")
                fix = replace(at, message=unknown_field(loc[-1], _fields(owner)))
                found = [fix if replace(p, message="") == at else p for p in found]
        return None, found


def _fields(model: type[BaseModel]) -> dict[str, FieldInfo]:
    """The model's fields by the name a file spells them (their alias, if any)."""
    return {info.alias or name: info for name, info in model.model_fields.items()}


def _owner(model: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The model holding ``loc``, stepping over the keys of ``dict[str, Model]`` fields."""
    current: type[BaseModel] | None = model
    keyed = False
    for step in loc:
        if isinstance(step, int) or current is None:
            continue
        info = _fields(current).get(step)
        if info is not None:
            current, keyed = nested_model(info.annotation), _keyed(info.annotation)
        elif keyed:
            keyed = False
        else:
            return None
    return current


def _keyed(annotation: object) -> bool:
    """Whether ``annotation`` is a ``dict`` (maybe ``| None``): its next step is a key."""
    return any(get_origin(a) is dict for a in (annotation, *get_args(annotation)))
