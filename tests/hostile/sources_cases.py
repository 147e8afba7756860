"""Hostile answers for ``masrl-kb screen fetch``, served from a loopback JSON stub.

Every adapter (OpenReview, OpenAlex, Semantic Scholar) meets the same group of
behaviours: malformed or non-UTF-8 JSON, NaN, 1e999, a repeated key, deep nesting, a wrong shape, an
oversized body, a gzip bomb, a hung or trickling server, 5xx and 429 answers
(one whose Retry-After points past the deadline). Each must end with one clean
error line, exit 2 (a network failure as an unusable answer) and no
file. Two kinds are accepted: a 429 then a good answer, and text that only
needs cleaning (control and bidi characters), which must reach the CSV clean.

Runs use a 1.5 s deadline and no delay between requests.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.hostile import arxiv_cases
from tests.hostile.running import (
    BIDI,
    CONTROL,
    Judged,
    common_reasons,
    one_error_line,
    run_cli,
    tally,
)
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


# 9 MB of JSON string without a Content-Length (the cap is 8 MB).
oversized = on_handler(arxiv_cases.unbounded(9, start=b'{"x": "', fill=b"a"))


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
    url: str = ""  # the adapter's base URL setting when not the stub's (then never asked)

    @property
    def id(self) -> str:
        return f"{self.adapter.source}/{self.name}"


def _good(adapter: Adapter) -> Behaviour:
    return body((FIXTURES / adapter.good).read_bytes())


def _repeated(adapter: Adapter) -> bytes:
    """The normal answer with its first key given twice (json would keep the second)."""
    raw = (FIXTURES / adapter.good).read_bytes().strip()
    key = next(iter(json.loads(raw)))
    return b"{" + json.dumps(key).encode() + b": null, " + raw[1:]


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
        SourceCase(
            a, "nan-literal", body(b'{"notes": [NaN]}'), "reject", "NaN is not a JSON number"
        ),
        SourceCase(a, "deep-nesting", body(b"[" * 100000), "reject", "nests deeper"),
        SourceCase(a, "repeated-key", body(_repeated(a)), "reject", "appears twice"),
        SourceCase(a, "float-overflow", body(b'{"x": 1e999}'), "reject", "too large for a number"),
        SourceCase(a, "top-level-list", body(b"[]"), "reject", "answer is not an object"),
        SourceCase(a, "wrong-shape", body(a.wrong_shape), "reject", "unexpected answer"),
        SourceCase(a, "impossible-value", body(a.bad_value), "reject", "unexpected answer"),
        SourceCase(a, "oversized", oversized, "reject", "larger than"),
        SourceCase(a, "gzip-bomb", gzip_bomb, "reject", "expands to more than"),
        SourceCase(a, "hung", on_handler(arxiv_cases.silent), "reject", "within 1.5 s", within=4),
        SourceCase(
            a, "trickle", on_handler(arxiv_cases.trickle), "reject", "within 1.5 s", within=4
        ),
        SourceCase(a, "always-503", body(b"{}", 503), "reject", "answered HTTP 503"),
        SourceCase(a, "always-429", busy, "reject", "answered HTTP 429", within=4),
        SourceCase(a, "429-past-deadline", far, "reject", "answered HTTP 429", within=3),
        SourceCase(a, "http-403", body(b'{"error": "Forbidden"}', 403), "reject", "HTTP 403"),
        # Retry-After 0 keeps this case clear of the 1.5 s deadline on a busy machine;
        # tests/test_contrib_sources.py checks that a longer Retry-After is waited out.
        SourceCase(a, "429-then-ok", first_then(now, _good(a)), "accept"),
        SourceCase(a, "sanitised-title", _messy(a), "accept", contains=CLEANED),
    ]
    if a.source == "openalex":
        cases.append(SourceCase(a, "cursor-repeats", repeating_cursor, "reject", "repeats"))
    drip = on_handler(arxiv_cases.drip_headers())
    cases.append(SourceCase(a, "drip-headers", drip, "reject", "within 1.5 s", within=4))
    plain = (FIXTURES / a.good).read_bytes()
    for name, raw, encoding in arxiv_cases.compressed_cases(plain):
        sent = body(raw, headers=[("Content-Encoding", encoding)])
        cases.append(SourceCase(a, name, sent, "reject", f"labelled {encoding}"))
    for name, url in arxiv_cases.BAD_BASE_URLS:
        wrong = SourceCase(a, f"base-url-{name}", _good(a), "reject", a.env, url=url)
        cases.append(wrong)
    return cases


def source_cases() -> list[SourceCase]:
    return [case for adapter in ADAPTERS for case in cases_for(adapter)]


# ---------------------------------------------------------------- running


_CONTROL = CONTROL | BIDI


def _run(case: SourceCase, tmp: Path, out_file: Path):
    from masrl_kb.kb.synthetic import write_synthetic_root

    root = write_synthetic_root(tmp / "kb", papers=2, exclusions=1)
    arxiv_cases._bomb()  # noqa: SLF001 - made before the clock starts
    stub = JsonStub(case.behave)
    env = {
        case.adapter.env: case.url or stub.url,
        "MASRL_KB_SOURCES_DEADLINE": DEADLINE,
        "MASRL_KB_SOURCES_DELAY": "0",
    }
    argv = ["--root", str(root), "screen", "fetch", case.adapter.source, *case.adapter.args]
    try:
        run = run_cli([*argv, "-o", str(out_file)], env)
    finally:
        stub.close()
    if case.url and stub.requests:
        run.err += "\nthe stub was asked, though the base URL is not its own"
    return run


def run_source_case(case: SourceCase, tmp: Path) -> Judged:
    """Run ``screen fetch`` against the case's stub and judge the outcome."""
    folder = tmp / "out"
    folder.mkdir()
    out_file = folder / "candidates.csv"
    run = _run(case, tmp, out_file)
    if run.crash:
        return Judged("crashed", run.crash)
    reasons = common_reasons(run, case.within, _CONTROL)
    left = sorted(p.name for p in folder.iterdir())
    if run.code != 0:
        reasons += filter(None, [one_error_line(run.err, case.message)])
        if run.code != case.code:
            reasons.append(f"exit {run.code}, expected {case.code}")
        if left:
            reasons.append(f"files left: {left}")
        return Judged("unclear" if reasons else "rejected", run.text, reasons)
    if left != ["candidates.csv"]:
        reasons.append(f"expected only the CSV, found {left}")
    else:
        written = out_file.read_text(encoding="utf-8")
        if _CONTROL & set(written):
            reasons.append("the CSV holds control characters")
        if case.contains not in written:
            reasons.append(f"the CSV lacks {case.contains!r}")
    return Judged("accepted", run.text, reasons)


def _verdict(case: SourceCase, outcome: Judged) -> tuple[str, tuple | None]:
    wanted = "rejected" if case.expect == "reject" else "accepted"
    good = outcome.kind == wanted and not outcome.reasons
    kind = "sanitised" if good and case.expect == "accept" else outcome.kind
    if not good and outcome.kind != "crashed":
        kind = "unclear"
    failure = (f"sources/{case.id}", outcome.kind, "; ".join(outcome.reasons))
    return kind, None if good else failure


def source_counts(bad: list) -> dict[str, int]:
    """Counts by outcome for tests/hostile/run_corpus.py; failures appended to ``bad``."""
    return tally(source_cases(), run_source_case, _verdict, bad)
