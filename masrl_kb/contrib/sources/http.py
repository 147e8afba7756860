"""The bounded HTTP transport of every network call (arXiv, scholarly indexes).

One overall deadline covers connecting, the TLS handshake, sending, every retry and every
byte read, the status line and headers included: each socket operation may wait only for
what is left of it, so a server dripping one byte at a time is cut at the deadline. The
body is capped on the wire and after gzip; 5xx, 429 (after its Retry-After) and dropped
connections are retried within the deadline. A base URL from the environment is checked
before any request, and a body that does not decode as labelled is refused. Neither
``requests`` nor the ``arxiv`` package offers these bounds, hence this module.
:class:`Client` adds, for the JSON APIs, a minimum interval between requests, strict JSON
and shape checks (:func:`field`).
"""

from __future__ import annotations

import email.utils
import functools
import http.client
import io
import json
import os
import re
import socket
import ssl
import time
import zlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

_CHUNK = 1 << 14
USER_AGENT = "masrl-kb (https://github.com/; a curated paper list)"


class SourceError(Exception):
    """A one-line reason why a source gave nothing usable: a bad setting, an answer that
    cannot be read, or for a :class:`FetchError` no complete answer. Every command ends
    any of them as that line and exit 2 (``EXIT_USER_ERROR``), nothing written."""


class FetchError(SourceError):
    """No complete, usable answer came back: no connection, the deadline passed, an error
    status or a size cap."""


