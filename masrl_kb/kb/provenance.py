"""Provenance: every corrected fact and every reading rests on a primary source (a URL
whose host ``sources.yaml`` or the record itself makes primary) or a provisional reason,
and an evidence ``source:`` label fits its page. A URL with user-info, a port, a
non-ASCII or punycode host, a control character or a dot segment is never primary.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from masrl_kb.kb.model.base import Loc, field_name, line_at
from masrl_kb.kb.model.paper import EVALUATED_CATEGORIES, Evidence, Paper, Source
from masrl_kb.kb.model.sources import (
    HOST_RE,
    SOURCES_FILE,
    UNSAFE_CHARS,
    Forge,
    HostData,
    Prefix,
    bare,
    read_sources,
)
from masrl_kb.kb.paths import Root
from masrl_kb.kb.problem import Problem
from masrl_kb.kb.records import RecordFile
from masrl_kb.kb.text import shorten, shorten_name

SECONDARY = "secondary"
_HOSTS_SHOWN = 3


# ---------------------------------------------------------------- URLs


@dataclass(frozen=True)
class Place:
    """A URL reduced to what the rule compares: host (no ``www.``) and path segments."""

    host: str
    segments: tuple[str, ...]


def place_of(url: object) -> Place | str:
    """The URL's host and path segments, or why it can never be a primary source."""
    if not isinstance(url, str):
        return "not text"
    if UNSAFE_CHARS.search(url):
        return "a space, backslash or control character in the URL"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "a malformed host or port"
    if parts.scheme.lower() not in ("http", "https"):
        return f"scheme {shorten(parts.scheme or 'none')}: only http(s) pages count"
    if "@" in parts.netloc:
        return "user-info before the host (user@host) hides the real host"
    if port is not None:
        return "an explicit port"
    host = parts.netloc.lower()
    if not host.isascii():
        return "a non-ASCII host name (a look-alike of a real one)"
    if any(label.startswith("xn--") for label in host.split(".")):
        return "an internationalised (punycode) host name"
    if not HOST_RE.fullmatch(host):
        return "not a host name"
    segments = tuple(unquote(s) for s in parts.path.split("/") if s)
    if any(s in (".", "..") or "/" in s for s in segments):
        return "dot segments or an encoded slash in the path"
    return Place(bare(host), segments)


# ---------------------------------------------------------------- record context


@dataclass(frozen=True)
class Kind:
    """What a primary URL is, and which evidence labels it can carry."""

    label: str
    backs: frozenset[str]


@dataclass
class _Owner:
    """The record-dependent primary places: accounts, own pages, vendor hosts."""

    accounts: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    prefixes: list[Place] = field(default_factory=list)
    vendor_hosts: frozenset[str] = frozenset()
    vendor_pages: tuple[Prefix, ...] = ()
    shown: list[str] = field(default_factory=list)


def _account_of(place: Place, forge: Forge) -> str | None:
    segments = list(place.segments)
    if segments and segments[0].lower() in forge.skip:
        segments = segments[1:]
    return segments[0].lower() if segments else None


def _forge(data: HostData, host: str) -> Forge | None:
    return next((f for f in data.forges.hosts if f.host == host), None)


def aggregator(data: HostData, place: Place) -> Prefix | None:
    """The ``sources.yaml`` aggregator entry ``place`` lies under (its sub-domains too)."""
    return next((a for a in data.aggregators if a.holds(place.host, place.segments, True)), None)


def _declare(owner: _Owner, data: HostData, url: object, backs: frozenset[str]) -> None:
    place = place_of(url)
    if not isinstance(place, Place) or aggregator(data, place):
        return  # an aggregator is never anyone's own site (reported by _own_sites)
    forge = _forge(data, place.host)
    account = _account_of(place, forge) if forge else None
    if forge and account:
        slot = (forge.host, account)
        owner.accounts[slot] = owner.accounts.get(slot, frozenset()) | backs
        owner.shown.append(f"{forge.host}/{account}")
    elif not forge:
        owner.prefixes.append(place)
        owner.shown.append("/".join((place.host, *place.segments)))


def record_owner(data: HostData, record: Mapping) -> _Owner:
    """Where this record's authors (or vendor) publish, from its own declarations."""
    owner = _Owner()
    artifacts = record.get("artifacts")
    if isinstance(artifacts, Mapping):
        _declare(owner, data, artifacts.get("code"), data.forges.backs)
    sites = record.get("own_sites")
    for url in sites if isinstance(sites, list) else []:
        _declare(owner, data, url, data.forges.backs | data.own_sites.backs)
    affiliation = record.get("affiliation")
    for vendor in data.vendors.members:
        if isinstance(affiliation, str) and affiliation in vendor.affiliations:
            hosts = vendor.hosts or frozenset()
            owner.vendor_hosts |= hosts
            owner.vendor_pages += vendor.pages
            shown = sorted(hosts) + ["/".join((p.host, *p.segments)) for p in vendor.pages]
            owner.shown.append(f"{vendor.name} ({', '.join(shown)})")
            for account in vendor.accounts:
                _declare(owner, data, f"https://{account}", data.vendors.backs)
    return owner


