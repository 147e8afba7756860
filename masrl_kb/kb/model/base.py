"""Shared machinery of the record models: pydantic errors as ``path:line: field: message``.

Why pydantic (v2) and not msgspec: msgspec decodes faster but stops at the
first error, and ``validate`` must report every problem of a file in one run;
pydantic collects every field's error (nested locations included) and its
JSON Schema generator gives the editor schema. Measured on 1000 synthetic
paper records (``kb/synthetic.py``): see the pydantic/msgspec note in
:mod:`masrl_kb.kb.model.paper`.

How a model is used (the taxonomy is data, so it travels in the context)::

    from masrl_kb.kb.model.base import KbModel, validate_mapping
    from masrl_kb.kb.model.types import Text, Url, axis

    class Entry(KbModel):
        '''One entry of some data file.'''
        name: Text = field("The entry's name.")
        url: Url = field("Where it is described.")
        kind: axis("category") = field("Kind of work.", required=False)

        @model_validator(mode="after")
        def _rules(self) -> Self:   # rules over several fields, typed values
            report(self._findings())   # Finding(loc, message, at=..., ref=...)
            return self

    entry, problems = validate_mapping(Entry, loaded.data, "file.yaml", context(tax))

``problems`` is a list of :class:`~masrl_kb.kb.problem.Problem`; ``entry`` is
the typed object, or None when there was a problem. ``prefix`` names the
place of ``data`` inside its file (``"benchmarks[3]."``). Field types raise
:func:`fail` with the exact message; missing and unknown fields, wrong
containers and ``TODO`` placeholders are worded here, once, with the field's
doc (its ``description``) and a did-you-mean among the model's fields.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    ModelWrapValidatorHandler,
    ValidationError,
    model_validator,
)
from pydantic import Field as _Field
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, InitErrorDetails, PydanticCustomError

from masrl_kb.kb.problem import Problem
from masrl_kb.kb.text import shorten, shorten_name
from masrl_kb.kb.yamlio import LineDict

if TYPE_CHECKING:
    from typing import Optional as Maybe

    from masrl_kb.kb.taxonomy import Taxonomy
else:

    class Maybe:
        """``Maybe[T]``: a field that may be absent but, when given, is a ``T`` (never null).

        mypy reads it as ``T | None`` (absent fields are None); pydantic sees ``T``,
        so an explicit empty value is refused like any other wrong value.
        """

        def __class_getitem__(cls, item: object) -> object:
            return item


PLACEHOLDER = "TODO"
Loc = tuple[str | int, ...]
M = TypeVar("M", bound=BaseModel)
DECIMAL = re.compile(r"0|[1-9][0-9]*")


class KbModel(BaseModel):
    """Base of every record model: unknown fields are errors, values are frozen.

    Whole numbers must be written in plain decimal: YAML 1.1 also reads
    ``0x7E9``, ``0o3751``, ``2_025`` and ``20:15`` as integers, and only the
    loaded mapping (``LineDict.raw``) still knows how a number was written.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="wrap")
    @classmethod
    def _decimal_numbers(cls, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        raw = data.raw if isinstance(data, LineDict) else None
        bad = [
            InitErrorDetails(
                type=_error(f"write the number in plain decimal digits, got {shorten(text)}"),
                loc=(key,),
                input=data[key],
            )
            for key, text in (raw or {}).items()
            if key in _int_fields(cls) and not DECIMAL.fullmatch(text)
        ]
        if not bad:
            return handler(data)
        try:
            handler(data)
        except ValidationError as err:
            bad = [*map(_init_details, err.errors()), *bad]
        raise ValidationError.from_exception_data(cls.__name__, bad)


def _init_details(error: ErrorDetails) -> InitErrorDetails:
    """An error to raise again (custom types are rebuilt from their context)."""
    kind: str | PydanticCustomError = error["type"]
    ctx = error.get("ctx") or {}
    if kind in ("kb", "kb_rules"):
        kind = PydanticCustomError(str(kind), "{message}" if kind == "kb" else "{summary}", ctx)
    return InitErrorDetails(type=kind, loc=error["loc"], input=error["input"], ctx=ctx)


_INT_FIELDS: dict[type, frozenset[str]] = {}


def _int_fields(model: type[BaseModel]) -> frozenset[str]:
    """The model's fields whose type checks a whole number (``Check.kind == "int"``)."""
    found = _INT_FIELDS.get(model)
    if found is None:
        found = _INT_FIELDS[model] = frozenset(
            name
            for name, info in model.model_fields.items()
            if any(getattr(m, "kind", None) == "int" for m in info.metadata)
        )
    return found


def field(doc: str, *, required: bool = True, **kwargs: Any) -> Any:
    """A model field documented by ``doc`` (shown in messages and the schema)."""
    if required:
        return _Field(description=doc, **kwargs)
    return _Field(None, description=doc, **kwargs)


def context(tax: Taxonomy, **more: object) -> dict[str, object]:
    """The validation context the field types read: the taxonomy, and anything else."""
    return {"taxonomy": tax, **more}


# ---------------------------------------------------------------- raising


def _error(message: str) -> PydanticCustomError:
    return PydanticCustomError("kb", "{message}", {"message": message})


def fail(message: str) -> NoReturn:
    """Refuse a value with ``message`` exactly as the user will read it."""
    raise _error(message)


@dataclass(frozen=True)
class Finding:
    """A rule's problem, relative to the model that found it.

    ``loc`` names the field (``("decisions", 1, "id")``); ``at`` is the field whose
    line is reported when ``loc`` is absent from the file (default: ``loc``);
    ``message`` may cite the line of ``ref`` as ``{line}``.
    """

    loc: Loc
    message: str
    at: Loc | None = None
    ref: Loc | None = None


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


def model_at(model: type[BaseModel], loc: Sequence[str | int]) -> type[BaseModel] | None:
    """The model class that holds the last field of ``loc`` (None off the model)."""
    current: type[BaseModel] | None = model
    for step in loc:
        if isinstance(step, int):
            continue
        if current is None or step not in current.model_fields:
            return None
        current = nested_model(current.model_fields[step].annotation)
    return current


def field_at(model: type[BaseModel], loc: Sequence[str | int]) -> FieldInfo | None:
    """The field info of the last field named in ``loc``."""
    names = [i for i, s in enumerate(loc) if isinstance(s, str)]
    if not names:
        return None
    owner = model_at(model, loc[: names[-1]])
    return owner.model_fields.get(str(loc[names[-1]])) if owner else None


def unknown_field(key: object, known: Iterable[str]) -> str:
    """The message for a field the model does not have, with a did-you-mean."""
    known = list(known)
    close = difflib.get_close_matches(str(key), known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    # The field column already echoes the key; a shorter echo keeps the line readable.
    return f"unknown field {shorten(key, 40)}{hint}; allowed fields: {', '.join(known)}"


def _message(error: Mapping[str, Any], model: type[BaseModel]) -> str:
    kind, loc, value = error["type"], error["loc"], error.get("input")
    if kind in ("extra_forbidden", "invalid_key"):
        owner = model_at(model, loc[:-1])
        return unknown_field(loc[-1], owner.model_fields if owner else ())
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
        return f"expected a list of mappings, got {describe(value)}"
    return str(error["msg"])


def problems_of(
    err: ValidationError, data: object, model: type[BaseModel], path: str, prefix: str = ""
) -> list[Problem]:
    """Every error of ``err`` as a ``Problem``, lines taken from ``data`` (a LineDict)."""
    found = []
    for error in err.errors(include_url=False):
        loc: Loc = tuple(error["loc"])
        if error["type"] == "kb_rules":
            for f in error["ctx"]["findings"]:
                line = line_at(data, loc + (f.at or f.loc))
                ref = line_at(data, loc + f.ref) if f.ref else 0
                message = f.message.format(line=ref) if f.ref else f.message
                found.append(Problem(path, line, field_name(loc + f.loc, prefix), message))
            continue
        name = field_name(loc, prefix) or "record"
        found.append(Problem(path, line_at(data, loc), name, _message(error, model)))
    return found


def validate_mapping(
    model: type[M],
    data: object,
    path: str,
    ctx: Mapping[str, object] | None = None,
    prefix: str = "",
) -> tuple[M | None, list[Problem]]:
    """``data`` (a loaded YAML mapping) as a ``model``, or None and every problem in it."""
    try:
        return model.model_validate(data, context=ctx), []
    except ValidationError as err:
        return None, problems_of(err, data, model, path, prefix)


# ---------------------------------------------------------------- partial records


def _without(data: object, loc: Loc) -> object:
    """A copy of ``data`` without the value at ``loc`` (containers along the way copied).

    An item of a list is never dropped alone (later items would change index):
    the list goes instead.
    """
    if isinstance(data, list) and len(loc) > 1 and isinstance(loc[0], int) and loc[0] < len(data):
        return [_without(x, loc[1:]) if i == loc[0] else x for i, x in enumerate(data)]
    if not loc or not isinstance(data, dict) or loc[0] not in data:
        return data
    if len(loc) == 2 and isinstance(loc[1], int):
        loc = loc[:1]
    out = LineDict(data)
    if len(loc) == 1:
        del out[loc[0]]
    else:
        out[loc[0]] = _without(data[loc[0]], loc[1:])
    out.line = getattr(data, "line", 1)
    out.key_lines = getattr(data, "key_lines", {})
    out.raw = {k: v for k, v in getattr(data, "raw", {}).items() if k in out}
    return out


def validate_partial(
    model: type[M],
    data: object,
    path: str,
    ctx: Mapping[str, object] | None = None,
    prefix: str = "",
) -> tuple[M | None, list[Problem]]:
    """Like :func:`validate_mapping`, but the record comes back as far as its values are right.

    When some values are wrong they are reported, then left out and the rest is
    validated again (a few passes), so the model's own rules and the rules over
    records still judge what is well formed: a blank ``provisional`` is reported
    and the URL it should excuse is still checked. The record is None only when
    a required field stays wrong or a rule fails.
    """
    try:
        return model.model_validate(data, context=ctx), []
    except ValidationError as err:
        problems, error = problems_of(err, data, model, path, prefix), err
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
    rules = [_init_details(e) for e in error.errors() if e["type"] == "kb_rules"]
    if rules:  # the rules over what is well formed; a field already reported is not again
        reported = {p.field for p in problems}
        more = ValidationError.from_exception_data(model.__name__, rules)
        problems += [
            p for p in problems_of(more, data, model, path, prefix) if p.field not in reported
        ]
    return None, problems


# Errors no removal can mend: a required field, or a rule over fields that are right.
_KEPT = ("missing", "kb_rules")
