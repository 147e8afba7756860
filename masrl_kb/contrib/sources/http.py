"""The bounded HTTP transport of every network call (arXiv, scholarly indexes).

One overall deadline covers connecting, the TLS handshake, sending, every retry and every
byte read, the status line and headers included: each socket operation may wait only for
what is left of it, so a server dripping one byte at a time is cut at the deadline. The
body is capped on the wire (a declared Content-Length over the cap is refused before any
body byte is read) and after gzip; no redirect is followed. 5xx, 429 and dropped
connections are retried within the deadline by urllib3's ``Retry``, waiting the delay or
a longer Retry-After (seconds or an HTTP date); a wait that would pass the deadline ends
the request with its last failure. A base URL from the environment is checked before any
request, and a body that does not decode as labelled is refused.
urllib3 brings the connection pool and the retry policy; the deadline-bound socket reads
stay here, because urllib3's timeouts bound each socket read, not the whole answer
(a server dripping its headers one byte a second would never time out).
:class:`Client` adds, for the JSON APIs, a minimum interval between requests, strict JSON
and shape checks (:func:`field`).
"""

from __future__ import annotations

import functools
import http.client
import io
import json
import os
import re
import socket
import time
import zlib
from dataclasses import dataclass
from typing import Any, Self
from urllib.parse import urlencode, urlsplit, urlunsplit

from urllib3 import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.exceptions import (
    HTTPError,
    MaxRetryError,
    NewConnectionError,
    ProtocolError,
    SSLError,
)
from urllib3.exceptions import TimeoutError as Urllib3Timeout
from urllib3.response import BaseHTTPResponse
from urllib3.util.retry import Retry

from masrl_kb.kb import strict_json

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
            raise self.passed()
        return left

    def passed(self) -> FetchError:
        return FetchError(f"no complete answer within {self.seconds:g} s")


_HEAD_ROOM = 64 << 10  # the status line, headers and chunk framing of one answer


class _DeadlineReader(io.RawIOBase):
    """The socket's bytes, each read allowed only the time left, at most ``max_body`` (plus
    room for the head) for one answer: http.client's own reads (status line, headers, chunk
    sizes) would otherwise wait the full timeout per byte."""

    def __init__(self, sock: socket.socket, dl: _Deadline, max_body: int) -> None:
        super().__init__()
        # The socket's own raw file: it keeps the socket open after http.client closes
        # the connection of a "Connection: close" answer, as makefile() always does.
        self._raw = sock.makefile("rb", buffering=0)
        self._sock, self._dl = sock, dl
        self._max_body, self._read = max_body, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:  # any writable buffer, as io passes
        self._sock.settimeout(self._dl.left())
        count = self._raw.readinto(buffer)
        self._read += count or 0
        if self._read > self._max_body + _HEAD_ROOM:
            raise _too_large(self._max_body)
        return count

    def close(self) -> None:
        self._raw.close()
        super().close()


def _too_large(max_body: int) -> FetchError:
    return FetchError(f"the answer is larger than {max_body} bytes")


class _DeadlineSocket:
    """What :class:`http.client.HTTPResponse` asks of a socket (``makefile``), over one
    whose every read is bound by the deadline and the size cap."""

    def __init__(self, sock: socket.socket, dl: _Deadline, max_body: int) -> None:
        self._sock, self._dl, self._max_body = sock, dl, max_body

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._dl, self._max_body), _CHUNK)


class _Response(http.client.HTTPResponse):
    """An answer read through :class:`_DeadlineSocket`; a declared length over the cap is
    refused as soon as the headers are read (http.client would allocate it whole)."""

    def __init__(
        self, sock: socket.socket, *args: Any, deadline: _Deadline, max_body: int, **kwargs: Any
    ) -> None:
        super().__init__(_DeadlineSocket(sock, deadline, max_body), *args, **kwargs)  # type: ignore[arg-type]
        self._max_body = max_body

    def begin(self) -> None:
        super().begin()
        if self.length is not None and self.length > self._max_body:
            raise _too_large(self._max_body)


