"""Hostile answers for ``masrl-kb screen fetch``, served from a loopback JSON stub.

Every adapter (OpenReview, OpenAlex, Semantic Scholar) meets the same group of
behaviours: malformed or non-UTF-8 JSON, NaN, deep nesting, a wrong shape, an
oversized body, a gzip bomb, a hung or trickling server, 5xx and 429 answers
(one whose Retry-After points past the deadline). Each must end with one clean
error line, the documented exit code (1: network, 2: unusable answer) and no
file. Two kinds are accepted: a 429 then a good answer, and text that only
needs cleaning (control and bidi characters), which must reach the CSV clean.

Runs use a 1.5 s deadline and no delay between requests.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.hostile import arxiv_cases
from tests.loopback import JsonStub, send_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sources"
DEADLINE = "1.5"
WINDOW = ["--since", "2026-05-04", "--until", "2026-11-30"]

Behaviour = Callable[[object, int], tuple | None]  # (request, n) -> (status, body, headers)


@dataclass(frozen=True)
class Adapter:
    source: str
    env: str
    args: tuple[str, ...]
    good: str  # fixture file of a normal answer
    wrong_shape: bytes  # JSON with one field of the wrong type
    bad_value: bytes  # well-typed JSON with an impossible value
    messy: Callable[[dict], None]  # puts control characters into a normal answer's title


def _title(path: tuple) -> Callable[[dict], None]:
    def edit(answer: dict) -> None:
        node = answer
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = "Clean\x1b[2J me\u202e now\r\nplease (fixture)"

    return edit


CLEANED = "Clean [2J me now please (fixture)"

ADAPTERS = [
    Adapter(
        "openreview",
        "MASRL_KB_OPENREVIEW_URL",
        (
            "--venue",
            "Example.cc/2026/Conference",
            "--keyword",
            "clean",
            "--keyword",
            "orchestrator",
        ),
        "openreview_notes_1.json",
        b'{"notes": {"id": "x"}, "count": 1}',
        b'{"notes": [{"id": "a", "forum": "a", "odate": 100000000000000000000000,'
        b' "content": {"title": {"value": "orchestration"}}}]}',
        _title(("notes", 0, "content", "title", "value")),
    ),
    Adapter(
        "openalex",
        "MASRL_KB_OPENALEX_URL",
        ("--query", "agents", *WINDOW),
        "openalex_search_2.json",
        b'{"meta": {"next_cursor": null}, "results": [{"id": 7}]}',
        b'{"meta": {"next_cursor": null}, "results": [{"id": "https://openalex.org/W1",'
        b' "title": "t", "abstract_inverted_index": {"w": [1000000000]}}]}',
        _title(("results", 0, "title")),
    ),
    Adapter(
        "semantic-scholar",
        "MASRL_KB_S2_URL",
        tuple(WINDOW),
        "s2_recommendations.json",
        b'{"recommendedPapers": [{"title": ["not", "text"]}]}',
        b'{"recommendedPapers": [{"title": "t", "externalIds": {"DOI": 10.5}}]}',
        _title(("recommendedPapers", 0, "title")),
    ),
]


def body(raw: bytes, status: int = 200, headers=()) -> Behaviour:
    return lambda request, n: (status, raw, list(headers))


def on_handler(behave) -> Behaviour:
    """An arXiv-corpus behaviour (writing to the handler itself) for the JSON stub."""

    def run(request, n):
        behave(request.handler, n)

    return run


def oversized(request, n) -> None:
    """9 MB of JSON string without a Content-Length (the cap is 8 MB)."""
    h = request.handler
    h.send_response(200)
    h.send_header("Connection", "close")
    h.end_headers()
    with contextlib.suppress(OSError):
        h.wfile.write(b'{"x": "')
        for _ in range(9 * 16):
            h.wfile.write(b"a" * (1 << 16))


def gzip_bomb(request, n) -> None:
    send_json(request.handler, 200, arxiv_cases._bomb(), [("Content-Encoding", "gzip")])  # noqa: SLF001


def first_then(first: Behaviour, then: Behaviour, times: int = 1) -> Behaviour:
    return lambda request, n: first(request, n) if n < times else then(request, n)


def repeating_cursor(request, n):
    raw = b'{"meta": {"next_cursor": "SAME"}, "results": [{"id": "https://openalex.org/W1"}]}'
    return 200, raw, []


@dataclass(frozen=True)
class SourceCase:
    adapter: Adapter
    name: str
    behave: Behaviour
    expect: str  # "reject" or "accept"
    message: str = ""  # a fragment the one error line must hold
    code: int = 2
    within: float = 10.0
    contains: str = ""  # text an accepted CSV must hold

    @property
    def id(self) -> str:
        return f"{self.adapter.source}/{self.name}"


def _good(adapter: Adapter) -> Behaviour:
    return body((FIXTURES / adapter.good).read_bytes())


def _messy(adapter: Adapter) -> Behaviour:
    answer = json.loads((FIXTURES / adapter.good).read_text(encoding="utf-8"))
    adapter.messy(answer)
    return body(json.dumps(answer).encode())


def cases_for(a: Adapter) -> list[SourceCase]:
    busy = body(b'{"error": "Too Many Requests"}', 429, [("Retry-After", "1")])
    now = body(b'{"error": "Too Many Requests"}', 429, [("Retry-After", "0")])
    far = body(b'{"error": "Too Many Requests"}', 429, [("Retry-After", "3600")])
    cases = [
        SourceCase(a, "malformed-json", body(b'{"results": [{"id": '), "reject", "not valid JSON"),
        SourceCase(a, "not-utf8", body(b'{"t": "\xff\xfe"}'), "reject", "not UTF-8"),
        SourceCase(a, "nan-literal", body(b'{"notes": [NaN]}'), "reject", "NaN is not JSON"),
        SourceCase(a, "deep-nesting", body(b"[" * 100000), "reject", "nests deeper"),
        SourceCase(a, "top-level-list", body(b"[]"), "reject", "answer is not an object"),
        SourceCase(a, "wrong-shape", body(a.wrong_shape), "reject", "unexpected answer"),
        SourceCase(a, "impossible-value", body(a.bad_value), "reject", "unexpected answer"),
        SourceCase(a, "oversized", oversized, "reject", "larger than", 1),
        SourceCase(a, "gzip-bomb", gzip_bomb, "reject", "expands to more than", 1),
        SourceCase(a, "hung", on_handler(arxiv_cases.silent), "reject", "within 1.5 s", 1, 4),
        SourceCase(a, "trickle", on_handler(arxiv_cases.trickle), "reject", "within 1.5 s", 1, 4),
        SourceCase(a, "always-503", body(b"{}", 503), "reject", "answered HTTP 503", 1),
        SourceCase(a, "always-429", busy, "reject", "answered HTTP 429", 1, 4),
        SourceCase(a, "429-past-deadline", far, "reject", "answered HTTP 429", 1, 3),
        SourceCase(a, "http-403", body(b'{"error": "Forbidden"}', 403), "reject", "HTTP 403", 1),
        # Retry-After 0 keeps this case clear of the 1.5 s deadline on a busy machine;
        # tests/test_contrib_sources.py checks that a longer Retry-After is waited out.
        SourceCase(a, "429-then-ok", first_then(now, _good(a)), "accept"),
        SourceCase(a, "sanitised-title", _messy(a), "accept", contains=CLEANED),
    ]
    if a.source == "openalex":
        cases.append(SourceCase(a, "cursor-repeats", repeating_cursor, "reject", "repeats"))
    return cases


def source_cases() -> list[SourceCase]:
    return [case for adapter in ADAPTERS for case in cases_for(adapter)]


# ---------------------------------------------------------------- running


@dataclass
class SourceOutcome:
    kind: str  # rejected / unclear / accepted / crashed
    output: str
    reasons: list[str] = field(default_factory=list)


_CONTROL = {chr(c) for c in range(0x20) if c != 0x0A} | {chr(c) for c in range(0x7F, 0xA0)}
_CONTROL |= {"\u202e", "\u202d", "\u2066", "\u2067", "\u2068", "\u2069"}


def _run(case: SourceCase, tmp: Path, out_file: Path) -> tuple[int, str, str, float]:
    from masrl_kb.cli.main import main
    from masrl_kb.kb.synthetic import write_synthetic_root

    root = write_synthetic_root(tmp / "kb", papers=2, exclusions=1)
    arxiv_cases._bomb()  # noqa: SLF001 - made before the clock starts
    stub = JsonStub(case.behave)
    env = {
        case.adapter.env: stub.url,
        "MASRL_KB_SOURCES_DEADLINE": DEADLINE,
        "MASRL_KB_SOURCES_DELAY": "0",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    out, err = io.StringIO(), io.StringIO()
    start = time.monotonic()
    argv = ["--root", str(root), "screen", "fetch", case.adapter.source, *case.adapter.args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([*argv, "-o", str(out_file)])
    finally:
        seconds = time.monotonic() - start
        stub.close()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return code, out.getvalue(), err.getvalue(), seconds


def run_source_case(case: SourceCase, tmp: Path) -> SourceOutcome:
    """Run ``screen fetch`` against the case's stub and judge the outcome."""
    folder = tmp / "out"
    folder.mkdir()
    out_file = folder / "candidates.csv"
    try:
        code, out, err, seconds = _run(case, tmp, out_file)
    except BaseException:  # noqa: BLE001 - a crash is what this measures
        return SourceOutcome("crashed", traceback.format_exc())
    text = out + err
    reasons = []
    if seconds > case.within:
        reasons.append(f"took {seconds:.1f} s")
    if "Traceback" in text:
        reasons.append("traceback")
    if _CONTROL & set(text):
        reasons.append("control characters reached the terminal")
    left = sorted(p.name for p in folder.iterdir())
    if code != 0:
        errors = [line for line in err.splitlines() if line.strip()]
        if len(errors) != 1 or case.message not in errors[0]:
            reasons.append(f"expected one error line holding {case.message!r}: {errors[:3]}")
        if code != case.code:
            reasons.append(f"exit {code}, expected {case.code}")
        if left:
            reasons.append(f"files left: {left}")
        return SourceOutcome("unclear" if reasons else "rejected", text, reasons)
    if left != ["candidates.csv"]:
        reasons.append(f"expected only the CSV, found {left}")
    else:
        written = out_file.read_text(encoding="utf-8")
        if _CONTROL & set(written):
            reasons.append("the CSV holds control characters")
        if case.contains not in written:
            reasons.append(f"the CSV lacks {case.contains!r}")
    return SourceOutcome("accepted", text, reasons)


def source_counts(bad: list) -> dict[str, int]:
    """Counts by outcome for tests/hostile/run_corpus.py; failures appended to ``bad``."""
    counts: dict[str, int] = {}
    for case in source_cases():
        tmp = Path(tempfile.mkdtemp())
        try:
            outcome = run_source_case(case, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        wanted = "rejected" if case.expect == "reject" else "accepted"
        good = outcome.kind == wanted and not outcome.reasons
        kind = "sanitised" if good and case.expect == "accept" else outcome.kind
        if not good and outcome.kind != "crashed":
            kind = "unclear"
        counts[kind] = counts.get(kind, 0) + 1
        if not good:
            bad.append((f"sources/{case.id}", outcome.kind, "; ".join(outcome.reasons)))
    return counts
