"""``masrl-kb screen run`` against hostile loopback servers (tests/hostile/network_cases.py),
the transport's deadline over the parts http.client reads by itself: the status line,
the headers, a chunked body, and the TLS handshake, and the retry policy urllib3's ``Retry``
runs for it: which answers are retried, after how long, and which never are."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from pathlib import Path

import pytest

from masrl_kb.contrib.sources import http
from tests.hostile.network_cases import NetworkCase, network_cases, run_network_case
from tests.loopback import JsonStub

CASES = network_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_screen_run_survives_a_hostile_server(case: NetworkCase, tmp_path: Path) -> None:
    outcome = run_network_case(case, tmp_path)
    assert outcome.kind == "rejected" and not outcome.reasons, (outcome.reasons, outcome.output)


class RawServer:
    """A loopback TCP server sending ``script`` (bytes, with ``every`` seconds between
    them) to each client after reading its request head; bounded by the script's length."""

    def __init__(self, script: bytes, every: float, read_request: bool = True) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.script, self.every, self.read_request = script, every, read_request
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            conn, _ = self.sock.accept()
            with conn:
                if self.read_request:
                    conn.recv(65536)
                for byte in self.script:
                    conn.sendall(bytes([byte]))
                    time.sleep(self.every)

    def close(self) -> None:
        self.sock.close()


def _fetch(url: str, deadline: float = 1.0) -> tuple[type[Exception], str, float]:
    start = time.monotonic()
    with pytest.raises(http.FetchError) as caught:
        http.http_request(url, http.Limits(deadline=deadline, delay=0, attempts=1))
    return type(caught.value), str(caught.value), time.monotonic() - start


def test_a_dripped_status_line_and_headers_are_cut_at_the_deadline() -> None:
    head = b"HTTP/1.1 200 OK\r\n" + b"X-Pad: " + b"d" * 3000 + b"\r\n\r\n"
    server = RawServer(head, 0.02)  # about 60 s in all, no read waits over 0.02 s
    try:
        _, message, seconds = _fetch(f"http://127.0.0.1:{server.port}/x")
    finally:
        server.close()
    assert message == "no complete answer within 1 s"
    assert seconds < 10  # the drip alone lasts 60 s


def test_a_dripped_chunked_body_is_cut_at_the_deadline() -> None:
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    body = b"".join(b"1\r\nx\r\n" for _ in range(600))
    server = RawServer(head + body, 0.02)
    try:
        _, message, seconds = _fetch(f"http://127.0.0.1:{server.port}/x")
    finally:
        server.close()
    assert message == "no complete answer within 1 s" and seconds < 10


def test_a_dripped_tls_handshake_is_cut_at_the_deadline() -> None:
    # A TLS record header announcing 16,000 bytes of ServerHello, then the bytes one by
    # one: the client waits for the whole record before it can check any of it. (CPython
    # bounds a handshake by the socket's timeout; this keeps that bound the time left.)
    record = b"\x16\x03\x03\x3e\x80" + b"\x02" * 3000
    server = RawServer(record, 0.02)
    try:
        _, message, seconds = _fetch(f"https://127.0.0.1:{server.port}/x")
    finally:
        server.close()
    assert message == "no complete answer within 1 s" and seconds < 10


def test_a_connection_close_answer_is_read_to_its_end() -> None:
    # http.client closes the connection of such an answer before its body is read; the
    # deadline-bound reader must keep the socket open until then.
    body = b'{"ok": true}' * 2000
    answer = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body
    server = RawServer(answer, 0)
    try:
        got = http.http_request(
            f"http://127.0.0.1:{server.port}/x", http.Limits(deadline=10, delay=0, attempts=1)
        )
    finally:
        server.close()
    assert got == body


# ---------------------------------------------------------------- the retry policy


def _ask(stub: JsonStub, limits: http.Limits, **kwargs) -> bytes:
    try:
        return http.http_request(f"{stub.url}/x", limits, **kwargs)
    finally:
        stub.close()


def test_a_redirect_is_a_status_error_and_is_not_followed() -> None:
    stub = JsonStub(lambda r, n: (302, b"{}", [("Location", "/elsewhere")]))
    with pytest.raises(http.StatusError) as caught:
        _ask(stub, http.Limits(deadline=5, delay=0))
    assert str(caught.value) == "HTTP 302" and caught.value.status == 302
    assert [r.path for r in stub.requests] == ["/x"]


