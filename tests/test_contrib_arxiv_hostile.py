"""``masrl-kb add`` against hostile loopback servers (tests/hostile/arxiv_cases.py).

Each case must either be refused with one clean line and nothing written, or,
for answers that only need cleaning, be written with the text cleaned; never a
hang past the deadline, a traceback, or a control character on the terminal.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from masrl_kb.contrib import arxiv_import, new_record
from masrl_kb.contrib.arxiv_import import ArxivImportError, write_new_file
from masrl_kb.contrib.sources import arxiv, http
from masrl_kb.kb import atomic
from tests.conftest import GOOD_PAPER
from tests.hostile.arxiv_cases import (
    ArxivCase,
    Stub,
    arxiv_cases,
    fail_then,
    run_arxiv_case,
    serve_file,
)

CASES = arxiv_cases()
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "arxiv" / "2410.08115.xml"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_add_survives_a_hostile_server(case: ArxivCase, tmp_path: Path) -> None:
    outcome = run_arxiv_case(case, tmp_path)
    expected = "rejected" if case.expect == "reject" else "accepted"
    assert outcome.kind == expected and not outcome.reasons, (outcome.reasons, outcome.output)


def test_retries_wait_the_requested_delay() -> None:
    stub = Stub(fail_then(503, 2, serve_file(FIXTURE)))
    try:
        limits = http.Limits(deadline=10, delay=0.4)
        start = time.monotonic()
        body = http.http_request(f"{stub.url}?id_list=2410.08115", limits)
        elapsed = time.monotonic() - start
    finally:
        stub.close()
    assert b"<feed" in body
    assert stub.requests == 3
    assert 0.8 <= elapsed < 5


def test_the_delay_defaults_to_three_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(arxiv.ENV_DELAY, raising=False)
    assert arxiv.paper_limits().delay == 3.0
    monkeypatch.setenv(arxiv.ENV_DELAY, "0")
    assert arxiv.paper_limits().delay == 0.0
    monkeypatch.setenv(arxiv.ENV_DELAY, "soon")
    with pytest.raises(arxiv.ArxivError, match="MASRL_KB_ARXIV_DELAY"):
        arxiv.paper_limits()


def test_an_interrupted_write_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "papers" / "x.yaml"
    real_open = open

    class Interrupting:
        def __init__(self, fh) -> None:
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            self.fh.close()

        def write(self, text: str) -> None:
            self.fh.write(text[:10])
            raise KeyboardInterrupt

    monkeypatch.setattr(
        atomic, "open", lambda *a, **k: Interrupting(real_open(*a, **k)), raising=False
    )
    with pytest.raises(KeyboardInterrupt):
        write_new_file(target, "key: x\n" * 100)
    assert list(target.parent.iterdir()) == []


def test_a_sigterm_during_the_write_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "papers" / "x.yaml"

    def terminated(src, dst) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(1)  # the signal arrives here

    monkeypatch.setattr(arxiv_import.os, "replace", terminated)
    with pytest.raises(SystemExit):
        write_new_file(target, "key: x\n")
    assert list(target.parent.iterdir()) == []
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_record_breaking_a_rule_is_not_written(tmp_path: Path) -> None:
    from masrl_kb.kb.synthetic import write_synthetic_root
    from masrl_kb.kb.taxonomy import load_taxonomy

    root = write_synthetic_root(tmp_path / "kb", papers=1, exclusions=0)
    text = GOOD_PAPER.replace("year: 2025", "year: 1066")
    with pytest.raises(ArxivImportError, match=r"papers/bad\.yaml:5: year: year 1066 is outside"):
        new_record.check_record_text("paper", "papers/bad.yaml", text, load_taxonomy(root))
    new_record.check_record_text("paper", "papers/bad.yaml", GOOD_PAPER, load_taxonomy(root))