def path_under(segments: tuple[str, ...], prefix: str) -> bool:
    """Whether a path lies under ``prefix`` segment by segment: ``/forum`` holds
    ``/forum/x`` and ``/forum`` but not ``/forumless/x``."""
    want = tuple(s for s in prefix.split("/") if s)
    return segments[: len(want)] == want


def _paper_kind(data: HostData, place: Place) -> Kind | None:
    for kind in data.papers:
        if place.host in kind.hosts and (
            not kind.paths or any(path_under(place.segments, p) for p in kind.paths)
        ):
            return Kind(kind.kind, kind.backs)
    return None


def _owned_kind(data: HostData, owner: _Owner, place: Place) -> Kind | None:
    forge = _forge(data, place.host)
    if forge:
        backs = owner.accounts.get((forge.host, _account_of(place, forge) or ""))
        return Kind("the authors' repository", backs) if backs else None
    for f in data.forges.hosts:
        if f.pages and place.host.endswith("." + f.pages):
            backs = owner.accounts.get((f.host, place.host.removesuffix("." + f.pages)))
            if backs:
                return Kind("the authors' project page", backs | data.own_sites.backs)
    for prefix in owner.prefixes:
        if place.host == prefix.host and place.segments[: len(prefix.segments)] == prefix.segments:
            return Kind("the record's own site", data.own_sites.backs)
    if place.host in owner.vendor_hosts or any(
        p.holds(place.host, place.segments) for p in owner.vendor_pages
    ):
        return Kind("the vendor's site", data.vendors.backs)
    return None


def classify(data: HostData, owner: _Owner, url: object) -> Kind | str:
    """The primary kind of a URL for this record, or why it is not primary."""
    place = place_of(url)
    if not isinstance(place, Place):
        return place
    if found := aggregator(data, place):
        listed = "/".join((found.host, *found.segments))
        return (
            f"{shorten_name(listed)} is an aggregator ({SOURCES_FILE} aggregators), never primary"
        )
    kind = _paper_kind(data, place) or _owned_kind(data, owner, place)
    return kind or f"{shorten_name(place.host)} is a secondary host for this record"


def allowed_kinds(data: HostData, owner: _Owner) -> str:
    """The primary kinds, for messages: a few hosts of each, then the record's own."""
    parts = []
    for kind in data.papers:
        hosts = sorted(kind.hosts)
        more = f" +{len(hosts) - _HOSTS_SHOWN} more" if len(hosts) > _HOSTS_SHOWN else ""
        parts.append(f"{kind.kind} ({', '.join(hosts[:_HOSTS_SHOWN])}{more})")
    own = ", ".join(shorten_name(s, 40) for s in owner.shown[:4]) or "none declared"
    parts.append(f"the authors' repository, project page or vendor site ({own})")
    return "; ".join(parts)


# ---------------------------------------------------------------- the rule


def _provisional(item: object) -> str | None:
    value = item.get("provisional") if isinstance(item, Mapping) else None
    return value if isinstance(value, str) and value.strip() else None


@dataclass
class _Check:
    """One valid paper (typed values, lines from its file) against the host data."""

    rec: RecordFile
    paper: Paper
    data: HostData
    owner: _Owner

    def problem(self, loc: Loc, message: str, at: Loc | None = None) -> Problem:
        return Problem(self.rec.rel, line_at(self.rec.data, at or loc), field_name(loc), message)

    def need_primary(self, url: str, loc: Loc, what: str, reason: str | None) -> Iterator[Problem]:
        """A problem unless ``url`` is primary or a provisional ``reason`` is given."""
        verdict = classify(self.data, self.owner, url)
        if isinstance(verdict, Kind) or reason is not None:
            return
        hint = "evaluation_provisional" if loc == ("evaluation_source",) else "provisional"
        message = (
            f"{verdict}; {what}: at least one primary source is needed, or {hint}: <reason>; "
            f"allowed kinds: {allowed_kinds(self.data, self.owner)}"
        )
        yield self.problem(loc, message)

    def label(self, evidence: Evidence, loc: Loc) -> Iterator[Problem]:
        """An evidence ``source:`` label that its page cannot carry."""
        label, verdict = evidence.source, classify(self.data, self.owner, evidence.url)
        if label == SECONDARY or isinstance(verdict, Kind) and label in verdict.backs:
            return
        if isinstance(verdict, Kind):
            allowed = ", ".join(sorted(verdict.backs | {SECONDARY}))
            message = f"source: {label} does not fit {verdict.label}; allowed: {allowed}"
        else:
            message = f"source: {label} needs the work's own page ({verdict}); "
            message += "point at the primary page or label it secondary"
        yield self.problem((*loc, "source"), message)


def _sources(c: _Check) -> Iterator[Problem]:
    groups: dict[str, list[tuple[int, Source]]] = {}
    for i, item in enumerate(c.paper.sources or ()):
        groups.setdefault(item.field, []).append((i, item))
    for fact, items in groups.items():
        ok = any(
            item.provisional is not None or isinstance(classify(c.data, c.owner, item.url), Kind)
            for _, item in items
        )
        if not ok:
            i, item = items[0]
            what = f"the corrected {shorten(fact, 30)}"
            yield from c.need_primary(item.url, ("sources", i, "url"), what, None)


