"""The bounded HTTP transport of every network call (arXiv, scholarly indexes).

The network is treated as hostile:

- One overall deadline covers connecting, every retry and every byte read; a
  server that trickles a byte at a time is cut off when it passes.
- The response is streamed and counted: at most ``Limits.max_body`` bytes on
  the wire and ``Limits.max_expanded`` once gzip is undone (a small gzip "bomb"
  that expands to gigabytes is refused after a few megabytes).
- Retries (on 5xx answers and dropped connections, a few at most) wait
  ``Limits.delay`` within the deadline; a 429 answer is retried after the wait
  its Retry-After header asks for, if that still fits in the deadline.

Neither ``requests`` nor the ``arxiv`` package's client offers these bounds, hence this module.
"""

from __future__ import annotations

import email.utils
import http.client
import os
import ssl
import time
import zlib
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_DELAY = 3.0  # arXiv's API terms: no more than one request every three seconds
DEFAULT_DEADLINE = 30.0
ATTEMPTS = 3
MAX_BODY_BYTES = 1 << 20
MAX_EXPANDED_BYTES = 4 << 20
_CHUNK = 1 << 14
USER_AGENT = "masrl-kb (https://github.com/; a curated paper list)"


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


def env_seconds(name: str, default: float, error: type[Exception] = FetchError) -> float:
    """A number of seconds (0-3600) from the environment variable ``name``, else ``default``;
    ``error`` (one line naming the variable) when it holds anything else."""
    text = os.environ.get(name)
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 3600:
        raise error(f"{name}={text[:40]!r} is not a number of seconds from 0 to 3600")
    return value


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
        context = ssl.create_default_context()
        return http.client.HTTPSConnection(
            parts.hostname, parts.port, timeout=timeout, context=context
        ), path
    return http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout), path


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


def _os_reason(err: Exception) -> str:
    text = getattr(err, "strerror", None) or str(err) or type(err).__name__
    return text.strip().lower()[:120]
