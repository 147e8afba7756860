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
import socket
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from masrl_kb.contrib.sources import arxiv
from masrl_kb.kb.synthetic import write_synthetic_root
from tests.hostile.running import (
    CONTROL,
    Judged,
    common_reasons,
    files,
    one_error_line,
    run_cli,
    tally,
)
from tests.loopback import Stub as LoopbackStub
from tests.loopback import send, send_atom

HERE = Path(__file__).resolve().parent / "arxiv"
PAPER_ID = "2410.08115"
DEADLINE = "1.5"


Behaviour = Callable[[BaseHTTPRequestHandler, int], None]  # (handler, request number)


def serve_file(path: Path) -> Behaviour:
    return lambda h, n: send_atom(h, 200, path.read_bytes())


def trickling(every: float, times: int) -> Behaviour:
    """Headers at once, then one byte every ``every`` seconds, ``times`` times (or until
    the client leaves)."""

    def behave(h: BaseHTTPRequestHandler, n: int) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "100000")
        h.end_headers()
        with contextlib.suppress(OSError):
            for _ in range(times):
                h.wfile.write(b"<")
                h.wfile.flush()
                time.sleep(every)

    return behave


trickle = trickling(0.3, 1000)


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


def unbounded(megabytes: int, start: bytes = b"", fill: bytes = b" ") -> Behaviour:
    """A body of ``megabytes`` MB (``start``, then ``fill``) without a Content-Length,
    so that only counting catches it."""

    def behave(h: BaseHTTPRequestHandler, n: int) -> None:
        h.send_response(200)
        h.send_header("Connection", "close")
        h.end_headers()
        with contextlib.suppress(OSError):
            h.wfile.write(start)
            for _ in range(megabytes * 16):
                h.wfile.write(fill * (1 << 16))

    return behave


oversized = unbounded(3)  # over the 1 MB cap of an ``add`` answer on the wire


def drip_headers(every: float = 0.02, pad: int = 60) -> Behaviour:
    """The status line and ``pad`` headers one byte every ``every`` seconds (about 60 s in
    all; no single read waits long, so only an overall deadline stops it)."""
    head = b"HTTP/1.1 200 OK\r\n" + b"".join(
        b"X-Pad-%02d: %s\r\n" % (i, b"d" * 36) for i in range(pad)
    )

    def behave(h: BaseHTTPRequestHandler, n: int) -> None:
        h.close_connection = True
        with contextlib.suppress(OSError):
            for byte in head:
                h.connection.sendall(bytes([byte]))
                time.sleep(every)

    return behave


def labelled(encoding: str, raw: bytes, content_type: str = "") -> Behaviour:
    """``raw`` sent as it is under ``Content-Encoding: encoding`` (which it may not be)."""

    def behave(h: BaseHTTPRequestHandler, n: int) -> None:
        headers = [("Content-Encoding", encoding)]
        if content_type:
            send(h, 200, raw, content_type, headers)
        else:
            send_atom(h, 200, raw, headers)

    return behave


def raw_deflate(data: bytes) -> bytes:
    """``data`` as a raw deflate stream (no zlib header), as some servers label deflate."""
    packer = zlib.compressobj(wbits=-15)
    return packer.compress(data) + packer.flush()


