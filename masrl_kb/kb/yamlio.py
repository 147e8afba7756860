"""Safe YAML loading that keeps line numbers and catches repeated keys.

PyYAML silently keeps the last of two equal mapping keys; a record with a key
given twice would lose data without a word, so the loader reports them.

Documents are built straight from the (C) parser's events rather than through
PyYAML's node graph: records are small, there are many of them, and this path
is markedly faster while resolving every scalar exactly as ``safe_load`` does
(same resolver, same safe constructors; unknown tags are refused).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode

try:  # the C parser is several times faster; fall back when libyaml is absent
    _BaseLoader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _BaseLoader = yaml.SafeLoader

_STR = "tag:yaml.org,2002:str"
_RESOLVER_STARTS = set(_BaseLoader.yaml_implicit_resolvers)
_PLAIN_TEXT_STARTS = (
    frozenset()  # a wildcard resolver may claim any scalar
    if None in _RESOLVER_STARTS
    else frozenset(chr(c) for c in range(0x20, 0x250) if chr(c) not in _RESOLVER_STARTS)
)
_MERGE = "tag:yaml.org,2002:merge"


class LineDict(dict):
    """A mapping that remembers the line of itself and of each key (1-based)."""

    line: int = 0
    key_lines: dict

    def line_of(self, key: Any) -> int:
        """Line of ``key`` if present, else the mapping's own line."""
        return self.key_lines.get(key, self.line)


@dataclass
class YamlProblem:
    """A problem found while reading a YAML file."""

    line: int
    field: str
    message: str


@dataclass
class LoadedYaml:
    """The parsed document plus what went wrong on the way."""

    data: Any
    problems: list[YamlProblem] = field(default_factory=list)


def _error(message: str, mark: yaml.Mark) -> yaml.MarkedYAMLError:
    return yaml.constructor.ConstructorError(None, None, message, mark)


class _Builder:
    """Builds Python values from parser events, recording lines and duplicates."""

    def __init__(self, text: str) -> None:
        self.loader = _BaseLoader(text)
        self.anchors: dict[str, Any] = {}
        self.duplicates: list[YamlProblem] = []

    def scalar(self, ev: ScalarEvent) -> Any:
        tag = ev.tag
        if tag is None or tag == "!":
            if not ev.implicit[0] or (ev.value and ev.value[0] in _PLAIN_TEXT_STARTS):
                # Quoted scalars, and plain ones whose first character no implicit
                # resolver claims, are strings: the answer resolve() would give.
                return ev.value
            tag = self.loader.resolve(ScalarNode, ev.value, ev.implicit)
        if tag == _STR:
            return ev.value
        if tag == _MERGE:
            raise _error("merge keys (<<) are not supported in records", ev.start_mark)
        ctor = self.loader.yaml_constructors.get(tag)
        if ctor is None:
            raise _error(f"tag {tag!r} is not allowed (safe loading only)", ev.start_mark)
        return ctor(self.loader, ScalarNode(tag, ev.value, ev.start_mark, ev.end_mark, ev.style))

    def _check_tag(self, ev: MappingStartEvent | SequenceStartEvent, plain: str) -> None:
        if ev.tag not in (None, "!", plain):
            raise _error(f"tag {ev.tag!r} is not allowed (safe loading only)", ev.start_mark)

    def mapping(self, ev: MappingStartEvent) -> LineDict:
        self._check_tag(ev, "tag:yaml.org,2002:map")
        value = LineDict()
        value.line = ev.start_mark.line + 1
        value.key_lines = lines = {}
        if ev.anchor:
            self.anchors[ev.anchor] = value
        while not self.loader.check_event(MappingEndEvent):
            mark = self.loader.peek_event().start_mark
            key = self.node()
            try:
                seen = key in lines
            except TypeError:
                raise _error("a mapping key must be a plain value", mark) from None
            if seen:
                self.duplicates.append(
                    YamlProblem(
                        mark.line + 1, str(key), f"key given twice (first on line {lines[key]})"
                    )
                )
            value[key] = self.node()
            lines[key] = mark.line + 1
        self.loader.get_event()
        return value

    def sequence(self, ev: SequenceStartEvent) -> list:
        self._check_tag(ev, "tag:yaml.org,2002:seq")
        value: list = []
        if ev.anchor:
            self.anchors[ev.anchor] = value
        while not self.loader.check_event(SequenceEndEvent):
            value.append(self.node())
        self.loader.get_event()
        return value

    def node(self) -> Any:
        ev = self.loader.get_event()
        if isinstance(ev, MappingStartEvent):
            return self.mapping(ev)
        if isinstance(ev, SequenceStartEvent):
            return self.sequence(ev)
        if isinstance(ev, AliasEvent):
            if ev.anchor not in self.anchors:
                raise _error(f"found undefined alias {ev.anchor!r}", ev.start_mark)
            return self.anchors[ev.anchor]
        value = self.scalar(ev)
        if ev.anchor:
            self.anchors[ev.anchor] = value
        return value

    def document(self) -> Any:
        self.loader.get_event()  # stream start
        if self.loader.check_event(StreamEndEvent):
            return None
        self.loader.get_event()  # document start
        data = self.node()
        self.loader.get_event()  # document end
        if not self.loader.check_event(StreamEndEvent):
            mark = self.loader.get_event().start_mark
            raise _error("expected one YAML document, found a second one", mark)
        return data


def _decode(raw: bytes) -> tuple[str | None, YamlProblem | None]:
    if b"\x00" in raw:
        return None, YamlProblem(1, "file", "binary content (NUL byte): records must be UTF-8 text")
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        return None, YamlProblem(
            line, "file", f"not valid UTF-8 (byte 0x{raw[err.start]:02x}): save the file as UTF-8"
        )


def load_yaml_text(text: str) -> LoadedYaml:
    """Parse one YAML document, collecting syntax errors and repeated keys."""
    builder = _Builder(text)
    try:
        data = builder.document()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark else 1
        what = " ".join(x for x in (err.context, err.problem) if x)
        return LoadedYaml(None, [YamlProblem(line, "yaml", f"malformed YAML: {what}")])
    except (yaml.YAMLError, ValueError) as err:
        return LoadedYaml(None, [YamlProblem(1, "yaml", f"malformed YAML: {err}")])
    except RecursionError:
        return LoadedYaml(None, [YamlProblem(1, "yaml", "malformed YAML: nested too deeply")])
    finally:
        builder.loader.dispose()
    return LoadedYaml(data, builder.duplicates)


def load_yaml_file(path: str | os.PathLike[str]) -> LoadedYaml:
    """Read and parse a YAML file; never raises on bad content."""
    text, problem = _decode(Path(path).read_bytes())
    if problem is not None:
        return LoadedYaml(None, [problem])
    return load_yaml_text(text)
