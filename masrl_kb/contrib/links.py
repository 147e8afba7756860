"""``masrl-kb check-links``: is every record's link still alive?

Every paper ``url``, ``extra_urls`` and released artifact and every exclusion ``url``
is requested once: ``HEAD``, then ``GET`` when ``HEAD`` fails; redirects are followed.
*Broken*: an HTTP error or no answer. *Blocked* (401, 403, 429: not for robots) and
*moved* (the final address differs; the new one is shown) do not fail the run.
Needs the network: it runs on a schedule, never on pull requests.
"""

from __future__ import annotations

import os
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from masrl_kb.kb.fields import ARTIFACT_KINDS
from masrl_kb.kb.records import RecordSet, read_records

DEFAULT_TIMEOUT = 15.0
DEFAULT_WORKERS = 8
USER_AGENT = "masrl-kb-check-links/1.0 (link checker of a curated paper list)"
BLOCKED = frozenset({401, 403, 429})
__all__ = ["ARTIFACT_KINDS"]


@dataclass(frozen=True)
class Link:
    """One link of one record."""

    path: str  # record file, relative to the root
    line: int
    field: str
    url: str


@dataclass(frozen=True)
class LinkResult:
    """What requesting a URL gave: an HTTP status, or an error text."""

    url: str
    status: int | None
    error: str | None = None
    final_url: str | None = None  # where redirects ended, when they ended elsewhere

    @property
    def moved(self) -> bool:
        return self.ok and self.final_url is not None

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and self.status < 400

    @property
    def blocked(self) -> bool:
        return self.status in BLOCKED

    @property
    def broken(self) -> bool:
        return not self.ok and not self.blocked

    def describe(self) -> str:
        return str(self.status) if self.error is None else self.error


def record_links(records: RecordSet) -> Iterator[Link]:
    """Every link in every record, in file order."""
    for rec in records.papers + records.exclusions:
        data = rec.data if isinstance(rec.data, dict) else {}
        extra, artifacts = data.get("extra_urls"), data.get("artifacts")
        extra = extra if isinstance(extra, list) else []
        artifacts = artifacts if isinstance(artifacts, dict) else {}
        for name, top, url in (
            ("url", "url", data.get("url")),
            *(("extra_urls", "extra_urls", u) for u in extra),
            *((f"artifacts.{k}", "artifacts", artifacts.get(k)) for k in ARTIFACT_KINDS),
        ):
            if isinstance(url, str):
                yield Link(rec.rel, rec.line(top), name, url.strip())


def _request(url: str, method: str, timeout: float) -> tuple[int, str | None]:
    """The final status, and the final address when redirects moved it elsewhere."""
    request = urllib.request.Request(url, method=method, headers={"User-Agent": USER_AGENT})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            if method == "GET":
                response.read(1024)
            final = response.geturl()
            return response.status, final if final.rstrip("/") != url.rstrip("/") else None
    except urllib.error.HTTPError as err:
        err.close()
        return err.code, None


def _error_text(err: BaseException) -> str:
    reason = getattr(err, "reason", err)
    if isinstance(reason, socket.timeout | TimeoutError):
        return "error: timed out"
    text = str(reason).strip() or type(reason).__name__
    return f"error: {text}"


def check_url(url: str, timeout: float = DEFAULT_TIMEOUT) -> LinkResult:
    """HEAD, then GET when HEAD fails; the final status or error."""
    try:
        status, final = _request(url, "HEAD", timeout)
        if status < 400:
            return LinkResult(url, status, final_url=final)
    except (urllib.error.URLError, OSError, ValueError):
        pass  # some servers drop HEAD requests: GET decides
    try:
        status, final = _request(url, "GET", timeout)
        return LinkResult(url, status, final_url=final)
    except (urllib.error.URLError, OSError, ValueError) as err:
        return LinkResult(url, None, _error_text(err))


def check_links(
    root: str | os.PathLike[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    workers: int = DEFAULT_WORKERS,
) -> list[tuple[Link, LinkResult]]:
    """Every record's links with their results, checked a few at a time."""
    links = list(record_links(read_records(root)))
    urls = sorted({link.url for link in links})
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = dict(zip(urls, pool.map(lambda u: check_url(u, timeout), urls), strict=True))
    return [(link, results[link.url]) for link in links]


def format_problem(link: Link, result: LinkResult) -> str:
    """``path:line: url: status`` for one broken or blocked link."""
    return f"{link.path}:{link.line}: {link.url}: {result.describe()}"