class StatusError(FetchError):
    """The service answered an error status (``status``)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class ShapeError(SourceError):
    """The answer is JSON but not shaped as the service documents it."""


class AnswerError(SourceError):
    """An answer came but cannot be read: its body does not decode as its headers say."""


_URL_TEXT = re.compile(r"[\x21-\x7e]+")  # printable ASCII, no space: what a base URL may hold


def check_base_url(url: str, name: str) -> str:
    """``url`` when it is a usable http(s) base URL (a host, a port from 1 to 65535, no
    fragment, user name, space or control character); :class:`SourceError`
    naming the setting ``name`` otherwise. Checked before any request, as ``urlsplit``
    raises a bare ``ValueError`` only when a port or an IPv6 address is first read."""
    shown = f"{name}={url[:80]!r}"
    if not _URL_TEXT.fullmatch(url):
        raise SourceError(f"{shown} is not an http(s) URL (spaces or non-ASCII characters)")
    try:
        parts = urlsplit(url)
        port = parts.port
        host = parts.hostname
    except ValueError as err:
        raise SourceError(f"{shown} is not an http(s) URL ({_os_reason(err)})") from None
    if parts.scheme not in ("http", "https") or not host:
        raise SourceError(f"{shown} is not an http(s) URL")
    if port == 0:
        raise SourceError(f"{shown} is not an http(s) URL (port 0)")
    if parts.username is not None or parts.fragment or "#" in url:
        raise SourceError(f"{shown}: a base URL holds no user name or fragment")
    try:
        host.encode("idna")
    except UnicodeError:
        raise SourceError(f"{shown} is not an http(s) URL (host {host[:60]!r})") from None
    return url


@dataclass(frozen=True)
class Limits:
    """How long and how much one fetch may take."""

    deadline: float = 30.0
    delay: float = 3.0  # arXiv's API terms: no more than one request every three seconds
    attempts: int = 3
    max_body: int = 1 << 20
    max_expanded: int = 4 << 20


def env_seconds(name: str, default: float, error: type[Exception] = SourceError) -> float:
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


class _DeadlineReader(io.RawIOBase):
    """The socket's bytes, each read allowed only the time left: http.client's own reads
    (status line, headers, chunk sizes) would otherwise wait the full timeout per byte."""

    def __init__(self, sock: socket.socket, dl: _Deadline) -> None:
        super().__init__()
        # The socket's own raw file: it keeps the socket open after http.client closes
        # the connection of a "Connection: close" answer, as makefile() always does.
        self._raw = sock.makefile("rb", buffering=0)
        self._sock, self._dl = sock, dl

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:  # any writable buffer, as io passes
        self._sock.settimeout(self._dl.left())
        return self._raw.readinto(buffer)

    def close(self) -> None:
        self._raw.close()
        super().close()


class _DeadlineSocket:
    """What :class:`http.client.HTTPResponse` asks of a socket (``makefile``), over one
    whose every read is bound by the deadline."""

    def __init__(self, sock: socket.socket, dl: _Deadline) -> None:
        self._sock, self._dl = sock, dl

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._dl), _CHUNK)


class _Response(http.client.HTTPResponse):
    """An answer read through :class:`_DeadlineSocket`."""

    def __init__(self, sock: socket.socket, *args: Any, deadline: _Deadline, **kwargs: Any) -> None:
        super().__init__(_DeadlineSocket(sock, deadline), *args, **kwargs)  # type: ignore[arg-type]


class _Connection(http.client.HTTPConnection):
    """A connection whose connect, send and every read wait at most what is left."""

    def __init__(self, host: str, port: int | None, dl: _Deadline) -> None:
        super().__init__(host, port, timeout=dl.left())
        self._dl = dl
        self.response_class = functools.partial(_Response, deadline=dl)  # type: ignore[assignment]

    def connect(self) -> None:
        self.timeout = self._dl.left()
        super().connect()
        self.sock.settimeout(self._dl.left())

    def send(self, data: Any) -> None:  # bytes, or a file or iterable of them, as http.client
        if self.sock is not None:
            self.sock.settimeout(self._dl.left())
        super().send(data)


class _TLSConnection(_Connection):
    default_port = http.client.HTTPS_PORT

    def connect(self) -> None:
        super().connect()  # the socket now waits at most what is left
        # CPython bounds the whole handshake by the socket's timeout, not each read.
        context = ssl.create_default_context()
        self.sock = context.wrap_socket(self.sock, server_hostname=self.host)


def _connection(url: str, dl: _Deadline) -> tuple[http.client.HTTPConnection, str]:
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError as err:
        raise SourceError(f"not an http(s) URL: {url[:80]!r} ({_os_reason(err)})") from None
    if parts.scheme not in ("http", "https") or not host:
        raise SourceError(f"not an http(s) URL: {url[:80]!r}")
    path = urlunsplit(("", "", parts.path or "/", parts.query, ""))
    kind = _TLSConnection if parts.scheme == "https" else _Connection
    return kind(host, port, dl), path


def _read_body(resp: http.client.HTTPResponse, dl: _Deadline, lim: Limits) -> bytes:
    encoding = (resp.getheader("Content-Encoding") or "identity").strip().lower()
    if encoding not in ("identity", "gzip", "x-gzip", "deflate"):
        raise AnswerError(f"unsupported Content-Encoding {encoding[:40]!r}")
    inflate = None
    if encoding != "identity":
        # gzip, or zlib-wrapped deflate as RFC 9110 defines it; raw deflate is refused.
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS if "gzip" in encoding else zlib.MAX_WBITS)
    wire, out, size = 0, [], 0
    while True:
        chunk = resp.read1(_CHUNK)
        dl.left()
        if not chunk:
            break
        wire += len(chunk)
        if wire > lim.max_body:
            raise FetchError(f"the answer is larger than {lim.max_body} bytes")
        if inflate is not None:
            # At most one byte past the limit (then the check below refuses): a bomb never
            # gets expanded in full.
            chunk = _inflate(inflate, encoding, chunk, lim.max_expanded - size + 1)
        size += len(chunk)
        if size > lim.max_expanded:
            raise FetchError(f"the answer expands to more than {lim.max_expanded} bytes")
        out.append(chunk)
    if inflate is not None:
        tail = _inflate(inflate, encoding, None, lim.max_expanded - size + 1)
        if size + len(tail) > lim.max_expanded:
            raise FetchError(f"the answer expands to more than {lim.max_expanded} bytes")
        if not inflate.eof:
            raise AnswerError(
                f"the answer labelled {encoding} is cut short (its data does not end)"
            )
        out.append(tail)
    return b"".join(out)


def _inflate(inflate: Any, encoding: str, chunk: bytes | None, most: int) -> bytes:
    """The next expanded bytes (``chunk`` None: what is left); :class:`AnswerError` when
    the body is not the compressed data its Content-Encoding says."""
    try:
        return inflate.decompress(chunk, most) if chunk is not None else inflate.flush(most)
    except zlib.error as err:
        reason = str(err).split(": ", 1)[-1][:80]
        raise AnswerError(f"the answer is labelled {encoding} but is not ({reason})") from None


@dataclass(frozen=True)
class Answer:
    """One HTTP answer: status, the Retry-After header (raw, or ""), and the bounded body."""

    status: int
    retry_after: str
    body: bytes


def _request_once(
    method: str, url: str, headers: dict[str, str], body: bytes | None, dl: _Deadline, lim: Limits
) -> Answer:
    conn, path = _connection(url, dl)
    try:
        sent = {"Accept-Encoding": "gzip", "User-Agent": USER_AGENT, **headers}
        conn.request(method, path, body=body, headers=sent)
        resp = conn.getresponse()
        declared = resp.getheader("Content-Length")
        if declared and declared.strip().isdigit() and int(declared) > lim.max_body:
            raise FetchError(f"the answer is larger than {lim.max_body} bytes")
        retry_after = (resp.getheader("Retry-After") or "").strip()[:64]
        return Answer(resp.status, retry_after, _read_body(resp, dl, lim))
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
        except SourceError:
            raise
        except (OSError, UnicodeError) as err:  # UnicodeError: a host name idna refuses
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
        base = os.environ.get(service.env_url) or service.base_url
        self.base = check_base_url(base, service.env_url).rstrip("/")
        if urlsplit(self.base).query:
            raise SourceError(f"{service.env_url}={base[:80]!r}: a base URL holds no query")
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
        except SourceError as err:
            raise SourceError(f"{self.name}: {err}") from None
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
