"""Edits of a record's top-level fields that keep every other line byte for byte, and the
comments beside and inside an edited field.

Where each field starts comes from the project's safe loader (:func:`load_yaml_text`, the
lines of the keys it read); only the lines of an edited field go through ruamel.yaml's
round trip, which keeps their comments (an end-of-line comment, one between list items)
and the field's list indentation. A whole-file round trip is not used: it re-folds long
values and evens out list indentation, so it would rewrite lines of most real records
that no edit touched. ruamel reads YAML 1.1 here, as the loader does, so a new value such
as ``yes`` or ``0777`` is written quoted and reads back as the text it is. The caller
reads the edited text back with the safe loader and compares it: ruamel never decides
what a record holds.
"""

from __future__ import annotations

import io
import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from masrl_kb.kb.yamlio import LineDict, load_yaml_text

WIDTH = 88  # the line width new values are folded to, as the record template's
_DIRECTIVE = "%YAML 1.1\n---\n"
_INDENTED_ITEM = re.compile(r"^ {2}- ")


def _yaml(indented: bool) -> YAML:
    rt = YAML(typ="rt", pure=True)
    rt.version = (1, 1)  # the safe loader's resolution: ``yes`` is a boolean, ``0777`` octal
    rt.preserve_quotes = True
    rt.width = WIDTH
    if indented:  # "key:\n  - item" rather than "key:\n- item"
        rt.indent(mapping=2, sequence=4, offset=2)
    return rt


def _dumped(rt: YAML, doc: Any) -> list[str]:
    out = io.StringIO()
    rt.dump(doc, out)
    text = out.getvalue()
    return text.removeprefix(_DIRECTIVE).splitlines()


def _key_lines(text: str) -> dict[str, int]:
    """Line index (0-based) of each top-level key, as the safe loader read them; {} when
    the text is not a mapping it reads."""
    loaded = load_yaml_text(text)
    data = loaded.data
    if not isinstance(data, LineDict):
        return {}
    return {str(k): data.line_of(k) - 1 for k in data}


def _loose(line: str) -> bool:
    """A line that is part of no value: blank, a comment, or a document marker."""
    return not line.strip() or line.startswith("#") or line.rstrip() in ("---", "...")


def _spans(lines: list[str], starts: dict[str, int]) -> dict[str, tuple[int, int]]:
    """Line indexes [start, end) of each top-level field: to the next field, less the
    blank and comment lines before it (they belong to no value, or to the next field)."""
    order = sorted(starts.items(), key=lambda kv: kv[1])
    spans: dict[str, tuple[int, int]] = {}
    for i, (name, start) in enumerate(order):
        end = order[i + 1][1] if i + 1 < len(order) else len(lines)
        while end > start + 1 and _loose(lines[end - 1]):
            end -= 1
        spans[name] = (start, end)
    return spans


def _merged(old: Any, new: object) -> object:
    """``new``, keeping ``old``'s items (and the comments ruamel hangs on them) where they
    are equal: a list is changed item by item, anything else replaced."""
    if not isinstance(old, list) or not isinstance(new, list):
        return new
    for i, item in enumerate(new[: len(old)]):
        if old[i] != item:
            old[i] = item
    del old[len(new) :]
    old.extend(new[len(old) :])
    return old


def _field_lines(name: str, value: object, old: list[str]) -> list[str]:
    """The lines of ``name: value``; with ``old`` (the field's present lines) its comments
    and list indentation are kept."""
    rt = _yaml(any(_INDENTED_ITEM.match(line) for line in old[1:]))
    doc: Any = None
    if old:
        try:
            doc = rt.load("\n".join(old) + "\n")
        except YAMLError:  # e.g. an alias of an anchor in another field: no comment kept
            doc = None
    if not isinstance(doc, dict) or list(doc) != [name]:
        return _dumped(rt, {name: value})
    doc[name] = _merged(doc[name], value)
    return _dumped(rt, doc)


def edit_fields(text: str, values: dict[str, object], after: dict[str, str]) -> str:
    """``text`` with each top-level field in ``values`` replaced (None: removed); an absent
    field is inserted after the field ``after[name]`` names (else at the end)."""
    lines = text.splitlines()
    for name, value in values.items():
        spans = _spans(lines, _key_lines("\n".join(lines) + "\n"))
        span = spans.get(name)
        if span is not None:
            lines[span[0] : span[1]] = (
                [] if value is None else _field_lines(name, value, lines[span[0] : span[1]])
            )
        elif value is not None:
            anchor = spans.get(after.get(name, ""))
            at = anchor[1] if anchor else len(lines)
            lines[at:at] = _field_lines(name, value, [])
    return "\n".join(lines) + "\n"
