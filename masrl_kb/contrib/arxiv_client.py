"""A careful HTTP client for the arXiv API: the network is treated as hostile.

- One overall deadline covers connecting, every retry and every byte read; a
  server that trickles a byte at a time is cut off when it passes.
- The response is streamed and counted: at most :data:`MAX_BODY_BYTES` on the
  wire and :data:`MAX_EXPANDED_BYTES` once gzip is undone (a small gzip "bomb"
  that expands to gigabytes is refused after a few megabytes).
- arXiv asks clients to wait 3 s between requests: retries (on 5xx answers
  and dropped connections, a few at most) wait that long, within the deadline;
  a 429 answer is retried after the wait its Retry-After header asks for, if
  that still fits in the deadline.
- :func:`http_request` also sends POST bodies and extra headers, so the
  scholarly-index adapters (:mod:`masrl_kb.contrib.sources`) share these bounds.
- The Atom XML is parsed only after those limits; a document type
  declaration (the door to entity expansion) is refused outright.

The ``arxiv`` package's client offers none of these bounds, hence this module.
"""

from __future__ import annotations

import email.utils
import http.client
import os
import ssl
import time
import xml.etree.ElementTree as ET
import zlib
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

ENV_DELAY = "MASRL_KB_ARXIV_DELAY"
ENV_DEADLINE = "MASRL_KB_ARXIV_DEADLINE"
DEFAULT_DELAY = 3.0  # arXiv's API terms: no more than one request every three seconds
DEFAULT_DEADLINE = 30.0
ATTEMPTS = 3
MAX_BODY_BYTES = 1 << 20
MAX_EXPANDED_BYTES = 4 << 20
_CHUNK = 1 << 14
USER_AGENT = "masrl-kb (https://github.com/; arXiv import of single records)"


class FetchError(Exception):
    """A one-line reason why no usable answer came back."""


