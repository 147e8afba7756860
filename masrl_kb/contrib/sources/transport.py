"""The bounded HTTP transport every source adapter goes through.

It adds to :func:`masrl_kb.contrib.sources.http.http_request` (one overall
deadline per request, a byte cap on the wire and after gzip, bounded retries
of 5xx and 429 honouring Retry-After) what a JSON API needs:

- a minimum interval between requests to one service (a token bucket of one
  token), set from that service's documented rate limit;
- strict JSON: a body that is not UTF-8, not JSON, nests too deep or uses the
  NaN/Infinity extensions is refused with one line;
- shape checks (:func:`field`) whose message names the path in the answer.

Settings come from the environment so that tests and CI can point an adapter
at a loopback stub: ``MASRL_KB_<SERVICE>_URL`` replaces the base URL,
``MASRL_KB_SOURCES_DEADLINE`` the per-request deadline (seconds) and
``MASRL_KB_SOURCES_DELAY`` the minimum interval (seconds; 0 in tests).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from masrl_kb.contrib.sources.http import (
    FetchError,
    HttpStatusError,
    Limits,
    env_seconds,
    http_request,
)

ENV_DEADLINE = "MASRL_KB_SOURCES_DEADLINE"
ENV_DELAY = "MASRL_KB_SOURCES_DELAY"
DEFAULT_DEADLINE = 60.0
MAX_BODY_BYTES = 8 << 20  # one page of 100-500 records with abstracts is well under this
MAX_EXPANDED_BYTES = 32 << 20
MAX_DEPTH = 64
ATTEMPTS = 4
USER_AGENT = "masrl-kb (living-review screening of scholarly indexes)"


class SourceError(Exception):
    """A one-line reason why an adapter wrote nothing.

    ``network`` is True when the service could not be reached or answered an
    error status (exit 1), False when its answer was unusable or the request
    was wrong (exit 2).
    """

    def __init__(self, message: str, network: bool = False) -> None:
        super().__init__(message)
        self.network = network


@dataclass(frozen=True)
class Service:
    """One API: its name in messages, default base URL, env override and rate limit."""

    name: str
    base_url: str
    env_url: str
    delay: float  # seconds between requests, from the service's documented limit

    def base(self) -> str:
        url = (os.environ.get(self.env_url) or self.base_url).rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SourceError(f"{self.env_url}={url[:80]!r} is not an http(s) URL")
        return url


class Client:
    """Requests to one service, spaced by its minimum interval, each within the limits."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.base = service.base()
        self.delay = env_seconds(ENV_DELAY, service.delay, SourceError)
        self.limits = Limits(
            deadline=env_seconds(ENV_DEADLINE, DEFAULT_DEADLINE, SourceError),
            delay=self.delay,
            attempts=ATTEMPTS,
            max_body=MAX_BODY_BYTES,
            max_expanded=MAX_EXPANDED_BYTES,
        )
        self._next = 0.0

    def url(self, path: str, params: dict[str, object] | None = None) -> str:
        query = f"?{urlencode(params)}" if params else ""
        return f"{self.base}{path}{query}"

    def _pace(self) -> None:
        wait = self._next - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._next = time.monotonic() + self.delay

    def get_json(self, path: str, params: dict[str, object] | None = None) -> object:
        return self._call("GET", self.url(path, params), None, {})

    def post_json(
        self,
        path: str,
        payload: object,
        params: dict[str, object] | None = None,
        headers: dict[str, str] | None = None,
    ) -> object:
        body = json.dumps(payload).encode("utf-8")
        sent = {"Content-Type": "application/json", **(headers or {})}
        return self._call("POST", self.url(path, params), body, sent)

    def _call(self, method: str, url: str, body: bytes | None, headers: dict[str, str]) -> object:
        self._pace()
        sent = {"Accept": "application/json", "User-Agent": USER_AGENT, **headers}
        try:
            raw = http_request(url, self.limits, method=method, headers=sent, body=body)
        except HttpStatusError as err:
            message = f"{self.service.name}: the server answered {err}"
            raise StatusError(message, err.status) from None
        except FetchError as err:
            raise SourceError(f"{self.service.name}: {err}", True) from None
        return parse_json(raw, self.service.name)


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _depth(value: object, limit: int) -> int:
    """Nesting depth, stopping once past ``limit`` (iterative: no recursion to blow)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest


def parse_json(raw: bytes, name: str) -> object:
    """The JSON value of an answer body; :class:`SourceError` with one line otherwise."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SourceError(f"{name}: the answer is not UTF-8 (byte {err.start})") from None
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise SourceError(f"{name}: the answer nests deeper than {MAX_DEPTH} levels") from None
    except ValueError as err:
        reason = str(err).splitlines()[0][:120]
        raise SourceError(f"{name}: the answer is not valid JSON ({reason})") from None
    if _depth(value, MAX_DEPTH) > MAX_DEPTH:
        raise SourceError(f"{name}: the answer nests deeper than {MAX_DEPTH} levels")
    return value


_MISSING = object()


def field(obj: object, key: str, kind: type | tuple[type, ...], where: str, optional=False):
    """``obj[key]`` checked to be of ``kind``; the error names ``where.key``.

    With ``optional`` a missing key or null gives None.
    """
    if not isinstance(obj, dict):
        raise ShapeError(f"{where} is not an object")
    value = obj.get(key, _MISSING)
    if optional and (value is _MISSING or value is None):
        return None
    if value is _MISSING:
        raise ShapeError(f"{where}.{key} is missing")
    # bool is an int in Python; a JSON true is never a count or a date here.
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _kinds(kind)):
        raise ShapeError(f"{where}.{key} is not {_kind_name(kind)}")
    return value


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number"}
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in _kinds(kind)))


class ShapeError(SourceError):
    """The answer is JSON but not shaped as the service documents it."""


class StatusError(SourceError):
    """The service answered an error status (``status``)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message, network=True)
        self.status = status
