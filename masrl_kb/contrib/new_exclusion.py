"""``masrl-kb exclude``: the next ``exclusions/E<nnn>.yaml`` for an arXiv id (its metadata
fetched) or a URL (its identifier and source read from the host), every choice checked
against taxonomy.yaml.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

from masrl_kb.contrib.new_record import (
    ArxivImportError,
    Written,
    checked_paper,
    refuse_existing,
    write_record,
)
from masrl_kb.contrib.sources.arxiv import ArxivPaper, arxiv_or_none, fetch_paper
from masrl_kb.kb.fields import EXCLUSION_ID_PATTERN
from masrl_kb.kb.records import EXCLUSIONS_DIR, RECORD_SUFFIX, RecordSet, read_records
from masrl_kb.kb.rules import is_http_url
from masrl_kb.kb.taxonomy import Taxonomy, load_taxonomy
from masrl_kb.kb.text import shorten

_EXCLUSION_RE = re.compile(EXCLUSION_ID_PATTERN)
# Default `source` of a non-arXiv exclusion, by host; used only when the id
# exists in taxonomy.yaml's exclusion_source axis.
_SOURCE_BY_HOST = {
    "openreview.net": "openreview",
    "aclanthology.org": "acl_anthology",
    "github.com": "github_project_page",
}


def next_exclusion_id(records: RecordSet) -> str:
    """The next free log id: one past the highest E-number in use."""
    numbers, width = [0], 3
    names = [Path(r.rel).stem for r in records.exclusions]
    folder = records.root / EXCLUSIONS_DIR
    if folder.is_dir():
        names += [p.stem for p in folder.iterdir()]
    for name in names:
        if _EXCLUSION_RE.match(name):
            numbers.append(int(name[1:]))
            width = max(width, len(name) - 1)
    return f"E{max(numbers) + 1:0{width}d}"


def check_choice(
    tax: Taxonomy,
    axis: str,
    value: str | None,
    option: str,
    error: type[ValueError] = ArxivImportError,
) -> str:
    """``value`` when it is an id of ``axis``; else ``error`` naming the option."""
    ids = tax[axis].ids
    if value is None or value not in ids:
        raise error(
            f"{option}: unknown value {value!r}; allowed ({axis} in taxonomy.yaml): "
            + ", ".join(ids)
        )
    return value


def _url_facts(reference: str, title: str | None) -> tuple[str, str, str, str]:
    """A non-arXiv exclusion's URL, title, identifier and default source ("": none)."""
    url = reference.strip()
    if not is_http_url(url):
        raise ArxivImportError(f"{shorten(reference)} is neither an arXiv id nor an http(s) URL")
    if not title:
        raise ArxivImportError("give --title: only arXiv records have their title fetched")
    parts = urlsplit(url)
    host = parts.netloc.lower().removeprefix("www.")
    path = parts.path.strip("/")
    forum = re.search(r"(?:^|&)id=([^&]+)", parts.query)
    identifier = ""
    if host == "openreview.net" and forum:
        identifier = f"OpenReview:{forum.group(1)}"
    elif host == "aclanthology.org" and path:
        identifier = f"ACL:{path.removesuffix('.pdf')}"
    elif host == "github.com" and path.count("/") >= 1:
        identifier = "github:" + "/".join(path.split("/")[:2])
    return url, title, identifier, _SOURCE_BY_HOST.get(host, "")


def exclude_record(
    reference: str,
    stage: str,
    reason: str,
    root: str | os.PathLike[str] | None = None,
    source: str | None = None,
    query_family: str | None = None,
    note: str | None = None,
    title: str | None = None,
    identifier: str | None = None,
    today: dt.date | None = None,
    paper: ArxivPaper | None = None,
) -> Written:
    """Write the next ``exclusions/E<nnn>.yaml`` for an arXiv id or a URL (``paper``: the
    arXiv metadata when already fetched, so no request is made)."""
    records = read_records(root)
    tax = load_taxonomy(records.root)
    for axis, value, option in (
        ("exclusion_stage", stage, "--stage"),
        ("exclusion_reason", reason, "--reason"),
        ("query_family", query_family, "--query-family"),
        ("exclusion_source", source, "--source"),
    ):
        if value is not None or option in ("--stage", "--reason"):
            check_choice(tax, axis, value, option)
    arxiv_id = arxiv_or_none(reference)
    if arxiv_id:
        refuse_existing(records, arxiv_id=arxiv_id)
        paper = checked_paper(paper or fetch_paper(arxiv_id))
        url, found_id, found_source = paper.url, f"arXiv:{arxiv_id}", "arxiv"
        title = title or paper.title
    else:
        paper = None
        url, title, found_id, found_source = _url_facts(reference, title)
    refuse_existing(records, title=title, url=url)
    if source is None and found_source in tax["exclusion_source"].ids:
        source = found_source
    eid = next_exclusion_id(records)
    facts = {
        "id": eid,
        "title": " ".join(title.split()),
        "identifier": identifier or found_id,
        "url": url,
        "source": source,
        "query_family": query_family,
        "screened": today or dt.date.today(),
        "stage": stage,
        "reason": reason,
        "note": note,
    }
    return write_record(
        records, "exclusion", f"{EXCLUSIONS_DIR}/{eid}{RECORD_SUFFIX}", facts, paper
    )