class _Connection(HTTPConnection):
    """urllib3's connection whose connect, send and every read wait at most what is left."""

    def __init__(self, *args: Any, deadline: _Deadline, max_body: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._dl = deadline
        self.response_class = functools.partial(  # type: ignore[assignment]
            _Response, deadline=deadline, max_body=max_body
        )

    def connect(self) -> None:
        # CPython bounds a whole TLS handshake by the socket's timeout, not each read.
        self.timeout = self._dl.left()
        super().connect()
        self.sock.settimeout(self._dl.left())

    def send(self, data: Any) -> None:  # bytes, or a file or iterable of them, as http.client
        if self.sock is not None:
            self.sock.settimeout(self._dl.left())
        super().send(data)


class _TLSConnection(_Connection, HTTPSConnection):
    pass


class _Pool(HTTPConnectionPool):
    ConnectionCls = _Connection


class _TLSPool(HTTPSConnectionPool):
    ConnectionCls = _TLSConnection


# Only these statuses are retried: urllib3 would also retry a 413 that names a Retry-After.
_RETRIED = frozenset({429, *range(500, 600)})
_RETRY_AFTER_MAX = 86400


class _DeadlineRetry(Retry):
    """urllib3's ``Retry`` whose wait before a retry is the delay, or a longer Retry-After,
    and never passes the deadline: then the last failure is raised instead."""

    RETRY_AFTER_STATUS_CODES = frozenset()  # no status beyond ``status_forcelist``

    def __init__(self, *args: Any, deadline: _Deadline, delay: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.deadline, self.delay = deadline, delay

    def new(self, **kw: Any) -> Self:
        return super().new(deadline=self.deadline, delay=self.delay, **kw)

    def sleep(self, response: BaseHTTPResponse | None = None) -> None:
        last = self.history[-1]  # increment() has recorded the failure being retried
        if last.error is not None:
            failure = _failure(last.error, self.deadline)
            if _timed_out(last.error):  # each read waits what is left: none is
                raise failure
        else:
            failure = StatusError(f"HTTP {last.status}", last.status or 0)
        wait = self.delay
        if response is not None:
            asked = retry_after_seconds(response.headers.get("Retry-After", ""))
            wait = max(wait, asked or 0.0)
        if self.deadline.left() <= wait:
            raise failure
        time.sleep(wait)


def retry_after_seconds(value: str) -> float | None:
    """A Retry-After header (seconds or an HTTP date) as seconds from now, at most a day;
    None if unreadable."""
    if not value.strip():
        return None
    reader = Retry()
    reader.retry_after_max = _RETRY_AFTER_MAX  # its own cap (urllib3 2.6 on) is 6 hours
    try:
        return float(min(reader.parse_retry_after(value[:64]), _RETRY_AFTER_MAX))
    except HTTPError:  # urllib3's InvalidHeader
        return None


def _timed_out(err: BaseException) -> bool:
    if isinstance(err, NewConnectionError):  # urllib3 makes it a kind of connect timeout
        return False
    if isinstance(err, ProtocolError) and len(err.args) > 1:
        err = err.args[1]
    return isinstance(err, Urllib3Timeout | TimeoutError)


def _failure(err: BaseException, dl: _Deadline) -> FetchError:
    """The one-line :class:`FetchError` of what urllib3 raised (or retries)."""
    if _timed_out(err):
        return dl.passed()
    if isinstance(err, NewConnectionError):  # refused, unreachable, no such host
        return FetchError(_os_reason(err.__cause__ or err))
    if isinstance(err, ProtocolError):
        cause = err.args[1] if len(err.args) > 1 else err
        return FetchError(f"the connection dropped ({_os_reason(cause)})")
    if isinstance(err, SSLError) and err.args and isinstance(err.args[0], BaseException):
        return FetchError(_os_reason(err.args[0]))
    return FetchError(_os_reason(err))


def _pool(url: str, dl: _Deadline, lim: Limits) -> tuple[HTTPConnectionPool, str]:
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError as err:
        raise SourceError(f"not an http(s) URL: {url[:80]!r} ({_os_reason(err)})") from None
    if parts.scheme not in ("http", "https") or not host:
        raise SourceError(f"not an http(s) URL: {url[:80]!r}")
    path = urlunsplit(("", "", parts.path or "/", parts.query, ""))
    kind = _TLSPool if parts.scheme == "https" else _Pool
    retries = _DeadlineRetry(
        total=lim.attempts - 1,
        connect=0,  # a refused connection or an unknown host is not retried
        other=0,  # nor a TLS failure
        status_forcelist=_RETRIED,
        allowed_methods=None,  # a POST is retried too: every request here is a query
        raise_on_status=False,  # the last error answer comes back, to be a StatusError
        deadline=dl,
        delay=lim.delay,
    )
    pool = kind(host, port, maxsize=1, retries=retries, deadline=dl, max_body=lim.max_body)
    return pool, path


def _decoded(raw: bytes, encoding: str, lim: Limits) -> bytes:
    """The body as sent before its Content-Encoding, within the limits."""
    if len(raw) > lim.max_body:
        raise _too_large(lim.max_body)
    encoding = encoding.strip().lower() or "identity"
    if encoding not in ("identity", "gzip", "x-gzip", "deflate"):
        raise AnswerError(f"unsupported Content-Encoding {encoding[:40]!r}")
    if encoding == "identity":
        return raw
    # gzip, or zlib-wrapped deflate as RFC 9110 defines it; raw deflate is refused.
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS if "gzip" in encoding else zlib.MAX_WBITS)
    # At most one byte past the limit (then the check refuses): a bomb never gets
    # expanded in full.
    out = _inflate(inflate, encoding, raw, lim.max_expanded + 1)
    if len(out) <= lim.max_expanded:
        out += _inflate(inflate, encoding, None, lim.max_expanded - len(out) + 1)
    if len(out) > lim.max_expanded:
        raise FetchError(f"the answer expands to more than {lim.max_expanded} bytes")
    if not inflate.eof:
        raise AnswerError(f"the answer labelled {encoding} is cut short (its data does not end)")
    return out


def _inflate(inflate: Any, encoding: str, chunk: bytes | None, most: int) -> bytes:
    """The next expanded bytes (``chunk`` None: what is left); :class:`AnswerError` when
    the body is not the compressed data its Content-Encoding says."""
    try:
        return inflate.decompress(chunk, most) if chunk is not None else inflate.flush(most)
    except zlib.error as err:
        reason = str(err).split(": ", 1)[-1][:80]
        raise AnswerError(f"the answer is labelled {encoding} but is not ({reason})") from None


def http_request(
    url: str,
    limits: Limits | None = None,
    *,
    method: str = "GET",
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
) -> bytes:
    """The body of a 200 answer to ``method url``, within the limits: 5xx, 429 and dropped
    connections are retried (see the module); :class:`StatusError` for other statuses (a
    redirect among them), :class:`FetchError` for everything else, each with a one-line
    reason."""
    lim = limits or Limits()
    dl = _Deadline(lim.deadline)
    pool, path = _pool(url, dl, lim)
    sent = {"Accept-Encoding": "gzip", "User-Agent": USER_AGENT, **(headers or {})}
    try:
        answer = pool.urlopen(
            method, path, body=body, headers=sent, redirect=False, decode_content=False
        )
    except MaxRetryError as err:
        raise _failure(err.reason or err, dl) from None
    except HTTPError as err:  # a host name idna refuses, among others
        raise _failure(err, dl) from None
    finally:
        pool.close()
    if answer.status != 200:
        raise StatusError(f"HTTP {answer.status}", answer.status)
    return _decoded(answer.data, answer.headers.get("Content-Encoding", ""), lim)


def _os_reason(err: BaseException) -> str:
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


def parse_json(raw: bytes, name: str) -> object:
    """The JSON value of an answer body, by the package's strict parser (no repeated key,
    NaN or Infinity, at most :data:`MAX_DEPTH` levels); :class:`SourceError` with one line
    otherwise."""
    too_deep = f"{name}: the answer nests deeper than {MAX_DEPTH} levels"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SourceError(f"{name}: the answer is not UTF-8 (byte {err.start})") from None
    try:
        return strict_json.parse_json(text, max_depth=MAX_DEPTH)
    except (RecursionError, strict_json.TooDeepError):
        raise SourceError(too_deep) from None
    except ValueError as err:
        raise SourceError(f"{name}: the answer is {strict_json.json_error(err)}") from None


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
