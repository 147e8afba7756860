"""A loopback HTTP server for the tests that stand in for the arXiv API and the JSON indexes."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ATOM = "application/atom+xml; charset=utf-8"  # arXiv's content type
JSON = "application/json"


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that keeps the test output free of access logs."""

    def log_message(self, *args: object) -> None:
        pass


def send(handler: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str, headers=()):
    """Answer with ``body``; ``headers`` are added as given (a Content-Length among them wins)."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    for name, value in headers:
        handler.send_header(name, value)
    if not any(name == "Content-Length" for name, _ in headers):
        handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def send_atom(handler: BaseHTTPRequestHandler, status: int, body: bytes, headers=()) -> None:
    send(handler, status, body, ATOM, headers)


def send_json(handler: BaseHTTPRequestHandler, status: int, body: bytes, headers=()) -> None:
    send(handler, status, body, JSON, headers)


class LoopbackServer:
    """Serves ``handler`` on 127.0.0.1 in a daemon thread; ``url`` is its API address."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], path: str = "/api/query") -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True  # a trickling test client never blocks shutdown
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{path}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Stub:
    """A loopback server whose ``answer(handler)`` answers every GET and POST.

    Subclasses say how to answer and what to record; ``url`` is the address
    (``path`` appended), ``close()`` stops the server.
    """

    path = "/api/query"

    def __init__(self) -> None:
        stub = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                stub.answer(self)

            do_POST = do_GET  # noqa: N815

        self._loopback = LoopbackServer(Handler, self.path)
        self.url = self._loopback.url

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self._loopback.close()


class Request:
    """What a stub saw: method, path, decoded query (one value per name), body, headers."""

    def __init__(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        from urllib.parse import parse_qs, urlsplit

        parts = urlsplit(handler.path)
        self.handler = handler
        self.method = handler.command
        self.path = parts.path
        self.query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        self.body = body
        self.headers = {k.lower(): v for k, v in handler.headers.items()}


class JsonStub(Stub):
    """A loopback JSON API: ``route(request, n)`` answers the n-th request (from 0).

    ``route`` returns ``(status, body, headers)`` to send, or None when it has
    answered by itself (a hostile behaviour writing to ``request.handler``).
    ``url`` is the base URL (no path); ``requests`` lists what was asked.
    """

    path = ""

    def __init__(self, route) -> None:
        self.requests: list[Request] = []
        self.route = route
        super().__init__()

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        request = Request(handler, handler.rfile.read(length) if length else b"")
        n = len(self.requests)
        self.requests.append(request)
        answer = self.route(request, n)
        if answer is not None:
            status, body, headers = answer
            send_json(handler, status, body, headers)