def compressed_cases(plain: bytes) -> list[tuple[str, bytes, str]]:
    """(name, body, Content-Encoding) of bodies that do not decode as labelled."""
    whole = gzip.compress(plain)
    return [
        ("gzip-label-plain-body", plain, "gzip"),
        ("deflate-label-plain-body", plain, "deflate"),
        ("raw-deflate", raw_deflate(plain), "deflate"),
        ("gzip-truncated", whole[: len(whole) // 2], "gzip"),
        ("gzip-label-deflate-body", zlib.compress(plain), "gzip"),
    ]


# Base URLs no request can be made to: each must be one line, exit 2, before any request.
BAD_BASE_URLS = [
    ("port-out-of-range", "http://127.0.0.1:99999/api/query"),
    ("port-not-a-number", "http://127.0.0.1:abc/api/query"),
    ("ipv6-unclosed", "http://[::1"),
    ("space-in-url", "http://127.0.0.1 :8/api"),
    ("empty-label", "http://a..b/api"),
    ("not-http", "ftp://127.0.0.1/api"),
    ("control-character", "http://127.0.0.1/\x1b[2J"),
]


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


class Stub(LoopbackStub):
    """A loopback server running one behaviour; counts the requests it saw."""

    def __init__(self, behave: Behaviour) -> None:
        self.requests = 0
        self.behave = behave
        super().__init__()

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        n = self.requests
        self.requests += 1
        self.behave(handler, n)


@dataclass(frozen=True)
class ArxivCase:
    name: str
    behave: Behaviour
    expect: str  # "reject" or "sanitise"
    message: str = ""  # a fragment the one-line error must hold
    within: float = 10.0  # seconds the command may take
    url: str = ""  # MASRL_KB_ARXIV_URL when not the stub's
    code: int = 2  # the exit code of every refusal, a network failure's included


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
        ArxivCase("drip-headers", drip_headers(), "reject", "no complete answer within 1.5 s", 4),
    ]
    plain = (
        Path(__file__).resolve().parents[1] / "fixtures" / "arxiv" / "2410.08115.xml"
    ).read_bytes()
    for name, raw, encoding in compressed_cases(plain):
        cases.append(ArxivCase(name, labelled(encoding, raw), "reject", f"labelled {encoding}"))
    for name, url in BAD_BASE_URLS:
        cases.append(ArxivCase(f"base-url-{name}", ok, "reject", arxiv.ENV_ARXIV_URL, url=url))
    for path in sorted(HERE.glob("*.xml")):
        expect = "sanitise" if path.name.startswith("sanitised-") else "reject"
        cases.append(ArxivCase(path.stem, serve_file(path), expect))
    return cases


def run_arxiv_case(case: ArxivCase, tmp: Path) -> Judged:
    """Run ``masrl-kb add`` against the case's server and judge the outcome."""
    from masrl_kb.kb.record_checks import validate

    root = write_synthetic_root(tmp / "kb", papers=3, exclusions=1)
    before = files(root)
    _bomb()  # made before the clock starts
    stub = Stub(case.behave)
    env = {
        arxiv.ENV_ARXIV_URL: case.url or stub.url,
        arxiv.ENV_DEADLINE: DEADLINE,
        arxiv.ENV_DELAY: "0",
    }
    try:
        run = run_cli(["--root", str(root), "add", PAPER_ID], env)
    finally:
        stub.close()
    if run.crash:
        return Judged("crashed", run.crash)
    after = files(root)
    reasons = common_reasons(run, case.within)
    if any(name.rsplit("/", 1)[-1].startswith(".") for name in after):
        reasons.append("a temporary file was left")
    if run.code != 0:
        reasons += filter(None, [one_error_line(run.err, case.message)])
        if after != before:
            reasons.append("files changed")
        if run.code != case.code:
            reasons.append(f"exit {run.code}, expected {case.code}")
        if case.url and stub.requests:
            reasons.append("a request was made to a refused base URL")
        kind = "unclear" if reasons else "rejected"
    else:
        new = {name: data for name, data in after.items() if name not in before}
        if len(new) != 1 or CONTROL & set(next(iter(new.values())).decode("utf-8", "replace")):
            reasons.append("the record holds control characters or is missing")
        report = validate(root)
        wrong = [str(p) for p in report.problems if "unfinished" not in p.message]
        if wrong:
            reasons.append(f"written record breaks a rule: {wrong[0]}")
        kind = "accepted"
    return Judged(kind, run.text, reasons, run.seconds)


def _verdict(case: ArxivCase, outcome: Judged) -> tuple[str, tuple | None]:
    good = (case.expect == "reject" and outcome.kind == "rejected") or (
        case.expect == "sanitise" and outcome.kind == "accepted" and not outcome.reasons
    )
    kind = outcome.kind if good or outcome.kind == "crashed" else "unclear"
    if case.expect == "sanitise" and good:
        kind = "sanitised"
    failure = (f"arxiv/{case.name}", outcome.kind, "; ".join(outcome.reasons))
    return kind, None if good else failure


def arxiv_counts(bad: list) -> dict[str, int]:
    """Counts by outcome for the script; failures appended to ``bad``."""
    return tally(arxiv_cases(), run_arxiv_case, _verdict, bad)