def test_a_413_naming_a_retry_after_is_not_retried() -> None:
    # urllib3 retries 413, 429 and 503 when they name a Retry-After; only 429 and 5xx are.
    stub = JsonStub(lambda r, n: (413, b"{}", [("Retry-After", "0")]))
    with pytest.raises(http.StatusError) as caught:
        _ask(stub, http.Limits(deadline=5, delay=0))
    assert str(caught.value) == "HTTP 413" and len(stub.requests) == 1


def test_a_503_is_retried_after_its_retry_after() -> None:
    def route(request, n):
        return (503, b"{}", [("Retry-After", "1")]) if n == 0 else (200, b"ok", [])

    stub = JsonStub(route)
    start = time.monotonic()
    assert _ask(stub, http.Limits(deadline=10, delay=0)) == b"ok"
    assert time.monotonic() - start >= 1.0  # the wait asked for, though the delay is 0
    assert len(stub.requests) == 2


def test_a_503_whose_retry_after_passes_the_deadline_ends_at_once() -> None:
    stub = JsonStub(lambda r, n: (503, b"{}", [("Retry-After", "3600")]))
    with pytest.raises(http.StatusError) as caught:
        _ask(stub, http.Limits(deadline=10, delay=0))
    assert str(caught.value) == "HTTP 503" and len(stub.requests) == 1


def test_a_post_is_retried_with_its_body() -> None:
    stub = JsonStub(lambda r, n: (503, b"{}", []) if n == 0 else (200, b"ok", []))
    got = _ask(stub, http.Limits(deadline=10, delay=0), method="POST", body=b'{"q": 1}')
    assert got == b"ok" and [r.body for r in stub.requests] == [b'{"q": 1}'] * 2


def test_a_body_cut_short_is_retried() -> None:
    def route(request, n):
        if n:
            return 200, b"ok", []
        request.handler.close_connection = True
        request.handler.send_response(200)
        request.handler.send_header("Content-Length", "100")
        request.handler.end_headers()
        request.handler.wfile.write(b"0123456789")  # then the connection closes
        return None

    stub = JsonStub(route)
    assert _ask(stub, http.Limits(deadline=10, delay=0)) == b"ok" and len(stub.requests) == 2


def test_a_declared_length_over_the_cap_is_refused_before_the_body() -> None:
    # Reading the body would end in "the connection dropped": the server sends none.
    server = RawServer(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n", 0)
    try:
        with pytest.raises(http.FetchError) as caught:
            http.http_request(
                f"http://127.0.0.1:{server.port}/x", http.Limits(deadline=5, delay=0, attempts=1)
            )
    finally:
        server.close()
    assert str(caught.value) == "the answer is larger than 1048576 bytes"


def test_a_refused_connection_is_one_line_and_not_retried() -> None:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port = sock.getsockname()[1]  # nothing listens there once closed
    start = time.monotonic()
    with pytest.raises(http.FetchError) as caught:
        http.http_request(f"http://127.0.0.1:{port}/x", http.Limits(deadline=30, delay=5))
    assert str(caught.value) == "connection refused"
    assert time.monotonic() - start < 5  # no retry: that would wait the 5 s delay first


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("http://127.0.0.1:99999", "port out of range"),
        ("http://[::1", "invalid ipv6 url"),
        ("http://127.0.0.1:0/", "port 0"),
        ("http://user@127.0.0.1/", "no user name"),
        ("http://127.0.0.1/#x", "no user name or fragment"),
        ("http://h\u00e9.org/", "non-ASCII"),
        ("http://a..b/", "host 'a..b'"),
        ("file:///etc/passwd", "is not an http(s) URL"),
    ],
)
def test_bad_base_urls_are_one_line_source_errors(url: str, fragment: str) -> None:
    with pytest.raises(http.SourceError) as caught:
        http.check_base_url(url, "MASRL_KB_X_URL")
    message = str(caught.value)
    assert message.startswith("MASRL_KB_X_URL=") and fragment in message
    assert "\n" not in message and not isinstance(caught.value, http.FetchError)


def test_good_base_urls_pass() -> None:
    for url in (
        "https://api.openalex.org",
        "http://127.0.0.1:8080/api/query?x=1",
        "http://[::1]:80/",
    ):
        assert http.check_base_url(url, "X") == url
