"""Provenance: every corrected fact and every reading rests on a primary source (a URL
whose host ``sources.yaml`` or the record itself makes primary) or a provisional reason,
and an evidence ``source:`` label fits its page. A URL with user-info, a port, a
non-ASCII or punycode host, a control character or a dot segment is never primary.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from masrl_kb.kb.model.base import Loc, field_name, line_at
from masrl_kb.kb.model.paper import EVALUATED_CATEGORIES, Paper
from masrl_kb.kb.model.sources_model import (
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


# ---------------------------------------------------------------- where URLs cite


@dataclass(frozen=True)
class Cited:
    """One place a record cites a page for what it states: the one table that both the
    rule (:func:`provenance_problems`) and the site's badge (:func:`provisional_notes`)
    read. A new URL field that backs a fact or a reading is a row here;
    ``tests/test_provenance.py`` fails on a URL field of the model found in no row and
    not listed in :data:`NOT_CITED`."""

    path: tuple[str, ...]  # to the mapping holding the URL; "*": each item of a list
    url: str  # the URL's key in that mapping
    provisional: str | None  # the key of the reason standing in for a primary page; None: none may
    what: str  # in messages; {name}: a value of the mapping or of the one holding it
    note: str  # in provisional_notes, formatted the same way
    when: str | None = None  # a key of the holding mapping that must be true for the rule
    labelled: bool = False  # the mapping's source: label must fit its page
    by_fact: bool = False  # one primary page among the items of one `field` suffices


CITED: tuple[Cited, ...] = (
    Cited(
        ("sources", "*"),
        "url",
        "provisional",
        "the corrected {field}",
        "source of {field}",
        by_fact=True,
    ),
    Cited(
        ("decisions", "*", "evidence"),
        "url",
        "provisional",
        "learned decision {id}",
        "evidence for {id}",
        when="learned",
        labelled=True,
    ),
    Cited(
        ("credit_evidence",),
        "url",
        "provisional",
        "a strict credit reading",
        "strict credit evidence",
        when="credit_strict",
        labelled=True,
    ),
    Cited(("artifacts",), "source", "provisional", "the release links", "release links"),
    Cited(
        ("evaluated_on_none",),
        "url",
        "provisional",
        "the reason for an empty evaluated_on",
        "no-benchmark reason",
    ),
    Cited(
        (), "evaluation_source", "evaluation_provisional", "the evaluations", "evaluation source"
    ),
    Cited(
        ("evaluated_on", "*", "results", "*"),
        "source",
        None,
        "a reported {benchmark} value",
        "reported value",
    ),
)
# URL fields that name the work's own pages rather than back a statement about it.
NOT_CITED = frozenset(
    {
        "url",
        "extra_urls",
        "own_sites",
        "artifacts.code",
        "artifacts.weights",
        "artifacts.data",
        "artifacts.traces",
    }
)


@dataclass(frozen=True)
class Spot:
    """One mapping a :class:`Cited` row finds in a record."""

    loc: Loc  # of the mapping
    item: Mapping
    holder: Mapping  # the mapping that holds it (the record at the top)


def spots(record: Mapping, cited: Cited) -> Iterator[Spot]:
    """Every mapping of ``record`` at ``cited.path``, in record order."""
    found: list[tuple[Loc, object, Mapping]] = [((), record, record)]
    for step in cited.path:
        deeper: list[tuple[Loc, object, Mapping]] = []
        for loc, value, holder in found:
            if step == "*" and isinstance(value, list):
                deeper += [((*loc, i), v, holder) for i, v in enumerate(value)]
            elif step != "*" and isinstance(value, Mapping):
                deeper.append(((*loc, step), value.get(step), value))
        found = deeper
    return (Spot(loc, v, h) for loc, v, h in found if isinstance(v, Mapping))


def _named(text: str, spot: Spot, quoted: bool = True) -> str:
    """``text`` with each ``{name}`` a value of the spot's mapping or of its holder (quoted
    and cut in a message, as the record gives it in a note)."""
    values = {**spot.holder, **spot.item}
    names = re.findall(r"{(\w+)}", text)
    show = (lambda v: shorten(v, 30)) if quoted else (lambda v: str(v))
    return text.format_map({n: show(values.get(n)) for n in names})


def _reason(spot: Spot, cited: Cited) -> str | None:
    value = spot.item.get(cited.provisional) if cited.provisional else None
    return value if isinstance(value, str) and value.strip() else None


# ---------------------------------------------------------------- the rule


@dataclass
class _Check:
    """One valid paper (its mapping, lines from its file) against the host data."""

    rec: RecordFile
    paper: Paper
    data: HostData
    owner: _Owner

    def problem(self, loc: Loc, message: str, at: Loc | None = None) -> Problem:
        return Problem(self.rec.rel, line_at(self.rec.data, at or loc), field_name(loc), message)

    def need_primary(self, spot: Spot, cited: Cited) -> Iterator[Problem]:
        """A problem unless the spot's URL is primary or a provisional reason is given."""
        url, loc = spot.item.get(cited.url), (*spot.loc, cited.url)
        verdict = classify(self.data, self.owner, url)
        if isinstance(verdict, Kind) or _reason(spot, cited) is not None:
            return
        what, kinds = _named(cited.what, spot), allowed_kinds(self.data, self.owner)
        if cited.provisional is None:
            message = (
                f"{verdict}; {what} is read from a primary page (the paper, its "
                f"repository or the vendor's site); allowed kinds: {kinds}"
            )
        else:
            message = (
                f"{verdict}; {what}: at least one primary source is needed, or "
                f"{cited.provisional}: <reason>; allowed kinds: {kinds}"
            )
        yield self.problem(loc, message)

    def label(self, spot: Spot, cited: Cited) -> Iterator[Problem]:
        """An evidence ``source:`` label that its page cannot carry."""
        label = spot.item.get("source")
        verdict = classify(self.data, self.owner, spot.item.get(cited.url))
        if label == SECONDARY or isinstance(verdict, Kind) and label in verdict.backs:
            return
        if isinstance(verdict, Kind):
            allowed = ", ".join(sorted(verdict.backs | {SECONDARY}))
            message = f"source: {label} does not fit {verdict.label}; allowed: {allowed}"
        else:
            message = f"source: {label} needs the work's own page ({verdict}); "
            message += "point at the primary page or label it secondary"
        yield self.problem((*spot.loc, "source"), message)

    def cited(self, cited: Cited) -> Iterator[Problem]:
        """The rule of one :class:`Cited` row over this record."""
        # A malformed value is the model's to report: only URLs given as text are judged.
        record = self.rec.data if isinstance(self.rec.data, Mapping) else {}
        found = [s for s in spots(record, cited) if isinstance(s.item.get(cited.url), str)]
        if cited.labelled:
            for spot in found:
                yield from self.label(spot, cited)
        found = [s for s in found if cited.when is None or s.holder.get(cited.when) is True]
        if not cited.by_fact:
            for spot in found:
                yield from self.need_primary(spot, cited)
            return
        groups: dict[object, list[Spot]] = {}
        for spot in found:
            groups.setdefault(repr(spot.item.get("field")), []).append(spot)
        for items in groups.values():
            if not any(
                _reason(s, cited) is not None
                or isinstance(classify(self.data, self.owner, s.item.get(cited.url)), Kind)
                for s in items
            ):
                yield from self.need_primary(items[0], cited)


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


def _cited(c: _Check) -> Iterator[Problem]:
    for cited in CITED:
        yield from c.cited(cited)


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
        for rule in (_cited, _evaluations, _own_sites):
            yield from rule(c)


def provisional_notes(record: Mapping) -> list[tuple[str, str]]:
    """(what, reason) for every item the record marks provisional, in :data:`CITED` order."""
    return [
        (_named(cited.note, spot, quoted=False), reason)
        for cited in CITED
        if isinstance(record, Mapping)
        for spot in spots(record, cited)
        if (reason := _reason(spot, cited))
    ]