def _evidence(c: _Check) -> Iterator[Problem]:
    for i, decision in enumerate(c.paper.decisions):
        evidence = decision.evidence
        if evidence is None:
            continue
        loc: Loc = ("decisions", i, "evidence")
        yield from c.label(evidence, loc)
        if decision.learned:
            what = f"learned decision {shorten(decision.id, 8)}"
            yield from c.need_primary(evidence.url, (*loc, "url"), what, evidence.provisional)
    credit = c.paper.credit_evidence
    if credit is not None:
        yield from c.label(credit, ("credit_evidence",))
        if c.paper.credit_strict:
            loc = ("credit_evidence", "url")
            yield from c.need_primary(
                credit.url, loc, "a strict credit reading", credit.provisional
            )


def _artifacts(c: _Check) -> Iterator[Problem]:
    artifacts = c.paper.artifacts
    loc = ("artifacts", "source")
    yield from c.need_primary(artifacts.source, loc, "the release links", artifacts.provisional)


def _evaluations(c: _Check) -> Iterator[Problem]:
    paper = c.paper
    none = paper.evaluated_on_none
    if paper.evaluated_on and none is not None:
        message = "evaluated_on_none explains an empty evaluated_on; remove it or the entries"
        yield c.problem(("evaluated_on_none",), message)
    if paper.category in EVALUATED_CATEGORIES and paper.evaluated_on == [] and none is None:
        message = (
            "an RL method or framework with no benchmark says why: "
            "evaluated_on_none: {reason, url} (a primary page that shows it)"
        )
        yield c.problem(("evaluated_on_none",), message, at=("evaluated_on",))
    if none is not None:
        what = "the reason for an empty evaluated_on"
        yield from c.need_primary(none.url, ("evaluated_on_none", "url"), what, none.provisional)
    if paper.evaluation_source is not None:
        loc = ("evaluation_source",)
        reason = paper.evaluation_provisional
        yield from c.need_primary(paper.evaluation_source, loc, "the evaluations", reason)


def _results(c: _Check) -> Iterator[Problem]:
    """Every reported value is read from a primary page (a result has no provisional:
    a value is cited from where it is printed, or left out)."""
    for i, evaluation in enumerate(c.paper.evaluated_on or ()):
        for j, result in enumerate(evaluation.results or ()):
            loc: Loc = ("evaluated_on", i, "results", j, "source")
            what = f"a reported {shorten(evaluation.benchmark, 30)} value"
            verdict = classify(c.data, c.owner, result.source)
            if not isinstance(verdict, Kind):
                message = (
                    f"{verdict}; {what} is read from a primary page (the paper, its "
                    f"repository or the vendor's site); allowed kinds: "
                    f"{allowed_kinds(c.data, c.owner)}"
                )
                yield c.problem(loc, message)


def _own_sites(c: _Check) -> Iterator[Problem]:
    for i, url in enumerate(c.paper.own_sites or ()):
        place = place_of(url)
        found = aggregator(c.data, place) if isinstance(place, Place) else None
        if found is not None:
            listed = "/".join((found.host, *found.segments))
            message = (
                f"{shorten_name(listed)} is an aggregator ({SOURCES_FILE} aggregators), "
                "never the authors' own site; list their repository or project page"
            )
            yield c.problem(("own_sites", i), message)


def provenance_problems(
    papers: Sequence[tuple[RecordFile, Paper]], root: Root = None
) -> Iterator[Problem]:
    """Every provenance problem of the valid paper records, and of ``sources.yaml`` itself
    (a data root without that file, such as a small test root, has the rule off)."""
    data, problems = read_sources(root)
    yield from problems
    if data is None or problems:
        return
    for rec, paper in papers:
        # A record that validated into a Paper was loaded as a mapping.
        c = _Check(rec, paper, data, record_owner(data, rec.data))  # type: ignore[arg-type]
        for rule in (_sources, _evidence, _artifacts, _evaluations, _results, _own_sites):
            yield from rule(c)


def provisional_notes(record: Mapping) -> list[tuple[str, str]]:
    """(what, reason) for every item the record marks provisional, in record order."""
    items: list[tuple[str, object]]
    items = [(f"source of {s.get('field')}", s) for s in _mappings(record.get("sources"))]
    for d in _mappings(record.get("decisions")):
        items.append((f"evidence for {d.get('id')}", d.get("evidence")))
    items += [
        ("strict credit evidence", record.get("credit_evidence")),
        ("release links", record.get("artifacts")),
        ("no-benchmark reason", record.get("evaluated_on_none")),
        ("evaluation source", {"provisional": record.get("evaluation_provisional")}),
    ]
    return [(what, reason) for what, item in items if (reason := _provisional(item))]


def _mappings(items: Any) -> list[Mapping]:
    return [item for item in items or [] if isinstance(item, Mapping)]
