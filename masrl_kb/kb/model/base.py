"""Shared machinery of the record models: pydantic errors as ``path:line: field: message``.

Pydantic, not msgspec (``bench/bench_model_choice.py``): it reports every problem of a
file, not the first, and generates the editor's JSON Schema. Field types
(:mod:`.types`) word their own messages (:func:`fail`); missing and unknown fields,
wrong containers and ``TODO`` are worded here, with the field's doc.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic import Field as _Field
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, PydanticCustomError

from masrl_kb.kb.problem import Problem
from masrl_kb.kb.text import capped_list, shorten, shorten_name, suggest
from masrl_kb.kb.yamlio import LineDict, LoadedYaml, decode_yaml_bytes, load_yaml_file

if TYPE_CHECKING:
    from typing import Optional as Maybe

    from masrl_kb.kb.taxonomy import Taxonomy
else:

    class Maybe:
        """``Maybe[T]``: a field that may be absent but, when given, is a ``T`` (never null):
        mypy reads ``T | None``, pydantic sees ``T`` (so an empty value is refused)."""

        def __class_getitem__(cls, item: object) -> object:
            return item


PLACEHOLDER = "TODO"
Loc = tuple[str | int, ...]
M = TypeVar("M", bound=BaseModel)


class KbModel(BaseModel):
    """Base of every record model: unknown fields are errors, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


def copy_mapping(data: Mapping[Any, Any], changes: Mapping[Any, Any], drop: Any = None) -> LineDict:
    """A copy of a loaded mapping with some values changed (or ``drop`` removed), lines kept."""
    out = LineDict(data)
    out.update(changes)
    out.pop(drop, None)
    out.line = getattr(data, "line", 1)
    out.key_lines = getattr(data, "key_lines", {})
    return out


def field(doc: str, **kwargs: Any) -> Any:
    """A model field documented by ``doc`` (shown in messages and the schema)."""
    return _Field(description=doc, **kwargs)


def optional(doc: str, **kwargs: Any) -> Any:
    """A field that may be left out, documented like :func:`field`."""
    return _Field(None, description=doc, **kwargs)


def context(tax: Taxonomy, **more: object) -> dict[str, object]:
    """The validation context the field types read: the taxonomy, and anything else."""
    return {"taxonomy": tax, **more}


# ---------------------------------------------------------------- raising


def fail(message: str) -> NoReturn:
    """Refuse a value with ``message`` exactly as the user will read it."""
    raise PydanticCustomError("kb", "{message}", {"message": message})


@dataclass(frozen=True)
class Finding:
    """A rule's problem at field ``loc`` (``("decisions", 1, "id")``), reported on the line
    of ``at`` (default ``loc``); ``message`` may cite the line of ``ref`` as ``{line}``."""

    loc: Loc
    message: str
    at: Loc | None = None
    ref: Loc | None = None


def repeated(loc: Loc, ids: Iterable[object], what: str = "", key: str = "id") -> Iterator[Finding]:
    """A finding on each ``key`` of the list at ``loc`` given again, citing the first."""
    first: dict[object, int] = {}
    for i, value in enumerate(ids):
        j = first.setdefault(value, i)
        if j != i:
            message = f"{what}{shorten(value)} given twice (first on line {{line}})"
            yield Finding((*loc, i, key), message, ref=(*loc, j, key))


def report(findings: Iterable[Finding]) -> None:
    """Raise every finding of a model validator at once (none: return)."""
    found = list(findings)
    if found:
        summary = "; ".join(f.message for f in found)
        raise PydanticCustomError("kb_rules", "{summary}", {"summary": summary, "findings": found})


# ---------------------------------------------------------------- messages


def describe(value: object) -> str:
    """How a value reads in an error message."""
    if value is None:
        return "an empty value"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"number {value!r}"
    if isinstance(value, dt.date):
        return f"date {value.isoformat()}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return shorten(value)


def field_name(loc: Sequence[str | int], prefix: str = "") -> str:
    """``decisions[0].evidence.url`` from a pydantic location."""
    name = prefix.rstrip(".") if prefix else ""
    for step in loc:
        if isinstance(step, int) and name:
            name += f"[{step}]"
        else:
            name += f"{'.' if name else ''}{shorten_name(step)}"
    return name


