"""A loopback HTTP server for the tests that stand in for the arXiv API."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


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
