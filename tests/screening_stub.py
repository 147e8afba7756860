"""A loopback arXiv API answering screening queries from tests/fixtures/screening/.

A query is recognised by its first term (``(ti:"<term>" ...``), which names its
query family in protocol.yaml; the page is the ``start`` parameter. The files are
``<family>-<start>.xml``; a family or page without a file gets the empty feed.
"""

from __future__ import annotations

import functools
import re
import shutil
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from masrl_kb.kb.protocol import load_protocol
from masrl_kb.kb.yamlio import load_yaml_file
from tests.loopback import Stub, send_atom

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "screening"
_FIRST_TERM = re.compile(r'^\(ti:"([^"]+)"')


class ScreeningStub(Stub):
    """Serves the fixture pages; records every (family, start, max_results) asked."""

    def __init__(self, fixtures: Path = FIXTURES) -> None:
        self.families = {f.terms[0]: f.id for f in load_protocol(REPO).families}
        self.fixtures = fixtures
        self.requests: list[tuple[str, int, int]] = []
        super().__init__()

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        query = parse_qs(urlsplit(handler.path).query)
        found = _FIRST_TERM.match(query.get("search_query", [""])[0])
        family = self.families.get(found.group(1), "?") if found else "?"
        start = int(query.get("start", ["0"])[0])
        self.requests.append((family, start, int(query.get("max_results", ["0"])[0])))
        path = self.fixtures / f"{family}-{start}.xml"
        path = path if path.is_file() else self.fixtures / "empty.xml"
        send_atom(handler, 200, path.read_bytes())


def copy_kb(target: Path, survey_only: bool = True) -> Path:
    """A copy of the real records, taxonomy, claims, benchmarks and protocol.

    ``survey_only`` (the default) copies the records as they stood on the survey's
    cut-off (papers added and exclusions screened by then), so a test's own rounds
    and records are the only ones after it, whatever the screening rounds since
    have added to the real pool.
    """
    target.mkdir(parents=True)
    for name in ("taxonomy.yaml", "protocol.yaml", "claims.yaml", "benchmarks.yaml"):
        shutil.copy(REPO / name, target / name)
    for folder in ("papers", "exclusions"):
        (target / folder).mkdir()
    (target / "readings").mkdir()  # the survey's view reading: its claims still hold
    for rel in (*_survey_readings(), *_record_files(survey_only)):
        shutil.copy(REPO / rel, target / rel)
    return target


@functools.cache
def _survey_readings() -> tuple[str, ...]:
    """The reader files marked ``view: survey``, chosen once a session: parsing every
    reader file (each codes the whole pool) took most of a copy's time."""
    chosen = []
    for path in sorted((REPO / "readings").glob("*.yaml")):
        if load_yaml_file(path).data.get("view") == "survey":
            chosen.append(f"readings/{path.name}")
    return tuple(chosen)


@functools.cache
def _record_files(survey_only: bool) -> tuple[str, ...]:
    """The record files ``copy_kb`` copies, chosen once a session: reading every record
    took a second a copy, and the tests never change the real records. Read with the
    package's C-parser reader: PyYAML's pure-Python ``safe_load`` took seconds a session."""
    baseline = load_protocol(REPO).baseline
    chosen = []
    for folder, field in (("papers", "added"), ("exclusions", "screened")):
        for path in sorted((REPO / folder).glob("*.yaml")):
            day = load_yaml_file(path).data.get(field)
            if not survey_only or day <= baseline:
                chosen.append(f"{folder}/{path.name}")
    return tuple(chosen)
