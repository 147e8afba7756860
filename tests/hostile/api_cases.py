"""Hostile arguments to the public pandas API (every function ``masrl_kb`` exports): each
must be refused with one line of this package's own ``ValueError`` (``QueryError``,
``RootNotFoundError``...), never a pandas or Python error from deep inside, a multi-line
message, a screenful of names or a raw control character (issue 27, item 7).

One probe per (function, argument); it tries every hostile value of that argument's kind
with the other arguments valid, on a small data root.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.hostile.probes import Probe, small_root

MAX_MESSAGE = 600
ESC = "\x1b[2J"

# Argument name -> its kind; every parameter of an exported function must be listed here
# (a new parameter without hostile values fails tests/test_api_args.py).
KINDS = {
    "root": "root",
    "as_of": "date",
    "baseline": "date",
    "papers": "frame",
    "exclusions": "frame",
    "table": "frame",
    "rows": "axis",
    "cols": "axis",
    "axis": "axis",
    "row_value": "value",
    "col_value": "value",
    "strict": "bool",
    "where": "query",
    "author": "author",
    "outside": "count",
    "drafts": "drafts",
    "claims": "claims",
    "crosstabs": "crosstabs",
    "pairs": "pairs",
}
# Valid values of the arguments a function needs, so that one argument is wrong at a time.
GOOD = {
    "rows": "topology",
    "cols": "credit_unit",
    "axis": "topology",
    "row_value": "debate",
    "col_value": "agent",
    "where": "year > 2020",
}


def _hostile(kind: str, tmp: Path) -> list[object]:
    """The hostile values of one kind (the frames are built on first use)."""
    import pandas as pd

    (tmp / "a-file").write_text("not a folder\n", encoding="utf-8")
    (tmp / "no-taxonomy").mkdir(exist_ok=True)
    values: dict[str, list[object]] = {
        "root": [
            5,
            "",
            b"bytes",
            ["x"],
            str(tmp / "missing"),
            str(tmp / "a-file"),
            str(tmp / "no-taxonomy"),
            str(tmp / f"esc{ESC}"),
        ],
        "date": [
            "2026-13-04",
            "2026-02-30",
            "2026-06-031",
            "2026-06-03/2026-07-09",
            "garbage",
            "",
            ESC,
            5,
            2026.5,
            [],
            pd.NaT,
        ],
        "frame": ["papers", [1, 2], 5, pd.Series([1, 2]), pd.DataFrame()],
        "axis": ["nope", "x" * 5000, ESC, 5, ["topology"]],
        "value": ["nope", "x" * 5000, ESC, ["x"], {"a": 1}],
        "bool": ["yes", 2, None],
        "query": [5, b"x", ["a"], "x" * 5000, f"topology == '{ESC}'"],
        "author": [5, "", "Nobody, At All", "x" * 10_000, ESC, ["Amato, Christopher"]],
        "count": [-1, "x", 1.5, True],
        "drafts": ["bogus", 5],
        "pairs": [[("a", "b")], {frozenset({"a"})}, {frozenset({"a", 5})}, "kb"],
        "claims": ["x", [1], 5],
        "crosstabs": ["x", [("a", "b")], [(1, 2, 3)], [("topology", "nope", False)]],
    }
    return values[kind]


def judge(error: BaseException | None) -> str | None:
    """None when ``error`` is a clean refusal: this package's ValueError, one short line,
    no control characters; else what is wrong."""
    if error is None:
        return "accepted"
    kind = type(error)
    if not isinstance(error, ValueError) or kind.__module__.split(".")[0] != "masrl_kb":
        return f"{kind.__module__}.{kind.__name__}: {str(error)[:200]!r}"
    message = str(error)
    if "\n" in message or len(message) > MAX_MESSAGE:
        return f"not one short line ({len(message)} characters): {message[:200]!r}"
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in message):
        return f"raw control character: {message[:200]!r}"
    return None


@functools.cache
def _pool(root: str) -> tuple[Any, Any]:
    import masrl_kb

    return masrl_kb.load_pool(root)


def exported() -> dict[str, Callable[..., Any]]:
    """Every function the package exports."""
    import masrl_kb

    found = {name: getattr(masrl_kb, name) for name in masrl_kb.__all__}
    return {name: f for name, f in found.items() if inspect.isfunction(f)}


def _call(name: str, argument: str, tmp: Path) -> str | None:
    func = exported()[name]
    root = small_root(tmp)
    papers, exclusions = _pool(str(root))
    params = inspect.signature(func).parameters
    base: dict[str, object] = {k: v for k, v in GOOD.items() if k in params}
    base["root"] = str(root)
    if argument != "root":  # frames given: the hostile value is the only wrong one
        base |= {"papers": papers, "exclusions": exclusions}
    base = {k: v for k, v in base.items() if k in params}
    for value in _hostile(KINDS[argument], tmp):
        try:
            func(**{**base, argument: value})
            error: BaseException | None = None
        except Exception as caught:  # noqa: BLE001 - what escapes is what this judges
            error = caught
        if (reason := judge(error)) is not None:
            return f"{name}({argument}={value!r:.60}): {reason}"
    return None


def api_probes() -> list[Probe]:
    probes = []
    for name, func in sorted(exported().items()):
        for argument in inspect.signature(func).parameters:
            run = functools.partial(_call, name, argument)
            probes.append(Probe("api-arguments", f"{name}-{argument}", run))
    return probes
