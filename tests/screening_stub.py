"""A loopback arXiv API answering screening queries from tests/fixtures/screening/.

A query is recognised by its first term (``(ti:"<term>" ...``), which names its
query family in protocol.yaml; the page is the ``start`` parameter. The files are
``<family>-<start>.xml``; a family or page without a file gets the empty feed.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from masrl_kb.kb.protocol import load_protocol
from tests.loopback import LoopbackServer, QuietHandler, send_atom

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "screening"
_FIRST_TERM = re.compile(r'^\(ti:"([^"]+)"')


class ScreeningStub:
    """Serves the fixture pages; records every (family, start, max_results) asked."""

    def __init__(self, fixtures: Path = FIXTURES) -> None:
        families = {f.terms[0]: f.id for f in load_protocol(REPO).families}
        self.requests: list[tuple[str, int, int]] = []
        stub = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                query = parse_qs(urlsplit(self.path).query)
                found = _FIRST_TERM.match(query.get("search_query", [""])[0])
                family = families.get(found.group(1), "?") if found else "?"
                start = int(query.get("start", ["0"])[0])
                stub.requests.append((family, start, int(query.get("max_results", ["0"])[0])))
                path = fixtures / f"{family}-{start}.xml"
                body = (path if path.is_file() else fixtures / "empty.xml").read_bytes()
                send_atom(self, 200, body)

        self._loopback = LoopbackServer(Handler)
        self.url = self._loopback.url

    def close(self) -> None:
        self._loopback.close()


def copy_kb(target: Path, survey_only: bool = True) -> Path:
    """A copy of the real records, taxonomy, claims, benchmarks and protocol.

    ``survey_only`` (the default) copies the records as they stood on the survey's
    cut-off (papers added and exclusions screened by then), so a test's own rounds
    and records are the only ones after it, whatever the screening rounds since
    have added to the real pool.
    """
    import yaml

    target.mkdir(parents=True)
    for name in ("taxonomy.yaml", "protocol.yaml", "claims.yaml", "benchmarks.yaml"):
        shutil.copy(REPO / name, target / name)
    baseline = yaml.safe_load((REPO / "protocol.yaml").read_text())["survey"]["baseline"]
    for folder, field in (("papers", "added"), ("exclusions", "screened")):
        (target / folder).mkdir()
        for path in sorted((REPO / folder).glob("*.yaml")):
            day = yaml.safe_load(path.read_text(encoding="utf-8")).get(field)
            if not survey_only or day <= baseline:
                shutil.copy(path, target / folder / path.name)
    return target
