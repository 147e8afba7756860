"""Strict JSON, the one guarded JSON parser of the package: no repeated keys (json keeps the
last value), no NaN, Infinity or 1e999 (they slip past "minimum" and poison sums), and, when
asked, no nesting deeper than a bound. The trace readers (`masrl_kb/traces/jsonfile.py`), the
answers of the scholarly indexes (`masrl_kb/contrib/sources/http.py`) and a round's
``entries.json`` parse through it; each bounds the bytes it reads itself."""

from __future__ import annotations

import json
import math
import re
from typing import Any

# Locating a repeated key scans the text in Python; beyond this size only the key is named.
LOCATE_LIMIT_BYTES = 50 * 1024**2
# A string (a key when a colon follows it) or a bracket: all the locator needs to see.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"(?:[ \t\n\r]*:)?|[{}\[\]]')


class DuplicateKeyError(ValueError):
    """A JSON object names the same key twice (json would silently keep the last value)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is too large for a number")
    return value


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return obj


class TooDeepError(ValueError):
    """The document nests arrays and objects deeper than the bound it was parsed with."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"it nests deeper than {limit} levels")
        self.limit = limit


def nesting_depth(value: object, limit: int) -> int:
    """Nesting depth of a parsed value, stopping once past ``limit`` (iterative: no
    recursion to blow)."""
    deepest, stack = 0, [(value, 1)]
    while stack and deepest <= limit:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(item, dict | list):
            stack.extend(
                (v, depth + 1) for v in (item.values() if isinstance(item, dict) else item)
            )
    return deepest


def parse_json(text: str, max_depth: int | None = None) -> Any:
    """Parse JSON, refusing repeated keys (:class:`DuplicateKeyError`), NaN, Infinity,
    numbers too large for a float (``ValueError``) and, with ``max_depth``, nesting deeper
    than that (:class:`TooDeepError`; the C parser itself raises ``RecursionError`` near
    the interpreter's limit). The C parser's per-object and per-float hooks measured faster
    than a plain parse and a walk."""
    value = json.loads(
        text,
        object_pairs_hook=_unique_pairs,
        parse_constant=_reject_constant,
        parse_float=_finite_float,
    )
    if max_depth is not None and nesting_depth(value, max_depth) > max_depth:
        raise TooDeepError(max_depth)
    return value


def repeated_key_position(text: str) -> tuple[int, int] | None:
    """Line and column of the first object to close with a repeated key, the one
    :func:`parse_json` names (a scan of the strings and brackets of the text)."""
    open_objects: list[tuple[int, set[str]]] = []
    repeating: set[int] = set()  # where the open objects with a repeated key start
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in ("{", "["):
            open_objects.append((match.start(), set()))
        elif token.endswith(":") and open_objects:
            start, keys = open_objects[-1]
            key = json.loads(token[: token.rindex('"') + 1])
            if key in keys:
                repeating.add(start)
            keys.add(key)
        elif token in ("}", "]") and open_objects:
            start, _ = open_objects.pop()
            if start in repeating:
                line = text.count("\n", 0, start) + 1
                return line, start - (text.rfind("\n", 0, start) + 1) + 1
    return None


def duplicate_key_message(key: str, text: str | None = None) -> str:
    """The message for an object that repeats ``key``; located in ``text`` when it is given
    and not too long to scan."""
    where = ""
    if text is not None and len(text) <= LOCATE_LIMIT_BYTES:
        position = repeated_key_position(text)
        if position is not None:
            where = f" (object at line {position[0]} column {position[1]})"
    return (
        f"not valid JSON{where}: the key {json.dumps(key)} appears twice in one object "
        "(only one value can count)"
    )


def json_error(exc: Exception, text: str | None = None) -> str:
    """One line on why JSON did not parse; ``text`` is the whole document (positions by line
    and column), else the caller names the line and only a column is given."""
    if isinstance(exc, DuplicateKeyError):
        return duplicate_key_message(exc.key, text)
    if isinstance(exc, json.JSONDecodeError) and text is not None:
        return f"not valid JSON (line {exc.lineno} column {exc.colno}): {exc.msg}"
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON: {exc.msg} (column {exc.colno})"
    reason = (str(exc).splitlines() or [type(exc).__name__])[0]
    return f"not valid JSON: {reason if text is not None else reason[:200]}"
