"""``sources.yaml``: which web hosts are primary sources (for :mod:`masrl_kb.kb.provenance`).
Host names are lower-case ASCII (no wildcard, look-alike or control character can widen
what counts as primary); a leading ``www.`` is dropped."""

from __future__ import annotations

import os
import re
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


def _lower(words: list[str]) -> frozenset[str]:
    return frozenset(w.lower() for w in words)


_LIST = {"type": "array", "items": {"type": "string"}, "minItems": 1}
Words = Annotated[tuple[str, ...], Check("words", _words, _LIST), AfterValidator(tuple)]
WordSet = Annotated[frozenset[str], Check("words", _words, _LIST), AfterValidator(frozenset)]
Hosts = Annotated[
    frozenset[str], Check("hosts", _hosts, _LIST), AfterValidator(lambda v: frozenset(map(bare, v)))
]
Host = Annotated[str, Check("host", _host, {"type": "string"}), AfterValidator(bare)]


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
    hosts: Hosts = field("Its own sites.")
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


def read_sources(
    root: Root = None,
) -> tuple[HostData | None, list[Problem]]:
    """``sources.yaml`` under the data root; ``None`` when the root has none."""
    path = Path(find_root(root)) / SOURCES_FILE
    if not os.path.lexists(path):
        return None, []
    return validate_file(HostData, path, SOURCES_FILE, top="sources")
