"""``sources.yaml``: which web hosts are primary sources (for :mod:`masrl_kb.kb.provenance`).
Host names are lower-case ASCII (no wildcard, look-alike or control character can widen
what counts as primary); a leading ``www.`` is dropped."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from masrl_kb.kb.model.base import KbModel, Maybe, field, optional, validate_file
from masrl_kb.kb.model.types import Check, Names, Text
from masrl_kb.kb.paths import Root, find_root
from masrl_kb.kb.problem import Problem
from masrl_kb.kb.text import shorten

SOURCES_FILE = "sources.yaml"
HOST_RE = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+")
UNSAFE_CHARS = re.compile(r"[\s\\\x00-\x1f\x7f-\x9f]")


def bare(host: str) -> str:
    return host.removeprefix("www.")


def _words(value: object, ctx: object = None) -> str | None:
    if isinstance(value, list) and value and all(_word(v) for v in value):
        return None
    return "expected a non-empty list of plain words (no spaces or control characters)"


def _word(value: object) -> bool:
    return isinstance(value, str) and bool(value) and not UNSAFE_CHARS.search(value)


def _hosts(value: object, ctx: object) -> str | None:
    if (problem := _words(value)) or not isinstance(value, list):
        return problem
    bad = [h for h in value if not HOST_RE.fullmatch(h)]
    return f"{shorten(bad[0])} is not a lower-case ASCII host name" if bad else None


def _host(value: object, ctx: object) -> str | None:
    return None if isinstance(value, str) and HOST_RE.fullmatch(value) else "expected a host name"


def _prefix_problem(value: object) -> str | None:
    if not isinstance(value, str) or UNSAFE_CHARS.search(value):
        return "expected host/path text (no spaces or control characters)"
    host, _, path = value.partition("/")
    if not HOST_RE.fullmatch(host):
        return f"{shorten(value)} does not start with a lower-case ASCII host name"
    if any(s in (".", "..") for s in path.split("/")):
        return f"{shorten(value)} has a dot segment"
    return None


def _prefixes(value: object, ctx: object) -> str | None:
    if not isinstance(value, list):
        return "expected a list of host/path prefixes (e.g. medium.com, arxiv.org/list)"
    return next((p for v in value if (p := _prefix_problem(v))), None)


def _to_prefixes(values: list[str]) -> tuple[Prefix, ...]:
    out = []
    for v in values:
        host, _, path = v.partition("/")
        out.append(Prefix(bare(host), tuple(s for s in path.split("/") if s)))
    return tuple(out)


@dataclass(frozen=True)
class Prefix:
    """``host/seg/seg``: the pages of ``host`` whose path starts with these whole segments
    (so ``/forum`` never matches ``/forumless``)."""

    host: str
    segments: tuple[str, ...]

    def holds(self, host: str, segments: tuple[str, ...], subdomains: bool = False) -> bool:
        on_host = host == self.host or subdomains and host.endswith("." + self.host)
        return on_host and segments[: len(self.segments)] == self.segments


def _lower(words: list[str]) -> frozenset[str]:
    return frozenset(w.lower() for w in words)


_LIST = {"type": "array", "items": {"type": "string"}, "minItems": 1}
Words = Annotated[tuple[str, ...], Check("words", _words, _LIST), AfterValidator(tuple)]
WordSet = Annotated[frozenset[str], Check("words", _words, _LIST), AfterValidator(frozenset)]
Hosts = Annotated[
    frozenset[str], Check("hosts", _hosts, _LIST), AfterValidator(lambda v: frozenset(map(bare, v)))
]
Host = Annotated[str, Check("host", _host, {"type": "string"}), AfterValidator(bare)]
_PREFIXES = {"type": "array", "items": {"type": "string"}}
Prefixes = Annotated[
    tuple[Prefix, ...], Check("prefixes", _prefixes, _PREFIXES), AfterValidator(_to_prefixes)
]


class PaperKind(KbModel):
    """Hosts of the paper's own pages (arXiv, OpenReview, proceedings, DOI)."""

    kind: Text = field("The kind's name.")
    label: Text = field("How a message names it.")
    hosts: Hosts = field("Its host names.")
    paths: Words = field("Path prefixes a page must start with (default: any).", default=())
    backs: WordSet = field("The evidence labels its pages can carry.")


class Forge(KbModel):
    """A code host where only the authors' own account is primary."""

    host: Host = field("The forge's host name.")
    pages: Maybe[Host] = optional("The host of its accounts' project pages.")
    skip: Annotated[frozenset[str], Check("words", _words, _LIST), AfterValidator(_lower)] = field(
        "First path segments that come before the account name.", default=frozenset()
    )


class Vendor(KbModel):
    name: Text = field("The company.")
    affiliations: Names = field("The affiliations whose records its site is primary for.")
    hosts: Maybe[Hosts] = optional("Its own sites, primary on every page.")
    pages: Prefixes = field(
        "Its publication pages as host/path prefixes (a blog, not a whole site with"
        " user-shared pages).",
        default=(),
    )
    accounts: Words = field("Its accounts on forges (host/account).", default=())


class Forges(KbModel):
    backs: WordSet = field("The evidence labels an account's pages can carry.")
    hosts: list[Forge] = field("The forges.")


class OwnSites(KbModel):
    backs: WordSet = field("The evidence labels a record's own site can carry.")


class Vendors(KbModel):
    backs: WordSet = field("The evidence labels a vendor's site can carry.")
    members: list[Vendor] = Field(alias="list", description="The vendors.")


class HostData(KbModel):
    """``sources.yaml``, parsed."""

    version: Literal[1] = field("The file format's version.")
    papers: list[PaperKind] = field("Hosts of the paper's own pages.")
    forges: Forges = field("Code and model hosts.")
    own_sites: OwnSites = field("A record's own project pages.")
    vendors: Vendors = field("Companies' own sites.")
    aggregators: Prefixes = field(
        "Aggregators, mirrors and listings (host or host/path): never primary, never a"
        " record's own site; a sub-domain of one is one too.",
        default=(),
    )


def read_sources(
    root: Root = None,
) -> tuple[HostData | None, list[Problem]]:
    """``sources.yaml`` under the data root; ``None`` when the root has none."""
    path = Path(find_root(root)) / SOURCES_FILE
    if not os.path.lexists(path):
        return None, []
    return validate_file(HostData, path, SOURCES_FILE, top="sources")
