"""Safe YAML loading that keeps line numbers and reports repeated keys (PyYAML
silently keeps the last one). Documents are built straight from the C parser's events,
markedly faster than PyYAML's node graph for many small records, while resolving every
scalar exactly as ``safe_load`` does (same resolver and safe constructors).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode

from masrl_kb.kb.text import shorten, shorten_name

_BaseLoader: Any
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
_INT = "tag:yaml.org,2002:int"
_DECIMAL = re.compile(r"0|[1-9][0-9]*")
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
# A record is a few kilobytes; anything far larger is a mistake or an attack
# (a 5 MB scalar, a link to /dev/zero) and is refused before it is parsed.
MAX_FILE_BYTES = 1 << 20


class LineDict(dict):
    """A mapping that remembers the line of itself and of each key (1-based)."""

    line: int = 0
    key_lines: dict

    def line_of(self, key: Any) -> int:
        """Line of ``key`` if present, else the mapping's own line."""
        return self.key_lines.get(key, self.line)


class WrittenInt(int):
    """A whole number YAML 1.1 reads from text not in plain decimal (``0x7E9``, ``2_025``,
    ``20:15``): ``text`` keeps how it was written, so the record models can refuse it."""

    text: str


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


def _error(message: str, mark: Any) -> yaml.MarkedYAMLError:
    return yaml.constructor.ConstructorError(None, None, message, mark)


def _prefix_path(err: yaml.MarkedYAMLError, step: str) -> None:
    """Record, on the way out, which field a value error happened in (``decisions[0].why``);
    not for syntax errors, which surface after the value at fault."""
    inner = getattr(err, "field_path", "")
    joiner = "" if not inner or inner.startswith("[") else "."
    err.field_path = f"{step}{joiner}{inner}"  # type: ignore[attr-defined]  # our own note


class _Builder:
    """Builds Python values from parser events, recording lines and duplicates."""

    def __init__(self, text: str) -> None:
        self.loader = _BaseLoader(text)
        self.anchors: dict[str, Any] = {}
        self.duplicates: list[YamlProblem] = []

    def scalar(self, ev: Any) -> Any:  # a ScalarEvent (the C parser's marks are untyped)
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
            raise _error(f"tag {shorten(tag)} is not allowed (safe loading only)", ev.start_mark)
        if tag == _TIMESTAMP and not _BaseLoader.timestamp_regexp.match(ev.value):
            # An explicit !!timestamp on text that is no date: PyYAML would crash on it.
            message = f"cannot read {shorten(ev.value, 40)} as a date: expected YYYY-MM-DD"
            raise _error(message, ev.start_mark)
        try:
            value = ctor(
                self.loader, ScalarNode(tag, ev.value, ev.start_mark, ev.end_mark, ev.style)
            )
        except ValueError as err:  # e.g. 2026-02-30, or an integer of 5,000 digits
            kind = tag.rsplit(":", 1)[-1]
            message = f"cannot read {shorten(ev.value, 40)} as a {kind}: {err}"
            raise _error(message, ev.start_mark) from None
        if tag == _INT and not _DECIMAL.fullmatch(ev.value):
            value = WrittenInt(value)
            value.text = ev.value
        return value

    def _check_tag(self, ev: MappingStartEvent | SequenceStartEvent, plain: str) -> None:
        if ev.tag not in (None, "!", plain):
            raise _error(f"tag {shorten(ev.tag)} is not allowed (safe loading only)", ev.start_mark)

    def mapping(self, ev: Any) -> LineDict:  # a MappingStartEvent
        self._check_tag(ev, "tag:yaml.org,2002:map")
        value = LineDict()
        value.line = ev.start_mark.line + 1
        value.key_lines = lines = dict[Any, int]()
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
                message = f"key given twice (first on line {lines[key]})"
                self.duplicates.append(YamlProblem(mark.line + 1, shorten_name(key), message))
            try:
                value[key] = self.node()
            except yaml.constructor.ConstructorError as err:
                _prefix_path(err, shorten_name(key))
                raise
            lines[key] = mark.line + 1
        self.loader.get_event()
        return value

    def sequence(self, ev: SequenceStartEvent) -> list:
        self._check_tag(ev, "tag:yaml.org,2002:seq")
        value: list = []
        if ev.anchor:
            self.anchors[ev.anchor] = value
        while not self.loader.check_event(SequenceEndEvent):
            try:
                value.append(self.node())
            except yaml.constructor.ConstructorError as err:
                _prefix_path(err, f"[{len(value)}]")
                raise
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
                raise _error(f"found undefined alias {shorten(ev.anchor)}", ev.start_mark)
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


# Documents already parsed in this process, by their bytes (parsing is a function of the
# bytes alone): a process that reads the same files again (a site build's pages reading the
# rounds and readers, a test session's copies of one pool) copies the result, ten times
# faster than parsing. Bounded in entries and bytes; each caller gets its own copy.
_PARSED: OrderedDict[bytes, LoadedYaml] = OrderedDict()
_PARSED_ENTRIES = 4096
_PARSED_BYTES = 32 << 20
_PARSED_ONE = 1 << 18  # larger files are parsed each time, never kept
_parsed_size = 0


