"""The bounded HTTP transport of every network call (arXiv, scholarly indexes).

One overall deadline covers connecting, every retry and every byte read; the body is
capped on the wire and after gzip; 5xx, 429 (after its Retry-After) and dropped
connections are retried within the deadline. Neither ``requests`` nor the ``arxiv``
package offers these bounds, hence this module. :class:`Client` adds, for the JSON APIs,
a minimum interval between requests, strict JSON and shape checks (:func:`field`).
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import re
import ssl
import time
import zlib
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit, urlunsplit

_CHUNK = 1 << 14
USER_AGENT = "masrl-kb (https://github.com/; a curated paper list)"


class SourceError(Exception):
    """A one-line reason why a source gave nothing usable: the request or the answer was
    unusable (exit 2), or for a :class:`FetchError` the service could not be reached."""

    network = False


class FetchError(SourceError):
    """No usable answer came back (exit 1)."""

    network = True


class StatusError(FetchError):
    """The service answered an error status (``status``)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class ShapeError(SourceError):
    """The answer is JSON but not shaped as the service documents it."""


@dataclass(frozen=True)
class Limits:
    """How long and how much one fetch may take."""

    deadline: float = 30.0
    delay: float = 3.0  # arXiv's API terms: no more than one request every three seconds
    attempts: int = 3
    max_body: int = 1 << 20
    max_expanded: int = 4 << 20


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
    path = urlunsplit(("", "", parts.path or "/", parts.query, ""))
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
            # At most one byte past the limit (then the check below refuses): a bomb never
            # gets expanded in full.
            chunk = inflate.decompress(chunk, lim.max_expanded - size + 1)
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
    """The body of a 200 answer to ``method url``, within the limits: 5xx, 429 and dropped
    connections are retried (see the module); :class:`StatusError` for other statuses,
    :class:`FetchError` for everything else, each with a one-line reason."""
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
        last = StatusError(f"HTTP {answer.status}", answer.status)
        if answer.status != 429 and not 500 <= answer.status < 600:
            break
    raise last or FetchError(f"no complete answer within {lim.deadline:g} s")


def _os_reason(err: Exception) -> str:
    text = getattr(err, "strerror", None) or str(err) or type(err).__name__
    return text.strip().lower()[:120]


# ---------------------------------------------------------------- JSON APIs

ENV_DEADLINE = "MASRL_KB_SOURCES_DEADLINE"
ENV_DELAY = "MASRL_KB_SOURCES_DELAY"
MAX_DEPTH = 64
SOURCES_USER_AGENT = "masrl-kb (living-review screening of scholarly indexes)"


@dataclass(frozen=True)
class Service:
    """One API: its name in messages, default base URL, env override and rate limit."""

    name: str
    base_url: str
    env_url: str
    delay: float  # seconds between requests, from the service's documented limit


class Client:
    """Requests to one service, spaced by its minimum interval, each within the limits."""

    def __init__(self, service: Service) -> None:
        self.name = service.name
        self.base = (os.environ.get(service.env_url) or service.base_url).rstrip("/")
        parts = urlsplit(self.base)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SourceError(f"{service.env_url}={self.base[:80]!r} is not an http(s) URL")
        self.delay = env_seconds(ENV_DELAY, service.delay, SourceError)
        self.limits = Limits(
            deadline=env_seconds(ENV_DEADLINE, 60.0, SourceError),
            delay=self.delay,
            attempts=4,
            max_body=8 << 20,  # one page of 100-500 records with abstracts is well under this
            max_expanded=32 << 20,
        )
        self._next = 0.0

    def answer(self, path: str, params=None, payload: object = None, headers=None) -> object:
        """The JSON answer to a GET (a POST of ``payload`` when given), after waiting out
        the service's interval."""
        wait = self._next - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._next = time.monotonic() + self.delay
        url = f"{self.base}{path}{f'?{urlencode(params)}' if params else ''}"
        sent = {"Accept": "application/json", "User-Agent": SOURCES_USER_AGENT, **(headers or {})}
        body = None if payload is None else json.dumps(payload).encode("utf-8")
        if body is not None:
            sent["Content-Type"] = "application/json"
        try:
            raw = http_request(
                url, self.limits, method="GET" if body is None else "POST", headers=sent, body=body
            )
        except StatusError as err:
            raise StatusError(f"{self.name}: the server answered {err}", err.status) from None
        except FetchError as err:
            raise FetchError(f"{self.name}: {err}") from None
        return parse_json(raw, self.name)


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _depth(value: object, limit: int) -> int:
    """Nesting depth, stopping once past ``limit`` (iterative: no recursion to blow)."""
    deepest, stack = 0, [(value, 1)]
    while stack and deepest <= limit:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(item, dict | list):
            stack.extend(
                (v, depth + 1) for v in (item.values() if isinstance(item, dict) else item)
            )
    return deepest


def parse_json(raw: bytes, name: str) -> object:
    """The JSON value of an answer body; :class:`SourceError` with one line otherwise."""
    too_deep = f"{name}: the answer nests deeper than {MAX_DEPTH} levels"
    try:
        value = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except UnicodeDecodeError as err:
        raise SourceError(f"{name}: the answer is not UTF-8 (byte {err.start})") from None
    except RecursionError:
        raise SourceError(too_deep) from None
    except ValueError as err:
        reason = str(err).splitlines()[0][:120]
        raise SourceError(f"{name}: the answer is not valid JSON ({reason})") from None
    if _depth(value, MAX_DEPTH) > MAX_DEPTH:
        raise SourceError(too_deep)
    return value


def env_value(name: str, pattern: str, service: str, what: str) -> str:
    """The environment variable ``name`` ("" when unset); :class:`SourceError` saying
    ``what`` when it does not match ``pattern``."""
    value = os.environ.get(name, "").strip()
    if value and not re.fullmatch(pattern, value):
        raise SourceError(f"{service}: {name} {what}")
    return value


_MISSING = object()
_KIND_NAMES = {dict: "an object", list: "a list", str: "a string", int: "a number"}


def field(obj: object, key: str, kind: type, where: str, optional=False):
    """``obj[key]`` checked to be of ``kind``, the error naming ``where.key``; with
    ``optional`` a missing key or null gives None."""
    if not isinstance(obj, dict):
        raise ShapeError(f"{where} is not an object")
    value = obj.get(key, _MISSING)
    if optional and (value is _MISSING or value is None):
        return None
    if value is _MISSING:
        raise ShapeError(f"{where}.{key} is missing")
    # bool is an int in Python; a JSON true is never a count or a date here.
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ShapeError(f"{where}.{key} is not {_KIND_NAMES.get(kind, kind.__name__)}")
    return value
