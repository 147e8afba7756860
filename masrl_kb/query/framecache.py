"""The built papers and exclusions frames of an unchanged pool, kept as columns.

Reading, checking and tabling 10k records costs far more than reading the
table back. ``<root>/.cache/frames-v1.json`` keeps the two frames of the last
valid pool, column by column in JSON (never pickle: a cache file may come
from a stranger), under one hash of every file the read depends on, today's
date and the record and query code (:func:`masrl_kb.kb.cache.pool_fingerprint`).
It is signed with the parse cache's per-user key; anything that does not match
is a miss and the frames are built from the records as usual.
"""

from __future__ import annotations

import datetime as dt
import functools
import gc
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from masrl_kb.kb.cache import CACHE_DIR, pool_fingerprint, read_signed, write_signed

FRAMES_FILE = "frames-v1.json"
FORMAT = "masrl-kb-frames/1"
# A private-use character JSON writes as is (a control character would take six bytes).
_TAG = "\ue000"
_DATE, _TIME = _TAG + "d", _TAG + "t"
_DECODE_ERRORS = (ValueError, KeyError, TypeError, IndexError, RecursionError, OverflowError)


@functools.cache
def _query_code() -> str:
    """A hash of the query code and the Python, pandas and numpy versions."""
    digest = hashlib.blake2b(digest_size=12)
    digest.update(f"{sys.version} {pd.__version__} {np.__version__}".encode())
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()


def pool_key(root: Path) -> str | None:
    """The frames' cache key for this pool, or None when it cannot be cached."""
    return pool_fingerprint(root, _query_code())


# ---------------------------------------------------------------- cell values


_PLAIN = frozenset({str, int, float, bool, type(None)})


def _encode(value: Any, tagged: list[bool]) -> Any:
    """``value`` as JSON data; sets ``tagged[0]`` when it needs the hook to read back."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is list:
        return [_encode(v, tagged) for v in value]
    if kind is dict:
        # A key that is not text, or that starts with the tag, would not read back the same.
        if any(type(k) is not str or k.startswith(_TAG) for k in value):
            raise ValueError("cannot keep a mapping with these keys")
        return {k: _encode(v, tagged) for k, v in value.items()}
    if isinstance(value, str | bool | int | float | dict):  # subclasses would not read back
        raise ValueError(f"cannot keep a {kind.__name__}")
    if kind is dt.datetime:
        tagged[0] = True
        return {_TIME: value.isoformat()}
    if kind is dt.date:
        tagged[0] = True
        return {_DATE: value.isoformat()}
    raise ValueError(f"cannot keep a {kind.__name__}")


def _hook(obj: dict) -> Any:
    if len(obj) == 1:
        if _DATE in obj:
            return dt.date.fromisoformat(obj[_DATE])
        if _TIME in obj:
            return dt.datetime.fromisoformat(obj[_TIME])
    return obj


# ---------------------------------------------------------------- frames


def _encode_series(series: pd.Series, blobs: list[str]) -> list:
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cats = list(dtype.categories)
        return ["cat", series.cat.codes.tolist(), _encode(cats, [False]), dtype.ordered]
    if dtype.kind == "M" and getattr(dtype, "tz", None) is None:
        return ["time", str(dtype), series.to_numpy().view("int64").tolist()]
    if dtype == np.dtype(object):
        # Each object column is a line of its own, parsed with the hook only when it
        # holds a value that plain JSON cannot (most hold plain text, lists and dicts).
        tagged = [False]
        values = _encode(series.tolist(), tagged)
        blobs.append(json.dumps(values, ensure_ascii=False, separators=(",", ":")))
        return ["obj", len(blobs), tagged[0]]
    return ["plain", str(dtype), series.tolist()]


def _decode_series(spec: list, blobs: list[bytes]) -> Any:
    kind = spec[0]
    if kind == "cat":
        _, codes, cats, ordered = spec
        return pd.Categorical.from_codes(codes, categories=cats, ordered=bool(ordered))
    if kind == "time":
        return np.array(spec[2], dtype="int64").view(np.dtype(spec[1]))
    if kind == "obj":
        _, line, tagged = spec
        if type(line) is not int or line < 1:
            raise ValueError("line")
        cells = json.loads(blobs[line], object_hook=_hook if tagged else None)
        values = np.empty(len(cells), dtype=object)
        values[:] = cells
        return values
    if kind == "plain":
        return pd.array(spec[2], dtype=spec[1])
    raise ValueError(f"unknown column kind {kind!r}")


def _encode_frame(frame: pd.DataFrame, blobs: list[str]) -> list:
    index = frame.index
    return [
        [index.name, _encode_series(index.to_series(), blobs)],
        [[name, _encode_series(frame[name], blobs)] for name in frame.columns],
    ]


def _decode_frame(spec: list, blobs: list[bytes]) -> pd.DataFrame:
    (name, index_spec), columns = spec
    if not isinstance(columns, list) or not isinstance(name, str):
        raise ValueError("frame")
    index = pd.Index(_decode_series(index_spec, blobs), name=name)
    data = {}
    for column, column_spec in columns:
        values = _decode_series(column_spec, blobs)
        if len(values) != len(index):
            raise ValueError("column length")
        data[column] = values
    return pd.DataFrame(data, index=index, columns=[c for c, _ in columns])


def _meta(key: str) -> dict[str, str]:
    return {"format": FORMAT, "pool": key}


def _body(papers: pd.DataFrame, exclusions: pd.DataFrame) -> bytes:
    """Both frames as JSON lines: the column layout first, then one line per object column."""
    blobs: list[str] = []
    layout = [_encode_frame(papers, blobs), _encode_frame(exclusions, blobs)]
    lines = [json.dumps(layout, ensure_ascii=False, separators=(",", ":")), *blobs]
    return "\n".join(lines).encode("utf-8")


def _frames_of(body: bytes) -> tuple[pd.DataFrame, pd.DataFrame]:
    blobs = body.split(b"\n")  # JSON text never holds a raw newline
    # Decoding makes only fresh, acyclic objects: collecting cycles meanwhile would
    # walk them again and again (it doubled the time).
    collecting = gc.isenabled()
    gc.disable()
    try:
        papers, exclusions = json.loads(blobs[0])
        return _decode_frame(papers, blobs), _decode_frame(exclusions, blobs)
    finally:
        if collecting:
            gc.enable()


def _same(frame: pd.DataFrame, back: pd.DataFrame) -> bool:
    """Whether a frame read back equals the one kept: values, labels, names and dtypes."""
    return (
        back.equals(frame)
        and back.index.equals(frame.index)
        and back.index.dtype == frame.index.dtype
        and back.index.name == frame.index.name
        and list(back.columns) == list(frame.columns)
        and list(back.dtypes) == list(frame.dtypes)
    )


def read_frames(root: Path, key: str) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The frames kept for the pool with this key, or None (absent, stale, forged, corrupt)."""
    body = read_signed(root / CACHE_DIR / FRAMES_FILE, _meta(key))
    if body is None:
        return None
    try:
        return _frames_of(body)
    except _DECODE_ERRORS:
        return None


def write_frames(root: Path, key: str, papers: pd.DataFrame, exclusions: pd.DataFrame) -> None:
    """Keep both frames for this pool, only if they read back exactly as they are."""
    try:
        body = _body(papers, exclusions)
        if not all(map(_same, (papers, exclusions), _frames_of(body))):
            return
    except _DECODE_ERRORS:
        return
    write_signed(root / CACHE_DIR / FRAMES_FILE, _meta(key), body)