def _copied(value: Any, seen: dict[int, Any]) -> Any:
    """A copy of a parsed value: new mappings (lines kept) and lists, the same immutable
    scalars; a node reached twice (a YAML alias) is copied once, so sharing is kept."""
    kind = type(value)
    if kind is not LineDict and kind is not list:
        return value  # str, int, float, bool, None, date, datetime, bytes: immutable
    if id(value) in seen:
        return seen[id(value)]
    if kind is list:
        out: list[Any] = []
        seen[id(value)] = out
        out.extend(_copied(v, seen) for v in value)
        return out
    seen[id(value)] = new = LineDict()
    for key, item in value.items():
        new[key] = _copied(item, seen)
    new.line, new.key_lines = value.line, dict(value.key_lines)
    return new


def _copy_of(loaded: LoadedYaml) -> LoadedYaml:
    problems = [YamlProblem(p.line, p.field, p.message) for p in loaded.problems]
    return LoadedYaml(_copied(loaded.data, {}), problems)


def decode_yaml_bytes(raw: bytes) -> LoadedYaml:
    """Parse the bytes of a YAML file; never raises on bad content. The same bytes parsed
    before in this process give a copy of that result."""
    global _parsed_size
    raw = bytes(raw)
    kept = _PARSED.get(raw)
    if kept is not None:
        _PARSED.move_to_end(raw)
        return _copy_of(kept)
    loaded = parse_yaml_bytes(raw)
    if len(raw) <= _PARSED_ONE:
        _PARSED[raw] = _copy_of(loaded)
        _parsed_size += len(raw)
        while len(_PARSED) > _PARSED_ENTRIES or _parsed_size > _PARSED_BYTES:
            _parsed_size -= len(_PARSED.popitem(last=False)[0])
    return loaded


def parse_yaml_bytes(raw: bytes) -> LoadedYaml:
    """:func:`decode_yaml_bytes` without keeping the result, for a worker process that
    parses each file of a large pool once."""
    if b"\x00" in raw:
        problem = YamlProblem(1, "file", "binary content (NUL byte): records must be UTF-8 text")
        return LoadedYaml(None, [problem])
    try:
        return load_yaml_text(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        message = f"not valid UTF-8 (byte 0x{raw[err.start]:02x}): save the file as UTF-8"
        return LoadedYaml(None, [YamlProblem(line, "file", message)])


def load_yaml_text(text: str) -> LoadedYaml:
    """Parse one YAML document, collecting syntax errors and repeated keys."""
    builder = _Builder(text)
    try:
        data = builder.document()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark else 1
        what = " ".join(x for x in (err.context, err.problem) if x)
        what = what if len(what) <= 200 else what[:197] + "..."
        where = getattr(err, "field_path", "") or "yaml"
        return LoadedYaml(None, [YamlProblem(line, where, f"malformed YAML: {what}")])
    except (yaml.YAMLError, ValueError) as err:
        return LoadedYaml(None, [YamlProblem(1, "yaml", f"malformed YAML: {shorten(str(err))}")])
    except RecursionError:
        return LoadedYaml(None, [YamlProblem(1, "yaml", "malformed YAML: nested too deeply")])
    finally:
        builder.loader.dispose()
    return LoadedYaml(data, builder.duplicates)


class UnsafeFileError(OSError):
    """A data file that is not a readable regular file of bounded size."""


_KINDS = (
    (stat.S_ISLNK, "a symbolic link (links are not followed: commit the file itself)"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_regular(mode: int) -> str | None:
    for test, what in _KINDS:
        if test(mode):
            return f"is {what}, not a regular file"
    return None if stat.S_ISREG(mode) else "is not a regular file"


def read_regular_file(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes: never follows a link, blocks
    on a FIFO or device or reads past the limit; else :class:`UnsafeFileError` (one line,
    never the file's content)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise UnsafeFileError("does not exist") from None
    except OSError as err:
        raise UnsafeFileError(f"cannot be read ({err.strerror})") from None
    reason = _not_regular(info.st_mode)
    if reason:
        raise UnsafeFileError(reason)
    if info.st_size > limit:
        raise UnsafeFileError(f"is {info.st_size} bytes; the limit is {limit} bytes")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise UnsafeFileError(_not_regular(stat.S_IFLNK)) from None
        raise UnsafeFileError(f"cannot be read ({err.strerror})") from None
    try:
        # The file may have been swapped between lstat and open: check what we opened.
        reason = _not_regular(os.fstat(fd).st_mode)
        if reason:
            raise UnsafeFileError(reason)
        chunks, total = [], 0
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise UnsafeFileError(f"is more than {limit} bytes; the limit is {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def load_yaml_file(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> LoadedYaml:
    """Read (see :func:`read_regular_file`) and parse a YAML file; bad content or an unsafe
    file comes back as problems, never raised."""
    try:
        raw = read_regular_file(path, limit)
    except UnsafeFileError as err:
        return LoadedYaml(None, [YamlProblem(1, "file", str(err))])
    return decode_yaml_bytes(raw)
