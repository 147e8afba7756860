"""Hostile network answers for ``masrl-kb screen run`` (the arXiv searches of a round).

The behaviours ``add`` and ``screen fetch`` meet too (tests/hostile/arxiv_cases.py and
sources_cases.py), here against a round: a server dripping its status line and headers
one byte at a time (cut at the 1.5 s deadline), bodies that do not decode as their
Content-Encoding says, and base URLs no request can be made to (refused before any
request). Each must end with one error line holding the fragment, exit 2 (every network
failure's code), no round folder and no file changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from masrl_kb.contrib.sources import arxiv
from tests.hostile.arxiv_cases import (
    BAD_BASE_URLS,
    Behaviour,
    Stub,
    compressed_cases,
    drip_headers,
    labelled,
    serve_file,
)
from tests.hostile.running import Judged, common_reasons, environ, files, one_error_line, run_cli
from tests.hostile.running import tally as _tally
from tests.screening_stub import FIXTURES, copy_kb

SINCE, UNTIL = "2026-06-01", "2026-06-30"
ENV = {arxiv.ENV_DEADLINE: "1.5", arxiv.ENV_DELAY: "0"}
FEED = FIXTURES / "empty.xml"


@dataclass(frozen=True)
class NetworkCase:
    name: str
    behave: Behaviour
    message: str  # a fragment the one error line must hold
    code: int
    url: str = ""  # MASRL_KB_ARXIV_URL when not the stub's (then the stub must not be asked)
    within: float = 20.0

    @property
    def id(self) -> str:
        return f"screen run network/{self.name}"


def network_cases() -> list[NetworkCase]:
    ok = serve_file(FEED)
    cut = "no complete answer within 1.5 s"
    cases = [NetworkCase("drip-headers", drip_headers(), cut, 2, within=6.0)]
    for name, raw, encoding in compressed_cases(FEED.read_bytes()):
        cases.append(NetworkCase(name, labelled(encoding, raw), f"labelled {encoding}", 2))
    for name, url in BAD_BASE_URLS:
        cases.append(NetworkCase(f"base-url-{name}", ok, arxiv.ENV_ARXIV_URL, 2, url=url))
    return cases


def run_network_case(case: NetworkCase, tmp: Path) -> Judged:
    """Run ``screen run`` against the case's server in a copy of the records; judge it."""
    root = copy_kb(tmp / "kb")
    before = files(root)
    stub = Stub(case.behave)
    argv = ["--root", str(root), "screen", "run", "--since", SINCE, "--until", UNTIL]
    try:
        with environ({**ENV, arxiv.ENV_ARXIV_URL: case.url or stub.url}):
            run = run_cli([*argv, "--delay", "0"])
    finally:
        stub.close()
    if run.crash:
        return Judged("crashed", run.text + run.crash)
    if run.code == 0:
        return Judged("accepted", run.text)
    reasons = common_reasons(run, case.within)
    reasons += filter(None, [one_error_line(run.err, case.message)])
    if run.code != case.code:
        reasons.append(f"exit {run.code}, expected {case.code}")
    if case.url and stub.requests:
        reasons.append("a request was made to a refused base URL")
    after = {rel: data for rel, data in files(root).items() if not rel.endswith(".lock")}
    if after != {rel: data for rel, data in before.items() if not rel.endswith(".lock")}:
        reasons.append("files changed")
    return Judged("unclear" if reasons else "rejected", run.text, reasons, run.seconds)


def _verdict(case: NetworkCase, outcome: Judged) -> tuple[str, tuple | None]:
    failure = (case.id, outcome.kind, "; ".join(outcome.reasons) or outcome.output[-300:])
    return outcome.kind, None if outcome.kind == "rejected" else failure


def network_counts(bad: list) -> dict[str, int]:
    """Counts by outcome for tests/hostile/run_corpus.py; failures appended to ``bad``."""
    return _tally(network_cases(), run_network_case, _verdict, bad)