def line_at(data: object, loc: Sequence[str | int], default: int = 1) -> int:
    """Line of the value at ``loc``: its key's line, else the nearest mapping's own line."""
    node, line = data, data.line if isinstance(data, LineDict) else default
    for step in loc:
        if isinstance(node, LineDict) and step in node:
            line, node = node.line_of(step), node[step]
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
            line = node.line if isinstance(node, LineDict) else line
        else:
            break
    return line


def nested_model(annotation: object) -> type[BaseModel] | None:
    """The model class inside ``annotation`` (``list[Decision] | None`` -> Decision)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for a in get_args(annotation) if (m := nested_model(a))), None)


def fields_by_name(model: type[BaseModel]) -> dict[str, FieldInfo]:
    """The model's fields by the name a file spells them (their alias, if any)."""
    return {info.alias or name: info for name, info in model.model_fields.items()}


def model_at(model: type[BaseModel], loc: Sequence[str | int]) -> type[BaseModel] | None:
    """The model class that holds the last field of ``loc`` (None off the model),
    stepping over list indexes and the keys of ``dict[str, Model]`` fields."""
    current: type[BaseModel] | None = model
    keyed = False
    for step in loc:
        if isinstance(step, int) or current is None:
            continue
        if keyed:  # a key of the dict, not a field
            keyed = False
            continue
        info = fields_by_name(current).get(step)
        if info is None:
            return None
        keyed = any(get_origin(a) is dict for a in (info.annotation, *get_args(info.annotation)))
        current = nested_model(info.annotation)
    return current


def field_at(model: type[BaseModel], loc: Sequence[str | int]) -> FieldInfo | None:
    """The field info of the last field named in ``loc``."""
    names = [i for i, s in enumerate(loc) if isinstance(s, str)]
    if not names:
        return None
    owner = model_at(model, loc[: names[-1]])
    return fields_by_name(owner).get(str(loc[names[-1]])) if owner else None


def required_fields(model: type[BaseModel]) -> str:
    """``id, learned, why``: the fields a mapping of ``model`` must hold."""
    return capped_list([n for n, f in fields_by_name(model).items() if f.is_required()])


def unknown_field(key: object, known: Iterable[str]) -> str:
    """The message for a field the model does not have, with a did-you-mean."""
    # The field column already echoes the key; a shorter echo keeps the line readable, and
    # the allowed fields are capped: the line must not grow with the model.
    return f"unknown field {shorten(key, 40)}{suggest(key, list(known), 'allowed fields')}"


def _message(error: Mapping[str, Any], model: type[BaseModel]) -> str:
    kind, loc, value = error["type"], error["loc"], error.get("input")
    if kind in ("extra_forbidden", "invalid_key"):
        owner = model_at(model, loc[:-1])
        return unknown_field(loc[-1], fields_by_name(owner) if owner else ())
    info = field_at(model, loc)
    doc = f" ({info.description})" if info and info.description else ""
    if kind == "missing":
        return f"missing required field{doc}"
    if isinstance(value, str) and value == PLACEHOLDER:
        return f"unfinished: replace the {PLACEHOLDER} placeholder{doc}"
    if kind == "kb":
        return str(error["ctx"]["message"])
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"expected a mapping of field: value, got {describe(value)}"
    if kind == "list_type":
        sub = nested_model(info.annotation) if info else None
        what = f"{{{required_fields(sub)}}} entries" if sub else "values"
        return f"expected a list of {what}, got {describe(value)}"
    if kind == "too_short":
        return f"expected a non-empty list{doc}"
    return str(error["msg"])


def problems_of(
    err: ValidationError | Iterable[ErrorDetails],
    data: object,
    model: type[BaseModel],
    path: str,
    prefix: str = "",
) -> list[Problem]:
    """Every error of ``err`` as a ``Problem``, lines taken from ``data`` (a LineDict)."""
    found = []
    for error in err.errors(include_url=False) if isinstance(err, ValidationError) else err:
        loc: Loc = tuple(error["loc"])
        if error["type"] == "kb_rules":
            for f in error["ctx"]["findings"]:
                line = line_at(data, loc + (f.at or f.loc))
                ref = line_at(data, loc + f.ref) if f.ref else 0
                message = f.message.replace("{line}", str(ref)) if f.ref else f.message
                found.append(Problem(path, line, field_name(loc + f.loc, prefix), message))
            continue
        name = field_name(loc, prefix) or "record"
        found.append(Problem(path, line_at(data, loc), name, _message(error, model)))
    return found


