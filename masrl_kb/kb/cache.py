"""A parse cache for record files, keyed by each file's content hash.

Parsing YAML is most of the cost of reading a large pool; an unchanged file
parses to the same value, so ``<root>/.cache/records-v1.json`` keeps each
file's parsed value (line numbers, how non-string scalars were written, read
problems) under the BLAKE2 hash of its bytes. A changed file has a new hash
and is parsed again, alone. The cache is plain JSON, never pickle, and every
entry is checked shape by shape when read: a corrupt or foreign entry is a
miss, not an error. Deleting the folder is always safe.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from masrl_kb.kb.yamlio import LineDict, LoadedYaml, UnsafeFileError, YamlProblem, read_regular_file

CACHE_DIR = ".cache"
CACHE_FILE = "records-v1.json"
# Bump when the parser or this encoding changes what a file parses to.
FORMAT = "masrl-kb-records/1"
MAX_CACHE_BYTES = 1 << 30
# A record has about a hundred values; aliases can make a tiny file a huge tree
# ("billion laughs"): such a file is parsed each time rather than expanded here.
MAX_NODES = 20_000


class _Corrupt(ValueError):
    """An entry that does not have the shape this module writes."""


def content_hash(raw: bytes) -> str:
    """The cache key of a file's bytes."""
    return hashlib.blake2b(raw, digest_size=20).hexdigest()


# ---------------------------------------------------------------- encoding
# str, int, float, bool and None are themselves; a list is ["L", ...items];
# a mapping {"M": line, "K": [[key, key line, value, raw text or null], ...]};
# a date {"D": "YYYY-MM-DD"}; a timestamp {"T": ISO text}.


def _encode(value: Any, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise _Corrupt("too many values to cache")
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, LineDict):
        return {
            "M": value.line,
            "K": [
                [
                    _encode(k, budget),
                    value.key_lines.get(k, value.line),
                    _encode(v, budget),
                    value.raw.get(k),
                ]
                for k, v in value.items()
            ],
        }
    if isinstance(value, list):
        return ["L", *(_encode(v, budget) for v in value)]
    if isinstance(value, dt.datetime):
        return {"T": value.isoformat()}
    if isinstance(value, dt.date):
        return {"D": value.isoformat()}
    raise _Corrupt(f"cannot cache a {type(value).__name__}")


def _decode_mapping(obj: dict) -> LineDict:
    line, pairs = obj["M"], obj["K"]
    if type(line) is not int or not isinstance(pairs, list):
        raise _Corrupt("mapping")
    out = LineDict()
    out.line = line
    out.key_lines = lines = {}
    out.raw = raw = {}
    for pair in pairs:
        if not isinstance(pair, list) or len(pair) != 4:
            raise _Corrupt("mapping entry")
        key, key_line, value, text = pair
        key = _decode(key)
        if type(key_line) is not int or not (text is None or isinstance(text, str)):
            raise _Corrupt("mapping entry")
        out[key] = _decode(value)
        lines[key] = key_line
        if text is not None:
            raw[key] = text
    return out


def _decode(obj: Any) -> Any:
    if obj is None or isinstance(obj, str | bool | int | float):
        return obj
    if isinstance(obj, list):
        if not obj or obj[0] != "L":
            raise _Corrupt("list")
        return [_decode(v) for v in obj[1:]]
    if isinstance(obj, dict) and len(obj) == 2 and "M" in obj:
        return _decode_mapping(obj)
    if isinstance(obj, dict) and len(obj) == 1:
        ((tag, text),) = obj.items()
        if tag == "D" and isinstance(text, str):
            return dt.date.fromisoformat(text)
        if tag == "T" and isinstance(text, str):
            return dt.datetime.fromisoformat(text)
    raise _Corrupt("value")


def encode_loaded(loaded: LoadedYaml) -> list:
    """A parse result as JSON-ready data (raises ValueError if it cannot be kept)."""
    problems = [[p.line, p.field, p.message] for p in loaded.problems]
    return [problems, _encode(loaded.data, [MAX_NODES])]


def decode_loaded(entry: Any) -> LoadedYaml:
    """A parse result from :func:`encode_loaded`'s data (ValueError if malformed)."""
    if not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[0], list):
        raise _Corrupt("entry")
    problems = []
    for p in entry[0]:
        if (
            not isinstance(p, list)
            or len(p) != 3
            or type(p[0]) is not int
            or not all(isinstance(x, str) for x in p[1:])
        ):
            raise _Corrupt("problem")
        problems.append(YamlProblem(*p))
    return LoadedYaml(_decode(entry[1]), problems)


# ---------------------------------------------------------------- the cache file


class ParseCache:
    """Parsed record files of one data root, loaded once and saved once per read."""

    def __init__(self, path: Path | None, entries: dict[str, Any]) -> None:
        self.path = path
        self.entries = entries
        self.used: set[str] = set()
        self.changed = False

    @classmethod
    def open(cls, root: Path) -> ParseCache:
        """The cache of a data root; empty when absent, unreadable or corrupt."""
        path = root / CACHE_DIR / CACHE_FILE
        try:
            data = json.loads(read_regular_file(path, MAX_CACHE_BYTES))
        except (UnsafeFileError, ValueError, RecursionError):
            return cls(path, {})
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return cls(path, {})
        entries = data.get("entries")
        return cls(path, entries if isinstance(entries, dict) else {})

    def get(self, digest: str | None) -> LoadedYaml | None:
        """The cached parse of the file with this hash, or None (absent or corrupt)."""
        entry = self.entries.get(digest)
        if entry is None:
            return None
        try:
            loaded = decode_loaded(entry)
        except (ValueError, KeyError, TypeError, RecursionError):
            del self.entries[digest]
            self.changed = True
            return None
        self.used.add(digest)
        return loaded

    def put(self, digest: str | None, loaded: LoadedYaml) -> None:
        """Keep a fresh parse (values that JSON cannot hold are simply not kept)."""
        if digest is None:
            return
        try:
            self.entries[digest] = encode_loaded(loaded)
        except (ValueError, RecursionError):
            return
        self.used.add(digest)
        self.changed = True

    def save(self) -> None:
        """Write the cache if anything changed, keeping only entries used in this read.

        The write is atomic and best effort: a read-only clone simply has no cache.
        """
        if self.path is None or not (self.changed or set(self.entries) - self.used):
            return
        entries = {k: v for k, v in self.entries.items() if k in self.used}
        try:
            self.path.parent.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".records-", dir=self.path.parent)
        except OSError:
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"format": FORMAT, "entries": entries}, fh, separators=(",", ":"))
            os.replace(tmp, self.path)
        except (OSError, ValueError):
            pass
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
