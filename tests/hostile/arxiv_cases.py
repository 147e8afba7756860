"""Hostile arXiv API answers for ``masrl-kb add``, served from a loopback server.

Two kinds of case:

- ``arxiv/<name>.xml``: an Atom answer with hostile content. Most must be
  refused with one clean line and nothing written; ``sanitised-*`` ones must
  be written with the control characters cleaned out and nothing injected.
- behaviours (made here): a server that trickles, sends a gzip bomb, an
  oversized body, never answers, or fails with 5xx.

``add`` runs with a 1.5 s deadline and no delay between retries.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import io
import os
import shutil
import socket
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from masrl_kb.contrib.sources import arxiv
from masrl_kb.kb.synthetic import write_synthetic_root
from tests.loopback import LoopbackServer, QuietHandler, send_atom

HERE = Path(__file__).resolve().parent / "arxiv"
PAPER_ID = "2410.08115"
DEADLINE = "1.5"


Behaviour = Callable[[BaseHTTPRequestHandler, int], None]  # (handler, request number)


def serve_file(path: Path) -> Behaviour:
    return lambda h, n: send_atom(h, 200, path.read_bytes())


def trickle(h: BaseHTTPRequestHandler, n: int) -> None:
    """Headers at once, then one byte every 0.3 s, forever (until the client leaves)."""
    h.send_response(200)
    h.send_header("Content-Length", "100000")
    h.end_headers()
    with contextlib.suppress(OSError):
        for _ in range(1000):
            h.wfile.write(b"<")
            h.wfile.flush()
            time.sleep(0.3)


def silent(h: BaseHTTPRequestHandler, n: int) -> None:
    """Accept the request and say nothing for a long while."""
    time.sleep(5)


@functools.cache
def _bomb() -> bytes:
    """About 60 KB of gzip that expands to 64 MB (the limit is 4 MB; size is no matter)."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=6) as gz:
        block = b"\0" * (1 << 20)
        for _ in range(64):
            gz.write(block)
    return buf.getvalue()


def gzip_bomb(h: BaseHTTPRequestHandler, n: int) -> None:
    send_atom(h, 200, _bomb(), [("Content-Encoding", "gzip")])


def oversized(h: BaseHTTPRequestHandler, n: int) -> None:
    """A 3 MB body without a Content-Length (so only counting catches it)."""
    h.send_response(200)
    h.send_header("Connection", "close")
    h.end_headers()
    with contextlib.suppress(OSError):
        for _ in range(3 * 16):
            h.wfile.write(b" " * (1 << 16))


def fail_then(status: int, failures: int, then: Behaviour) -> Behaviour:
    def behave(h: BaseHTTPRequestHandler, n: int) -> None:
        if n < failures:
            send_atom(h, status, b"busy")
        else:
            then(h, n)

    return behave


def drop_then(failures: int, then: Behaviour) -> Behaviour:
    def behave(h: BaseHTTPRequestHandler, n: int) -> None:
        if n < failures:
            h.close_connection = True
            h.connection.shutdown(socket.SHUT_RDWR)
        else:
            then(h, n)

    return behave


class Stub:
    """A loopback server running one behaviour; counts the requests it saw."""

    def __init__(self, behave: Behaviour) -> None:
        self.requests = 0
        stub = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                n = stub.requests
                stub.requests += 1
                behave(self, n)

        self._loopback = LoopbackServer(Handler)
        self.url = self._loopback.url

    def close(self) -> None:
        self._loopback.close()


@dataclass(frozen=True)
class ArxivCase:
    name: str
    behave: Behaviour
    expect: str  # "reject" or "sanitise"
    message: str = ""  # a fragment the one-line error must hold
    within: float = 10.0  # seconds the command may take


