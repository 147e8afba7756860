"""``masrl-kb check-links`` against a loopback HTTP server (no network)."""

from __future__ import annotations

import datetime as dt
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from masrl_kb.contrib.links import ARTIFACT_KINDS, check_url
from masrl_kb.kb.synthetic import dump_record, write_synthetic_root
from tests.conftest import run_cli as run

# path -> (status of HEAD, status of GET)
ROUTES = {
    "/good": (200, 200),
    "/missing": (404, 404),
    "/no-head": (405, 200),
    "/robots-only": (403, 403),
    "/moved": (301, 301),
}


class Handler(BaseHTTPRequestHandler):
    seen: list[tuple[str, str]] = []

    def _answer(self, method: str) -> None:
        Handler.seen.append((method, self.path))
        head, get = ROUTES.get(self.path, (404, 404))
        status = head if method == "HEAD" else get
        body = b"ok" if status < 400 else b"no"
        self.send_response(status)
        if status == 301:
            self.send_header("Location", "/good")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if method == "GET":
            self.wfile.write(body)

    def do_HEAD(self) -> None:  # noqa: N802 - http.server's naming
        self._answer("HEAD")

    def do_GET(self) -> None:  # noqa: N802
        self._answer("GET")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def site():
    Handler.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _root_with_urls(tmp_path: Path, urls: list[str], releases: dict | None = None) -> Path:
    """A synthetic root whose records' URLs all point at the loopback server.

    Synthetic records release code at example.org; here every release is
    ``none`` unless ``releases`` maps a record's position to its artifacts.
    """
    root = write_synthetic_root(tmp_path / "kb", papers=len(urls))
    paths = sorted((root / "papers").glob("*.yaml"))
    for i, (path, url) in enumerate(zip(paths, urls, strict=True)):
        record = yaml.safe_load(path.read_text())
        record["url"] = url
        checked = {kind: {"none": dt.date(2026, 11, 30)} for kind in ARTIFACT_KINDS}
        record["artifacts"] = {**record["artifacts"], **checked, **(releases or {}).get(i, {})}
        path.write_text(dump_record(record))
    return root


def _url_line(path: Path) -> int:
    return next(i for i, s in enumerate(path.read_text().splitlines(), 1) if s.startswith("url:"))


def test_broken_links_are_reported_per_record(
    tmp_path: Path, site: str, capsys: pytest.CaptureFixture[str]
) -> None:
    urls = [f"{site}/good", f"{site}/missing", f"{site}/no-head", f"{site}/robots-only"]
    root = _root_with_urls(tmp_path, urls)
    assert run("--root", str(root), "check-links", "--timeout", "5") == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    missing = root / "papers" / "synthetic-00001.yaml"
    assert lines[0] == f"papers/synthetic-00001.yaml:{_url_line(missing)}: {site}/missing: 404"
    assert lines[1].endswith(f"{site}/robots-only: 403 (blocked for robots; not counted as broken)")
    assert len(lines) == 2  # /good and /no-head (GET fallback) are fine
    assert "1 broken link(s) of 4" in captured.err
    assert ("GET", "/no-head") in Handler.seen  # HEAD refused, GET decided


def test_all_links_alive(tmp_path: Path, site: str, capsys: pytest.CaptureFixture[str]) -> None:
    root = _root_with_urls(tmp_path, [f"{site}/good", f"{site}/moved", f"{site}/good"])
    assert run("--root", str(root), "check-links") == 0
    assert "0 broken link(s) of 3 in the records (2 distinct)" in capsys.readouterr().out
    assert ("HEAD", "/moved") in Handler.seen
    assert [path for _, path in Handler.seen].count("/good") == 2  # itself, and after /moved


def test_unreachable_host_is_broken() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = check_url(f"http://127.0.0.1:{port}/", timeout=5)
    assert result.broken and result.describe().startswith("error: ")


def test_artifact_links_are_checked_and_moves_reported(
    tmp_path: Path, site: str, capsys: pytest.CaptureFixture[str]
) -> None:
    releases = {0: {"code": f"{site}/moved"}, 1: {"traces": f"{site}/missing"}}
    root = _root_with_urls(tmp_path, [f"{site}/good", f"{site}/good"], releases)
    assert run("--root", str(root), "check-links") == 1
    captured = capsys.readouterr()
    assert f"{site}/missing: 404" in captured.out
    assert f"artifacts.code: moved to {site}/good (update it)" in captured.out
    assert "1 broken link(s) of 4" in captured.err