class HttpStatusError(FetchError):
    """The server answered with an error status."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        super().__init__(message)


@dataclass(frozen=True)
class Limits:
    """How long and how much one fetch may take."""

    deadline: float = DEFAULT_DEADLINE
    delay: float = DEFAULT_DELAY
    attempts: int = ATTEMPTS
    max_body: int = MAX_BODY_BYTES
    max_expanded: int = MAX_EXPANDED_BYTES

    @classmethod
    def from_env(cls, deadline: float | None = None, delay: float | None = None) -> Limits:
        """Limits from the arguments, else ``MASRL_KB_ARXIV_DEADLINE``/``_DELAY``, else defaults."""
        return cls(
            deadline=deadline
            if deadline is not None
            else _env_seconds(ENV_DEADLINE, DEFAULT_DEADLINE),
            delay=delay if delay is not None else _env_seconds(ENV_DELAY, DEFAULT_DELAY),
        )


def _env_seconds(name: str, default: float) -> float:
    text = os.environ.get(name)
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise FetchError(f"{name}={text[:40]!r} is not a number of seconds") from None
    if not 0 <= value <= 3600:
        raise FetchError(f"{name}={text[:40]!r} must be between 0 and 3600 seconds")
    return value


def query_url(endpoint: str, arxiv_id: str) -> str:
    """The API URL asking for one paper by id."""
    query = urlencode({"search_query": "", "id_list": arxiv_id, "start": 0, "max_results": 1})
    return f"{endpoint}{'&' if '?' in endpoint else '?'}{query}"


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            raise FetchError(f"no complete answer within {self.seconds:g} s")
        return left


def _connection(url: str, timeout: float) -> tuple[http.client.HTTPConnection, str]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchError(f"not an http(s) URL: {url[:80]!r}")
    path = parts.path or "/"
    if parts.query:
        path += f"?{parts.query}"
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(
            parts.hostname, parts.port, timeout=timeout, context=ssl.create_default_context()
        )
    else:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    return conn, path


def _read_body(
    resp: http.client.HTTPResponse, conn: http.client.HTTPConnection, dl: _Deadline, lim: Limits
) -> bytes:
    encoding = (resp.getheader("Content-Encoding") or "identity").strip().lower()
    if encoding not in ("identity", "gzip", "x-gzip", "deflate"):
        raise FetchError(f"unsupported Content-Encoding {encoding[:40]!r}")
    inflate = None
    if encoding != "identity":
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS if "gzip" in encoding else zlib.MAX_WBITS)
    wire, out, size = 0, [], 0
    while True:
        if conn.sock is not None:
            conn.sock.settimeout(dl.left())
        chunk = resp.read1(_CHUNK) if hasattr(resp, "read1") else resp.read(_CHUNK)
        dl.left()
        if not chunk:
            break
        wire += len(chunk)
        if wire > lim.max_body:
            raise FetchError(f"the answer is larger than {lim.max_body} bytes")
        if inflate is not None:
            # Ask for at most one byte past the limit: a bomb never gets expanded in full.
            chunk = inflate.decompress(chunk, lim.max_expanded - size + 1)
            if inflate.unconsumed_tail:
                raise FetchError(f"the answer expands to more than {lim.max_expanded} bytes")
        size += len(chunk)
        if size > lim.max_expanded:
            raise FetchError(f"the answer expands to more than {lim.max_expanded} bytes")
        out.append(chunk)
    if inflate is not None:
        tail = inflate.flush(lim.max_expanded - size + 1)
        if size + len(tail) > lim.max_expanded:
            raise FetchError(f"the answer expands to more than {lim.max_expanded} bytes")
        out.append(tail)
    return b"".join(out)


@dataclass(frozen=True)
class Answer:
    """One HTTP answer: status, the Retry-After header (raw, or ""), and the bounded body."""

    status: int
    retry_after: str
    body: bytes


def _request_once(
    method: str, url: str, headers: dict[str, str], body: bytes | None, dl: _Deadline, lim: Limits
) -> Answer:
    conn, path = _connection(url, dl.left())
    try:
        sent = {"Accept-Encoding": "gzip", "User-Agent": USER_AGENT, **headers}
        conn.request(method, path, body=body, headers=sent)
        if conn.sock is not None:
            conn.sock.settimeout(dl.left())
        resp = conn.getresponse()
        declared = resp.getheader("Content-Length")
        if declared and declared.strip().isdigit() and int(declared) > lim.max_body:
            raise FetchError(f"the answer is larger than {lim.max_body} bytes")
        retry_after = (resp.getheader("Retry-After") or "").strip()[:64]
        return Answer(resp.status, retry_after, _read_body(resp, conn, dl, lim))
    except TimeoutError:
        raise FetchError(f"no complete answer within {dl.seconds:g} s") from None
    finally:
        conn.close()


def retry_after_seconds(value: str) -> float | None:
    """A Retry-After header (seconds or an HTTP date) as seconds from now; None if unreadable."""
    if value.isdigit():
        return float(min(int(value), 86400))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _wait_before_retry(answer: Answer | None, dl: _Deadline, lim: Limits) -> bool:
    """Sleep before the next try; False when the wait would pass the deadline."""
    wait = lim.delay
    if answer is not None and answer.status == 429:
        asked = retry_after_seconds(answer.retry_after)
        wait = max(wait, asked if asked is not None else lim.delay)
    if dl.left() <= wait:
        return False
    time.sleep(wait)
    return True


def http_request(
    url: str,
    limits: Limits | None = None,
    *,
    method: str = "GET",
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
) -> bytes:
    """The body of a 200 answer to ``method url``, within the limits.

    Retries 5xx answers, 429 (waiting what its Retry-After asks, within the
    deadline) and dropped connections, waiting at least ``limits.delay``
    between requests; raises :class:`HttpStatusError` for other statuses and
    :class:`FetchError` for everything else, each with a one-line reason.
    """
    lim = limits or Limits()
    dl = _Deadline(lim.deadline)
    last: FetchError | None = None
    answer: Answer | None = None
    for attempt in range(lim.attempts):
        if attempt and not _wait_before_retry(answer, dl, lim):
            break
        answer = None
        try:
            answer = _request_once(method, url, headers or {}, body, dl, lim)
        except (ConnectionResetError, http.client.HTTPException) as err:
            last = FetchError(f"the connection dropped ({_os_reason(err)})")
            continue
        except FetchError:
            raise
        except OSError as err:
            raise FetchError(_os_reason(err)) from None
        if answer.status == 200:
            return answer.body
        last = HttpStatusError(answer.status, f"HTTP {answer.status}")
        if answer.status != 429 and not 500 <= answer.status < 600:
            break
    raise last or FetchError(f"no complete answer within {lim.deadline:g} s")


def http_get(url: str, limits: Limits | None = None) -> bytes:
    """The body of a 200 answer to ``GET url`` (see :func:`http_request`)."""
    return http_request(url, limits)


def _os_reason(err: Exception) -> str:
    text = getattr(err, "strerror", None) or str(err) or type(err).__name__
    return text.strip().lower()[:120]


# ---------------------------------------------------------------- Atom

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"


@dataclass(frozen=True)
class AtomEntry:
    """The raw text of one Atom entry's fields (not yet cleaned)."""

    id: str
    title: str
    summary: str
    published: str
    authors: tuple[str, ...]
    primary_category: str


def parse_feed(body: bytes) -> list[AtomEntry]:
    """The entries of an arXiv Atom feed; :class:`FetchError` when it is not one."""
    if b"<!DOCTYPE" in body or b"<!ENTITY" in body:
        raise FetchError("the answer holds a document type declaration; refused")
    try:
        root = ET.fromstring(body)
    except ET.ParseError as err:
        raise FetchError(f"the answer is not well-formed XML ({err})") from None
    if root.tag != f"{ATOM}feed":
        raise FetchError("the answer is not an Atom feed")
    entries = []
    for entry in root.findall(f"{ATOM}entry"):
        category = entry.find(f"{ARXIV}primary_category")
        entries.append(
            AtomEntry(
                id=entry.findtext(f"{ATOM}id", ""),
                title=entry.findtext(f"{ATOM}title", ""),
                summary=entry.findtext(f"{ATOM}summary", ""),
                published=entry.findtext(f"{ATOM}published", ""),
                authors=tuple(
                    a.findtext(f"{ATOM}name", "") for a in entry.findall(f"{ATOM}author")
                ),
                primary_category=category.get("term", "") if category is not None else "",
            )
        )
    return entries
