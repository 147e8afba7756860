"""A loopback HTTP server for the tests that stand in for the arXiv API."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that keeps the test output free of access logs."""

    def log_message(self, *args: object) -> None:
        pass


def send_atom(handler: BaseHTTPRequestHandler, status: int, body: bytes, headers=()) -> None:
    """Answer with an Atom body (arXiv's content type); ``headers`` are added as given."""
    handler.send_response(status)
    handler.send_header("Content-Type", "application/atom+xml; charset=utf-8")
    for name, value in headers:
        handler.send_header(name, value)
    if not any(name == "Content-Length" for name, _ in headers):
        handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


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
