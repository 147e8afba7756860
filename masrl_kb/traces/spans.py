"""Reading OpenTelemetry spans from a file, whatever layout the exporter wrote (OTLP JSON,
JSON lines or console output: docs/trace-decisions.md); ids come out as lower-case hex."""

from __future__ import annotations

import base64
import binascii
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import IO, Any

from masrl_kb.traces.jsonfile import (
    DuplicateKeyError,
    duplicate_key_message,
    json_error,
    open_regular,
    parse_json,
    read_bounded,
)

MAX_NS = 2**64 - 1
MAX_DEPTH = 32  # nesting of attribute values (arrays, key-value lists)
LINE_LIMIT = 64 * 1024**2  # a longer first line is read as one streamed document
SNIFF_EVENTS = 100_000  # the first keys of the first top-level value decide
SHOWN_IDS = 5
TRACE_ID_BYTES = 16
SPAN_ID_BYTES = 8
# Bounds of the streamed reader, checked on the bytes before the parser sees them: the C
# parser crashes on an integer of 4,301+ digits, and its memory grows with the square of the
# nesting (200,000 brackets took 3 GB). OTLP nests about 10 deep, plus 3 per level of an
# attribute value (MAX_DEPTH levels).
MAX_NESTING = 512
MAX_DIGITS = 64  # a run of digits outside strings (a 64-bit integer has 20)
MAX_SPANS = 2_000_000  # about 5 GB in memory once mapped
READ_CHUNK = 1024**2
# An OTLP document up to this size is parsed whole: faster than streaming, and its parsed
# form is freed span list by span list as the spans are read.
WHOLE_BYTES = 1024**3
SPANS_PREFIX = "resourceSpans.item.scopeSpans.item.spans.item"
RESOURCE_PREFIX = "resourceSpans.item.resource"
_HEX = re.compile(r"(?:0x)?([0-9a-fA-F]+)")
_PLAIN_HEX = re.compile(r"[0-9a-fA-F]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# The bytes the reader's bounds look at: brackets and quotes; digits (as b"1", the rest b"0").
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')
_DIGIT_MAP = bytes(0x31 if 0x30 <= b <= 0x39 else 0 for b in range(256))
_DIGIT_RUN = b"1" * MAX_DIGITS
_TRACE_IDS: dict[str, str] = {}  # trace ids as written -> as hex, already checked


class OtelImportError(ValueError):
    """The file is not span data this importer can map (one line, names the place)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(slots=True)
class Span:
    """The parts of one span the mapping reads (ids are lower-case hex)."""

    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attrs: dict[str, Any]
    links: list[str]
    seq: int
    op: str | None = None  # the GenAI operation (also read from an OpenInference span kind)
    agent: str | None = None  # the agent this span belongs to (its own, for agent spans)
    agent_span: str | None = None  # the nearest agent span enclosing it (not itself)
    parent_agent: str | None = None  # for agent spans: the agent that started it
    parent_agent_span: str | None = None  # for agent spans: the span id of that agent
    aggregate: bool = False  # its token counts sum those of spans below it (counted there)
    # Its token counts and the usage attributes that are no count (None: it reports none).
    usage: tuple[dict[str, int], list[str]] | None = None


@dataclass
class SpanSet:
    """The spans of every trace in a file, and the resource attributes seen per trace."""

    by_trace: dict[str, list[Span]] = field(default_factory=dict)
    resources: dict[str, dict] = field(default_factory=dict)
    seq: int = 0

    def add(self, span: Span, trace_id: str, resource: dict | None) -> None:
        if self.seq >= MAX_SPANS:
            raise OtelImportError(f"$: more than {MAX_SPANS:,} spans; split the file by trace")
        self.by_trace.setdefault(trace_id, []).append(span)
        if resource is not None:
            self.resources.setdefault(trace_id, resource)
        self.seq += 1


# ------------------------------------------------------------------ values


def _list(value: object, where: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise OtelImportError(f"{where}: expected an array")
    return value


def _dict(value: object, where: str) -> dict:
    if not isinstance(value, dict):
        raise OtelImportError(f"{where}: expected an object")
    return value


def hex_id(value: object, where: str, size: int) -> str:
    """A trace or span id as lower-case hex, from ``2 * size`` hex digits (``0x`` allowed) or
    base64 of ``size`` bytes; an all-zero id is invalid (W3C Trace Context)."""
    if not isinstance(value, str) or not value:
        kind = _JSON_KINDS.get(type(value), type(value).__name__)
        raise OtelImportError(f"{where}: expected an id (hex or base64), got {kind}")
    found = None
    if len(value) == 2 * size and _PLAIN_HEX.fullmatch(value):
        found = value.lower()  # the common case, as OTLP/JSON writes ids
    elif (match := _HEX.fullmatch(value)) and len(match.group(1)) == 2 * size:
        found = match.group(1).lower()
    elif len(value) <= 4 * size and _BASE64.fullmatch(value):
        text = value.rstrip("=").replace("-", "+").replace("_", "/")
        try:
            raw = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) == size:
            found = raw.hex()
    if found is None:
        reason = f"is neither a hex id nor base64 of {size} bytes ({2 * size} hex digits)"
        raise OtelImportError(f"{where}: {_quoted(value)} {reason}")
    if not found.strip("0"):
        raise OtelImportError(f"{where}: an all-zero id is invalid")
    return found


def parent_id(value: object, where: str) -> str | None:
    """A parent span id; absent, null or empty for a root span (anything else must be an id:
    ``false``, ``[]`` or ``{}`` are no way of saying "none")."""
    if value is None or value == "":
        return None
    return hex_id(value, where, SPAN_ID_BYTES)


_JSON_KINDS = {bool: "a boolean", list: "an array", dict: "an object", type(None): "null"}
_JSON_KINDS |= {int: "a number", float: "a number"}


def _quoted(value: object) -> str:
    """A value as a message quotes it: its first 40 characters."""
    return repr(str(value)[:40])


def whole_number(value: object, where: str, high: int = 2**63 - 1) -> int:
    """An integer written as a JSON number or a decimal string (OTLP writes 64-bit ones so)."""
    if value.__class__ is str and value.isascii() and value.isdigit() and len(value) <= 20:
        number = int(value)  # the common case: a decimal string of nanoseconds
        if number <= high:
            return number
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise OtelImportError(f"{where}: {_quoted(value)} is not a whole number")
    text = str(value)
    digits = text[1:] if text.startswith("-") else text
    if not digits.isdigit() or not digits.isascii() or len(digits) > 20:
        raise OtelImportError(f"{where}: {_quoted(text)} is not a whole number")
    number = int(text)
    if not -high - 1 <= number <= high:
        raise OtelImportError(f"{where}: {text} is out of range")
    return number


def _too_deep(where: str) -> OtelImportError:
    # The path of a deep value is as long as the nesting: name the attribute it is in.
    cut = where.find(".values")
    return OtelImportError(
        f"{where[:cut] if cut > 0 else where}: attribute values nested deeper than {MAX_DEPTH}"
    )


def any_value(value: object, where: str, depth: int = 0) -> Any:
    """The plain value of an OTLP ``AnyValue`` (``{"stringValue": ...}`` and the like)."""
    if depth > MAX_DEPTH:
        raise _too_deep(where)
    value = _dict(value, where)
    if not value:
        return None
    if len(value) != 1:
        raise OtelImportError(f"{where}: an attribute value has exactly one field")
    [(kind, inner)] = value.items()
    if kind == "stringValue" and isinstance(inner, str):
        return inner
    if kind == "boolValue" and isinstance(inner, bool):
        return inner
    if kind == "intValue" and isinstance(inner, int | str) and not isinstance(inner, bool):
        return whole_number(inner, where)
    if kind == "doubleValue":
        return _double(inner, where)
    if kind == "bytesValue" and isinstance(inner, str):
        try:
            return base64.b64encode(base64.b64decode(inner, validate=True)).decode("ascii")
        except (binascii.Error, ValueError):
            raise OtelImportError(f"{where}: bytesValue is not base64") from None
    if kind == "arrayValue":
        values = _list(_dict(inner, where).get("values"), where + ".values")
        return [any_value(v, f"{where}.values[{i}]", depth + 1) for i, v in enumerate(values)]
    if kind == "kvlistValue":
        return attributes(_dict(inner, where).get("values"), where + ".values", depth + 1)
    raise OtelImportError(f"{where}: unknown attribute value {_quoted(kind)}")


def _double(value: object, where: str) -> float:
    # ijson gives Decimal unless asked for floats; OTLP may also write "NaN"/"Infinity".
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OtelImportError(f"{where}: doubleValue is not a number")
    if not math.isfinite(value):
        raise OtelImportError(f"{where}: doubleValue is not a finite number")
    return value


def attributes(value: object, where: str, depth: int = 0) -> dict[str, Any]:
    """An OTLP ``attributes`` list as a mapping (a repeated key keeps the last value)."""
    result: dict[str, Any] = {}
    for i, item in enumerate(_list(value, where)):
        # The common case first: {"key": "...", "value": {"stringValue": "..."}}.
        if isinstance(item, dict) and len(item) == 2:
            key, inner = item.get("key"), item.get("value")
            if key.__class__ is str and isinstance(inner, dict) and len(inner) == 1:
                text = inner.get("stringValue")
                if text.__class__ is str:
                    result[key] = text
                    continue
                # Then a small intValue, written (as OTLP/JSON does) as a decimal string.
                text = inner.get("intValue")
                if text.__class__ is str and len(text) <= 18 and text.isascii() and text.isdigit():
                    result[key] = int(text)
                    continue
        item = _dict(item, f"{where}[{i}]")
        key = item.get("key")
        if not isinstance(key, str):
            raise OtelImportError(f"{where}[{i}].key: expected a string")
        result[key] = any_value(item.get("value", {}), f"{where}[{i}].value", depth)
    return result


def plain_attributes(value: object, where: str) -> dict[str, Any]:
    """The console exporter's attributes: a plain JSON object of plain values."""
    return plain_value(_dict(value, where), where, -1) if value is not None else {}


def plain_value(value: object, where: str, depth: int = 0) -> Any:
    """A plain JSON value with finite numbers, nested at most :data:`MAX_DEPTH` deep."""
    if depth > MAX_DEPTH:
        raise OtelImportError(f"{where.split('.')[0]}: attribute values nested too deep")
    if isinstance(value, float) and not math.isfinite(value):
        raise OtelImportError(f"{where}: not a finite number")
    if isinstance(value, list):
        return [plain_value(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {key: plain_value(v, f"{where}.{key}", depth + 1) for key, v in value.items()}
    return value


# ------------------------------------------------------------------ one span


def otlp_span(raw: object, where: str, seq: int) -> tuple[Span, str]:
    """One span of an OTLP document and its trace id."""
    raw = _dict(raw, where)
    written = raw.get("traceId")
    # Every span names its trace: each distinct id is checked once.
    trace_id = _TRACE_IDS.get(written) if isinstance(written, str) else None
    if trace_id is None:
        trace_id = hex_id(written, where + ".traceId", TRACE_ID_BYTES)
        if isinstance(written, str) and len(_TRACE_IDS) < SHOWN_IDS * 20:
            _TRACE_IDS[written] = trace_id
    parent = parent_id(raw.get("parentSpanId"), where + ".parentSpanId")
    start = whole_number(raw.get("startTimeUnixNano"), where + ".startTimeUnixNano", MAX_NS)
    end = whole_number(raw.get("endTimeUnixNano"), where + ".endTimeUnixNano", MAX_NS)
    links = []
    for i, link in enumerate(_list(raw.get("links"), where + ".links")):
        lwhere = f"{where}.links[{i}]"
        link = _dict(link, lwhere)
        other = link.get("traceId")
        if other is None or hex_id(other, lwhere + ".traceId", TRACE_ID_BYTES) == trace_id:
            links.append(hex_id(link.get("spanId"), lwhere + ".spanId", SPAN_ID_BYTES))
    span = Span(
        span_id=hex_id(raw.get("spanId"), where + ".spanId", SPAN_ID_BYTES),
        parent_id=parent,
        name=_name(raw.get("name")),
        start_ns=start,
        end_ns=end,
        attrs=attributes(raw.get("attributes"), where + ".attributes"),
        links=links,
        seq=seq,
    )
    _check_times(span, where)
    return span, trace_id


def _name(value: object) -> str:
    return value if isinstance(value, str) else ""


def _check_times(span: Span, where: str) -> None:
    if span.start_ns < 0 or span.end_ns < span.start_ns:
        raise OtelImportError(
            f"{where}: the span ends ({span.end_ns}) before it starts ({span.start_ns})"
        )


def iso_ns(value: object, where: str) -> int:
    """Nanoseconds since the epoch of an ISO 8601 time (the console exporter's times)."""
    if not isinstance(value, str) or len(value) > 64:
        raise OtelImportError(f"{where}: expected an ISO 8601 time")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise OtelImportError(f"{where}: {_quoted(value)} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    micros = (moment - _EPOCH) // timedelta(microseconds=1)
    if micros < 0:
        raise OtelImportError(f"{where}: {value!r} is before 1970")
    return micros * 1000


def console_span(raw: object, where: str, seq: int) -> tuple[Span, str, dict]:
    """One span as ``ReadableSpan.to_json()`` writes it, its trace id and its resource."""
    raw = _dict(raw, where)
    context = _dict(raw.get("context"), where + ".context")
    trace_id = hex_id(context.get("trace_id"), where + ".context.trace_id", TRACE_ID_BYTES)
    parent = parent_id(raw.get("parent_id"), where + ".parent_id")
    links = []
    for i, link in enumerate(_list(raw.get("links"), where + ".links")):
        lwhere = f"{where}.links[{i}].context"
        lctx = _dict(_dict(link, f"{where}.links[{i}]").get("context"), lwhere)
        if hex_id(lctx.get("trace_id"), lwhere + ".trace_id", TRACE_ID_BYTES) == trace_id:
            links.append(hex_id(lctx.get("span_id"), lwhere + ".span_id", SPAN_ID_BYTES))
    resource = _dict(raw.get("resource", {}), where + ".resource")
    span = Span(
        span_id=hex_id(context.get("span_id"), where + ".context.span_id", SPAN_ID_BYTES),
        parent_id=parent,
        name=_name(raw.get("name")),
        start_ns=iso_ns(raw.get("start_time"), where + ".start_time"),
        end_ns=iso_ns(raw.get("end_time"), where + ".end_time"),
        attrs=plain_attributes(raw.get("attributes"), where + ".attributes"),
        links=links,
        seq=seq,
    )
    _check_times(span, where)
    return span, trace_id, plain_attributes(resource.get("attributes"), where + ".resource")


def _add_document(spans: SpanSet, doc: object, where: str) -> None:
    """An OTLP document or a console span, already parsed (one JSON line)."""
    doc = _dict(doc, where)
    if "context" in doc:
        span, trace_id, resource = console_span(doc, where, spans.seq)
        spans.add(span, trace_id, resource)
        return
    if "resourceSpans" not in doc:
        raise OtelImportError(
            f"{where}: no spans (expected resourceSpans[].scopeSpans[].spans[], or a span "
            "with a context)"
        )
    for r, block in enumerate(_list(doc.get("resourceSpans"), where + ".resourceSpans")):
        rwhere = f"{where}.resourceSpans[{r}]"
        block = _dict(block, rwhere)
        resource = _dict(block.get("resource", {}), rwhere + ".resource")
        attrs = attributes(resource.get("attributes"), rwhere + ".resource.attributes")
        for s, scope in enumerate(_list(block.get("scopeSpans"), rwhere + ".scopeSpans")):
            swhere = f"{rwhere}.scopeSpans[{s}]"
            for k, raw in enumerate(_list(_dict(scope, swhere).get("spans"), swhere + ".spans")):
                span, trace_id = otlp_span(raw, f"{swhere}.spans[{k}]", spans.seq)
                spans.add(span, trace_id, attrs)


# ------------------------------------------------------------------ files


class BoundedReader:
    """A binary file as the streaming parser reads it, each chunk checked first: no run of
    :data:`MAX_DIGITS` digits outside strings, brackets nested at most :data:`MAX_NESTING`
    deep. The scan is C-speed byte work (escapes dropped, strings cut out at their quotes,
    brackets collapsed pair by pair), never a Python loop per byte; nesting is bounded from
    above (a chunk's collapsed groups count at the deepest point between its unmatched
    brackets)."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self._reset()

    def _reset(self) -> None:
        self._in_string = False  # the last chunk ended inside a string
        self._escape = False  # ... on a backslash that escapes the next chunk's first byte
        self._digits = 0  # digits outside strings the last chunk ended with
        self._depth = 0

    def seek(self, offset: int) -> int:
        if offset != 0:
            raise ValueError("a BoundedReader only goes back to the start")
        self._reset()
        return self._raw.seek(0)

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        if data:
            self._scan(data)
        return data

    def _unescaped(self, data: bytes) -> bytes:
        """``data`` without escape pairs (``\\\\``, ``\\"``, ``\\n``...): every quote left
        opens or closes a string. Backslash runs pair from the left, as replace() works."""
        if self._escape:
            data, self._escape = data[1:], False
        if b"\\" not in data:
            return data
        odd = (len(data) - len(data.rstrip(b"\\"))) % 2 == 1
        if odd:  # the last backslash escapes the next chunk's first byte
            data, self._escape = data[:-1], True
        return data.replace(b"\\\\", b"").replace(b'\\"', b"")

    def _outside(self, parts: list[bytes], in_string: bool) -> bytes:
        return b"".join(parts[1::2] if in_string else parts[::2])

    def _scan(self, data: bytes) -> None:
        in_string = self._in_string
        text = self._unescaped(data)
        # Brackets and quotes alone; two quotes side by side open and close an empty string,
        # or close one and open the next: dropping them leaves what is outside strings.
        marks = (b'"' if in_string else b"") + text.translate(None, _NOT_STRUCTURE)
        parts = marks.replace(b'""', b"").split(b'"')
        self._in_string = len(parts) % 2 == 0
        self._check_nesting(b"".join(parts[::2]))
        digits = text.translate(_DIGIT_MAP)
        lead = len(digits) - len(digits.lstrip(b"1"))
        if (not in_string and self._digits + lead >= MAX_DIGITS) or _DIGIT_RUN in digits:
            # Digits inside strings count for nothing: look again without them.
            outside = self._outside(text.split(b'"'), in_string).translate(_DIGIT_MAP)
            lead = 0 if in_string else len(outside) - len(outside.lstrip(b"1"))
            if self._digits + lead >= MAX_DIGITS or _DIGIT_RUN in outside:
                raise OtelImportError(f"$: a number of more than {MAX_DIGITS - 1} digits")
        if self._in_string:
            self._digits = 0
        elif lead == len(digits) and not in_string:
            self._digits += lead
        else:
            self._digits = len(digits) - len(digits.rstrip(b"1"))

    def _check_nesting(self, structure: bytes) -> None:
        brackets = structure
        passes = 0
        while brackets:
            shorter = brackets.replace(b"[]", b"").replace(b"{}", b"")
            if len(shorter) == len(brackets):
                break
            brackets, passes = shorter, passes + 1
            if passes > MAX_NESTING:
                break
        opens = brackets.count(b"[") + brackets.count(b"{")
        after = max(self._depth + 2 * opens - len(brackets), 0)
        if max(self._depth, after) + passes > MAX_NESTING:
            raise OtelImportError(f"$: arrays and objects nested more than {MAX_NESTING} deep")
        self._depth = after


def _noting_dict(found: list[str]) -> type[dict]:
    """A dict type that notes each key set twice in ``found`` (raising would be lost: the
    streaming parser's C code does not check for an error from setting a key)."""

    class NotingDict(dict):
        __slots__ = ()

        def __setitem__(self, key: str, value: Any) -> None:
            if key in self:
                found.append(key)
            dict.__setitem__(self, key, value)

    return NotingDict


def _first_line_document(handle: IO[bytes]) -> bool:
    """Whether the file is JSON lines: a first line that is a whole JSON object, and more."""
    first = handle.readline(LINE_LIMIT)
    more = handle.read(4096)
    handle.seek(0)
    if not first.endswith(b"\n") or not more.strip():
        return False
    try:
        return isinstance(parse_json(first.decode("utf-8")), dict)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False


def read_lines(handle: IO[bytes], spans: SpanSet) -> None:
    """JSON lines: each non-blank line one OTLP document or one span."""
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        try:
            doc = parse_json(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise OtelImportError(f"$: {json_error(exc)}", number) from None
        try:
            read_span_document(doc, spans)
        except OtelImportError as exc:
            raise OtelImportError(str(exc), number) from None


def _sniff(handle: BoundedReader) -> str:
    """``otlp`` or ``console`` (or ``console-array``), from the first keys of the file."""
    import ijson

    try:
        events = ijson.parse(handle, multiple_values=True, buf_size=READ_CHUNK)
        for n, (prefix, event, value) in enumerate(events):
            if n == 0 and event == "start_array":
                return "console-array"
            if prefix == "" and event == "map_key":
                if value == "resourceSpans":
                    if (next(events, None) or ("", ""))[1] not in ("start_array", "null"):
                        raise OtelImportError("$.resourceSpans: expected an array")
                    return "otlp"
                if value == "context":
                    return "console"
            if n > SNIFF_EVENTS or (prefix == "" and event == "end_map"):
                break
    finally:
        handle.seek(0)
    raise OtelImportError(
        "$: neither OTLP JSON (resourceSpans) nor OpenTelemetry console spans (context)"
    )


def _items(handle: BoundedReader, prefix: str) -> Iterator[Any]:
    """The values at ``prefix``; a value holding an object that repeats a key is refused."""
    import ijson

    found: list[str] = []
    values = ijson.items(
        handle,
        prefix,
        use_float=True,
        multiple_values=True,
        map_type=_noting_dict(found),
        buf_size=READ_CHUNK,
    )
    for value in values:
        if found:
            raise DuplicateKeyError(found[0])
        yield value


def _whole_otlp(raw: IO[bytes]) -> Any:
    """The file parsed whole (None when it does not parse: the streamed reader then says
    why, in its words)."""
    try:
        return parse_json(read_bounded(raw).decode("utf-8"))
    except (ValueError, RecursionError, UnicodeDecodeError):
        return None


def _whole_spans(doc: dict, spans: SpanSet) -> None:
    """The spans of a parsed OTLP document, read as the streamed reader reads them: spans
    numbered through the file, resources merged, blocks of the wrong shape passed over. Each
    list of raw spans is emptied once read, so the parsed document shrinks as spans grow."""
    merged: dict = {}
    k = 0
    for r, block in enumerate(_list(doc.get("resourceSpans"), "$.resourceSpans")):
        if not isinstance(block, dict):
            continue
        if "resource" in block:
            where = f"$.resourceSpans[{r}].resource"
            merged.update(attributes(_dict(block["resource"], where).get("attributes"), where))
        scopes = block.get("scopeSpans")
        for scope in scopes if isinstance(scopes, list) else []:
            found = scope.get("spans") if isinstance(scope, dict) else None
            if not isinstance(found, list):
                continue
            for raw in found:
                span, trace_id = otlp_span(raw, f"span {k}", spans.seq)
                spans.add(span, trace_id, None)
                k += 1
            found.clear()
    spans.resources = dict.fromkeys(spans.by_trace, merged)


def read_stream(raw: IO[bytes], spans: SpanSet) -> None:
    """One JSON document (or several one after the other), streamed through the bounds of
    :class:`BoundedReader`; an OTLP document of at most :data:`WHOLE_BYTES` is parsed whole
    (the C parser at full speed, and the same reading)."""
    handle = BoundedReader(raw)
    layout = _sniff(handle)
    if layout == "otlp" and os.fstat(raw.fileno()).st_size <= WHOLE_BYTES:
        doc = _whole_otlp(raw)
        if isinstance(doc, dict):
            _whole_spans(doc, spans)
            return
        handle.seek(0)
    if layout == "otlp":
        for k, raw in enumerate(_items(handle, SPANS_PREFIX)):
            span, trace_id = otlp_span(raw, f"span {k}", spans.seq)
            spans.add(span, trace_id, None)
        # Spans carry no index back to their resourceSpans block when streamed: the
        # resources are read in a second pass and stand for the file.
        handle.seek(0)
        merged: dict = {}
        for r, resource in enumerate(_items(handle, RESOURCE_PREFIX)):
            where = f"$.resourceSpans[{r}].resource"
            merged.update(attributes(_dict(resource, where).get("attributes"), where))
        spans.resources = dict.fromkeys(spans.by_trace, merged)
        return
    prefix = "item" if layout == "console-array" else ""
    for k, raw in enumerate(_items(handle, prefix)):
        span, trace_id, resource = console_span(raw, f"span {k}", spans.seq)
        spans.add(span, trace_id, resource)


def _parser_reason(exc: Exception) -> str:
    """The first line of the streaming parser's message (it may come as bytes)."""
    reason = exc.args[0] if exc.args else ""
    if isinstance(reason, bytes):
        reason = reason.decode("utf-8", "replace")
    lines = str(reason).strip().splitlines()
    return lines[0][:200] if lines else "incomplete document"


def read_span_file(path: str | os.PathLike[str]) -> SpanSet:
    """Every span in a file, grouped by trace; raises :class:`OtelImportError`."""
    import ijson

    spans = SpanSet()
    try:
        with open_regular(path) as handle:
            if _first_line_document(handle):
                read_lines(handle, spans)
            else:
                read_stream(handle, spans)
    except DuplicateKeyError as exc:
        raise OtelImportError(f"$: {duplicate_key_message(exc.key)}") from None
    except ijson.JSONError as exc:
        raise OtelImportError(f"$: not valid JSON: {_parser_reason(exc)}") from None
    except (UnicodeDecodeError, RecursionError) as exc:
        raise OtelImportError(f"$: not valid JSON: {type(exc).__name__}") from None
    except MemoryError:
        raise OtelImportError("$: out of memory reading the spans; split the file") from None
    except OSError as exc:
        raise OtelImportError(f"cannot read the file: {exc.strerror or exc}") from None
    return spans


def read_span_document(doc: object, spans: SpanSet | None = None) -> SpanSet:
    """The spans of an already parsed OTLP document (or console span), added to ``spans``."""
    spans = SpanSet() if spans is None else spans
    try:
        _add_document(spans, doc, "$")
    except RecursionError:
        raise OtelImportError("$: nested too deeply") from None
    return spans


def choose_trace(spans: SpanSet, trace_id: str | None) -> tuple[list[Span], str, dict]:
    """The spans of one trace (``trace_id`` as hex or base64, or the only one in the file)."""
    if not spans.by_trace:
        raise OtelImportError("$: no spans (expected resourceSpans[].scopeSpans[].spans[])")
    ids = list(spans.by_trace)
    shown = ", ".join(ids[:SHOWN_IDS]) + (
        f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else ""
    )
    if trace_id is None:
        if len(ids) > 1:
            raise OtelImportError(
                f"$: the file holds {len(ids)} traces ({shown}); choose one with --trace-id"
            )
        chosen = ids[0]
    else:
        chosen = hex_id(trace_id.strip(), "--trace-id", TRACE_ID_BYTES)
        if chosen not in spans.by_trace:
            raise OtelImportError(f"$: no spans of trace {chosen}; the file holds {shown}")
    return spans.by_trace[chosen], chosen, spans.resources.get(chosen, {})