def validate_file(
    model: type[M],
    path: str | os.PathLike[str],
    rel: str,
    ctx: Mapping[str, object] | None = None,
    top: str = "file",
) -> tuple[M | None, list[Problem]]:
    """The data file at ``path`` (named ``rel``) as a ``model``, or None and every problem
    (a document that is not a mapping: one problem on field ``top``)."""
    loaded = load_yaml_file(path)  # refuses links, FIFOs, devices and oversized files
    return _validate_loaded(model, loaded, rel, ctx, top)


def validate_bytes(
    model: type[M],
    raw: bytes,
    rel: str,
    ctx: Mapping[str, object] | None = None,
    top: str = "file",
) -> tuple[M | None, list[Problem]]:
    """:func:`validate_file` of a file already read (by ``read_regular_file()``)."""
    return _validate_loaded(model, decode_yaml_bytes(raw), rel, ctx, top)


def _validate_loaded(
    model: type[M],
    loaded: LoadedYaml,
    rel: str,
    ctx: Mapping[str, object] | None,
    top: str,
) -> tuple[M | None, list[Problem]]:
    if loaded.problems:
        return None, [Problem(rel, p.line, p.field, p.message) for p in loaded.problems]
    if not isinstance(loaded.data, LineDict):
        got = "an empty file" if loaded.data is None else describe(loaded.data)
        message = f"expected a mapping with {required_fields(model)}, got {got}"
        return None, [Problem(rel, 1, top, message)]
    return validate_mapping(model, loaded.data, rel, ctx)


# ---------------------------------------------------------------- partial records


def _without(data: object, loc: Loc) -> object:
    """A copy of ``data`` without the value at ``loc`` (a list goes whole: dropping one
    item would change the later items' index)."""
    if isinstance(data, list) and len(loc) > 1 and isinstance(loc[0], int) and loc[0] < len(data):
        return [_without(x, loc[1:]) if i == loc[0] else x for i, x in enumerate(data)]
    if not loc or not isinstance(data, dict) or loc[0] not in data:
        return data
    if len(loc) == 2 and isinstance(loc[1], int):
        loc = loc[:1]
    if len(loc) == 1:
        return copy_mapping(data, {}, drop=loc[0])
    return copy_mapping(data, {loc[0]: _without(data[loc[0]], loc[1:])})


def validate_mapping(
    model: type[M],
    data: object,
    path: str,
    ctx: Mapping[str, object] | None = None,
    prefix: str = "",
    partial: bool = False,
) -> tuple[M | None, list[Problem]]:
    """``data`` (a loaded YAML mapping) as a ``model``, or None and every problem in it.
    When ``partial``, wrong values are reported, then left out and the rest validated
    again, so the rules still judge what is well formed (a blank ``provisional`` is
    reported and its URL still checked): the record is None only when a required field
    stays wrong or a rule fails."""
    try:
        return model.model_validate(data, context=ctx), []
    except ValidationError as err:
        problems, error = problems_of(err, data, model, path, prefix), err
    if not partial:
        return None, problems
    for _ in range(3):
        locs = [tuple(e["loc"]) for e in error.errors() if e["type"] not in _KEPT]
        if not locs:
            break
        for loc in locs:
            data = _without(data, loc)
        try:
            return model.model_validate(data, context=ctx), problems
        except ValidationError as err:
            error = err
    # The rules over what is well formed; a field already reported is not again.
    rules = [e for e in error.errors() if e["type"] == "kb_rules"]
    reported = {p.field for p in problems}
    more = problems_of(rules, data, model, path, prefix)
    return None, problems + [p for p in more if p.field not in reported]


# Errors no removal can mend: a required field, or a rule over fields that are right.
_KEPT = ("missing", "kb_rules")