def arxiv_cases() -> list[ArxivCase]:
    ok = serve_file(Path(__file__).resolve().parents[1] / "fixtures" / "arxiv" / "2410.08115.xml")
    cases = [
        ArxivCase("trickle", trickle, "reject", "no complete answer within 1.5 s", 4),
        ArxivCase("silent", silent, "reject", "no complete answer within 1.5 s", 4),
        ArxivCase("gzip-bomb", gzip_bomb, "reject", "expands to more than"),
        ArxivCase("oversized", oversized, "reject", "larger than"),
        ArxivCase("always-503", fail_then(503, 99, ok), "reject", "answered HTTP 503"),
        ArxivCase("503-then-ok", fail_then(503, 2, ok), "sanitise"),
        ArxivCase("dropped-then-ok", drop_then(1, ok), "sanitise"),
    ]
    for path in sorted(HERE.glob("*.xml")):
        expect = "sanitise" if path.name.startswith("sanitised-") else "reject"
        cases.append(ArxivCase(path.stem, serve_file(path), expect))
    return cases


@dataclass
class ArxivOutcome:
    kind: str  # rejected / unclear / accepted / crashed
    output: str
    reasons: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".cache" not in p.parts
    }


_CONTROL = {chr(c) for c in range(0x20) if c != 0x0A} | {chr(c) for c in range(0x7F, 0xA0)}


def run_arxiv_case(case: ArxivCase, tmp: Path) -> ArxivOutcome:
    """Run ``masrl-kb add`` against the case's server and judge the outcome."""
    from masrl_kb.cli.main import main
    from masrl_kb.kb.validate import validate

    root = write_synthetic_root(tmp / "kb", papers=3, exclusions=1)
    before = _files(root)
    _bomb()  # made before the clock starts
    stub = Stub(case.behave)
    env = {
        arxiv.ENV_ARXIV_URL: stub.url,
        arxiv.ENV_DEADLINE: DEADLINE,
        arxiv.ENV_DELAY: "0",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    out, err = io.StringIO(), io.StringIO()
    start = time.monotonic()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["--root", str(root), "add", PAPER_ID])
    except BaseException:  # noqa: BLE001 - a crash is what this measures
        return ArxivOutcome("crashed", traceback.format_exc())
    finally:
        seconds = time.monotonic() - start
        stub.close()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    text = out.getvalue() + err.getvalue()
    after = _files(root)
    reasons = []
    if seconds > case.within:
        reasons.append(f"took {seconds:.1f} s")
    if "Traceback" in text:
        reasons.append("traceback")
    if _CONTROL & set(text):
        reasons.append("control characters reached the terminal")
    if any(name.rsplit("/", 1)[-1].startswith(".") for name in after):
        reasons.append("a temporary file was left")
    if code != 0:
        errors = [line for line in err.getvalue().splitlines() if line.strip()]
        if len(errors) != 1 or case.message not in errors[0]:
            reasons.append(f"expected one error line holding {case.message!r}")
        if after != before:
            reasons.append("files changed")
        kind = "rejected"
    else:
        new = {name: data for name, data in after.items() if name not in before}
        if len(new) != 1 or _CONTROL & set(next(iter(new.values())).decode("utf-8", "replace")):
            reasons.append("the record holds control characters or is missing")
        report = validate(root)
        wrong = [str(p) for p in report.problems if "unfinished" not in p.message]
        if wrong:
            reasons.append(f"written record breaks a rule: {wrong[0]}")
        kind = "accepted"
    if reasons and kind == "rejected":
        kind = "unclear"
    return ArxivOutcome(kind, text, reasons, seconds)


def arxiv_counts(bad: list) -> dict[str, int]:
    """Counts by outcome for the script; failures appended to ``bad``."""
    counts: dict[str, int] = {}
    for case in arxiv_cases():
        tmp = Path(__import__("tempfile").mkdtemp())
        try:
            outcome = run_arxiv_case(case, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        good = (case.expect == "reject" and outcome.kind == "rejected") or (
            case.expect == "sanitise" and outcome.kind == "accepted" and not outcome.reasons
        )
        kind = outcome.kind if good or outcome.kind == "crashed" else "unclear"
        if case.expect == "sanitise" and good:
            kind = "sanitised"
        counts[kind] = counts.get(kind, 0) + 1
        if not good:
            bad.append((f"arxiv/{case.name}", outcome.kind, "; ".join(outcome.reasons)))
    return counts
