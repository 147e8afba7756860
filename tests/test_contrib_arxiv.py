"""``masrl-kb add`` and ``exclude`` against a loopback arXiv API stub.

The stub serves hand-written Atom responses from tests/fixtures/arxiv/ in the
format of export.arxiv.org/api/query; MASRL_KB_ARXIV_URL points the commands
at it. No test touches the network.
"""

from __future__ import annotations

import datetime as dt
import socket
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from masrl_kb.contrib import arxiv_import
from masrl_kb.contrib.arxiv_import import derive_key, family_given
from masrl_kb.contrib.sources.arxiv import ENV_ARXIV_URL, ENV_DELAY, ArxivError, parse_arxiv_id
from masrl_kb.kb.fields import PAPER_FIELDS, PLACEHOLDER
from masrl_kb.kb.record_checks import validate
from masrl_kb.kb.yamlio import load_yaml_file
from tests.conftest import run_cli as run
from tests.loopback import LoopbackServer, QuietHandler, send_atom
from tests.screening_stub import copy_kb

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "arxiv"
# id_list value -> (HTTP status, fixture); any other id gets the empty feed.
ERRORS = {"0801.00001": (400, "error-400.xml")}


class ArxivStub:
    """A loopback HTTP server answering like the arXiv API query endpoint."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        stub = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                parts = urlsplit(self.path)
                ids = parse_qs(parts.query).get("id_list", [""])[0]
                stub.requests.append(ids)
                status, name = 200, "empty.xml"
                if parts.path != "/api/query":
                    status = 404
                elif ids in ERRORS:
                    status, name = ERRORS[ids]
                elif (FIXTURES / f"{ids}.xml").is_file():
                    name = f"{ids}.xml"
                body = (FIXTURES / name).read_bytes()
                send_atom(self, status, body)

        self._loopback = LoopbackServer(Handler)
        self.url = self._loopback.url

    def close(self) -> None:
        self._loopback.close()


@pytest.fixture
def arxiv_api(monkeypatch: pytest.MonkeyPatch):
    stub = ArxivStub()
    monkeypatch.setenv(ENV_ARXIV_URL, stub.url)
    yield stub
    stub.close()


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    """A copy of the real records (so duplicates are checked against them)."""
    return copy_kb(tmp_path / "kb")


def _line(path: Path, field: str) -> int:
    """The line of a top-level field in a record file."""
    lines = path.read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if text.startswith(f"{field}:"))


def _files(root: Path) -> set[str]:
    """Every file of the data root but the (git-ignored) parse cache."""
    files = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    return {f for f in files if not f.startswith(".cache/")}


# ---------------------------------------------------------------- add


def test_add_writes_facts_and_placeholders(
    kb: Path, arxiv_api: ArxivStub, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _files(kb)
    assert run("--root", str(kb), "add", "2410.08115") == 0
    assert _files(kb) - before == {"papers/optima2024.yaml"}
    assert arxiv_api.requests == ["2410.08115"]
    path = kb / "papers" / "optima2024.yaml"
    lines = path.read_text().splitlines()
    assert lines[0] == "# yaml-language-server: $schema=../schema/paper.schema.json"
    assert lines[1] == "# arXiv primary category: cs.CL"
    data = load_yaml_file(path).data
    assert data["key"] == "optima2024"
    assert data["title"] == (
        "Optima: Optimizing Effectiveness and Efficiency for LLM-Based Multi-Agent System"
    )
    assert data["authors"] == [
        "Chen, Weize",
        "Yuan, Jiarui",
        "Qian, Chen",
        "Yang, Cheng",
        "Liu, Zhiyuan",
        "Sun, Maosong",
    ]
    assert "authors_truncated" not in data
    assert (data["year"], data["venue"], data["arxiv_id"]) == (2024, "arXiv", "2410.08115")
    assert data["url"] == "https://arxiv.org/abs/2410.08115"
    assert data["added"] == dt.date.today()
    assert data["citation"] == {
        "bibtex_key": "optima2024",
        "entry_type": "article",
        "journal": "arXiv preprint arXiv:2410.08115",
    }
    required_tags = [f.name for f in PAPER_FIELDS if f.kind == "axis" and f.required]
    judgement = [
        *required_tags,
        "credit_strict",
        "decisions",
        "summary",
        "affiliation",
        "artifacts",
    ]
    assert all(data[name] == PLACEHOLDER for name in judgement)
    # Field order is the field list's order.
    assert list(data)[:3] == ["key", "title", "authors"]
    assert list(data) == [f.name for f in PAPER_FIELDS if f.name in data]
    # validate reports exactly the placeholders as unfinished, nothing else.
    problems = [p for p in validate(kb).problems if p.path == "papers/optima2024.yaml"]
    placeholders = [name for name, value in data.items() if value == PLACEHOLDER]
    assert set(judgement) <= set(placeholders)
    assert sorted(p.field for p in problems) == sorted(placeholders)
    assert all(p.message.startswith("unfinished: replace the TODO placeholder") for p in problems)
    assert len(validate(kb).problems) == len(problems)
    out = capsys.readouterr().out
    assert "wrote papers/optima2024.yaml" in out
    assert "communication efficiency" in out  # the abstract, printed for tagging...
    assert "communication efficiency" not in path.read_text()  # ...but not stored


def test_add_with_key(kb: Path, arxiv_api: ArxivStub) -> None:
    assert (
        run("--root", str(kb), "add", "https://arxiv.org/abs/2410.08115v2", "--key", "optima") == 0
    )
    data = load_yaml_file(kb / "papers" / "optima.yaml").data
    assert data["key"] == "optima"
    assert data["citation"]["bibtex_key"] == "optima2024"
    assert arxiv_api.requests == ["2410.08115"]  # the version suffix is dropped


def test_add_refuses_to_overwrite(
    kb: Path, arxiv_api: ArxivStub, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (kb / "papers" / "puppeteer.yaml").read_bytes()
    assert run("--root", str(kb), "add", "2410.08115", "--key", "puppeteer") == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    assert (kb / "papers" / "puppeteer.yaml").read_bytes() == before
    assert arxiv_api.requests == []


def test_add_rejects_a_bad_key(kb: Path, arxiv_api: ArxivStub, capsys) -> None:
    before = _files(kb)
    assert run("--root", str(kb), "add", "2410.08115", "--key", "Optima_2024") == 2
    assert "does not match" in capsys.readouterr().err
    assert _files(kb) == before


@pytest.mark.parametrize(
    ("reference", "state", "record", "field"),
    [
        ("2505.19591", "pooled", "papers/puppeteer.yaml", "arxiv_id"),
        ("arXiv:2308.08155", "excluded", "exclusions/E003.yaml", "identifier"),
    ],
)
def test_add_reports_known_ids_without_asking_arxiv(
    kb: Path, arxiv_api: ArxivStub, capsys, reference, state, record, field
) -> None:
    arxiv_id = reference.removeprefix("arXiv:")
    line = _line(kb / record, field)
    expected = f"already {state}: {record}:{line} has arXiv id {arxiv_id}"
    before = _files(kb)
    assert run("--root", str(kb), "add", reference) == 1
    out = capsys.readouterr().out
    assert expected in out and "nothing written" in out
    assert _files(kb) == before
    assert arxiv_api.requests == []


def test_add_reports_a_paper_pooled_under_another_url(
    kb: Path, arxiv_api: ArxivStub, capsys: pytest.CaptureFixture[str]
) -> None:
    # Drop the record's arxiv_id so that only the title can match.
    record = kb / "papers" / "multiagent-finetuning2025.yaml"
    lines = record.read_text(encoding="utf-8").splitlines(keepends=True)
    record.write_text("".join(x for x in lines if not x.startswith("arxiv_id:")), encoding="utf-8")
    before = _files(kb)
    assert run("--root", str(kb), "add", "2501.05707") == 1
    out = capsys.readouterr().out
    line = _line(kb / "papers" / "multiagent-finetuning2025.yaml", "title")
    assert f"already pooled: papers/multiagent-finetuning2025.yaml:{line} has the same title" in out
    assert _files(kb) == before
    assert arxiv_api.requests == ["2501.05707"]


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("masrl-kb: ")
    return lines[0]


def test_add_unknown_id(kb: Path, arxiv_api: ArxivStub, capsys) -> None:
    before = _files(kb)
    assert run("--root", str(kb), "add", "2501.99999") == 2
    assert _one_line_error(capsys) == "masrl-kb: arXiv has no paper with id 2501.99999"
    assert _files(kb) == before


def test_add_malformed_id_is_refused_before_any_request(
    kb: Path, arxiv_api: ArxivStub, capsys
) -> None:
    before = _files(kb)
    assert run("--root", str(kb), "add", "2505.195") == 2
    assert "malformed arXiv id '2505.195'" in _one_line_error(capsys)
    assert arxiv_api.requests == []
    assert _files(kb) == before


def test_add_id_the_api_rejects(kb: Path, arxiv_api: ArxivStub, capsys) -> None:
    before = _files(kb)
    assert run("--root", str(kb), "add", "0801.00001") == 2
    assert "rejected '0801.00001' as a malformed id (HTTP 400)" in _one_line_error(capsys)
    assert _files(kb) == before


def test_add_without_network(
    kb: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv(ENV_ARXIV_URL, f"http://127.0.0.1:{port}/api/query")
    before = _files(kb)
    assert run("--root", str(kb), "add", "2410.08115") == 2
    assert "cannot reach the arXiv API at http://127.0.0.1:" in _one_line_error(capsys)
    assert _files(kb) == before


def test_add_leaves_no_partial_file(
    kb: Path, arxiv_api: ArxivStub, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(arxiv_import.os, "replace", broken_replace)
    before = _files(kb)
    assert run("--root", str(kb), "add", "2410.08115") == 2
    assert "disk full" in _one_line_error(capsys)
    assert _files(kb) == before  # neither the record nor its temporary file


# ---------------------------------------------------------------- helpers


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Joshua B. Tenenbaum", "Tenenbaum, Joshua B."),
        ("Ludwig van Beethoven", "van Beethoven, Ludwig"),
        ("Martin Luther King Jr.", "King, Jr., Martin Luther"),
        ("OpenAI", "OpenAI"),
        ("H1 Collaboration", "H1 Collaboration"),
        ("Dang, Yufan", "Dang, Yufan"),
    ],
)
def test_family_given(name: str, expected: str) -> None:
    assert family_given(name) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2505.19591", "2505.19591"),
        ("arXiv:2505.19591v3", "2505.19591"),
        ("https://arxiv.org/pdf/2505.19591v1.pdf", "2505.19591"),
        ("http://export.arxiv.org/abs/cs/0112017v1", "cs/0112017"),
    ],
)
def test_parse_arxiv_id(text: str, expected: str) -> None:
    assert parse_arxiv_id(text) == expected


@pytest.mark.parametrize("text", ["12345", "2513.00001", "https://example.org/abs/2505.19591"])
def test_parse_arxiv_id_refuses(text: str) -> None:
    with pytest.raises(ArxivError, match="malformed arXiv id"):
        parse_arxiv_id(text)


def test_derive_key() -> None:
    assert derive_key("Optima: Optimizing Effectiveness", 2024) == "optima2024"
    assert derive_key("Multiagent Finetuning: Self Improvement", 2025) == (
        "multiagent-finetuning2025"
    )
    assert derive_key("WideSeek-R1: Exploring Width Scaling", 2026) == "wideseek-r1-2026"
    assert derive_key("The Surprising Effectiveness of PPO", 2022) == "surprising2022"
    assert derive_key("Optima: Again", 2024, {"optima2024", "optima2024-2"}) == "optima2024-3"


# ---------------------------------------------------------------- exclude


def test_exclude_writes_the_next_exclusion(
    kb: Path, arxiv_api: ArxivStub, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "--root", str(kb), "exclude", "2303.11366", "--stage", "abstract_screen",
        "--reason", "single_agent_method", "--query-family", "reinforcement_learning",
        "--note", "A single agent learns from its own verbal feedback; no team is trained.",
    ]  # fmt: skip
    assert run(*argv) == 0
    path = kb / "exclusions" / "E033.yaml"
    assert path.read_text().splitlines()[0] == (
        "# yaml-language-server: $schema=../schema/exclusion.schema.json"
    )
    data = load_yaml_file(path).data
    assert data == {
        "id": "E033",
        "title": "Reflexion: Language Agents with Verbal Reinforcement Learning",
        "identifier": "arXiv:2303.11366",
        "url": "https://arxiv.org/abs/2303.11366",
        "source": "arxiv",
        "query_family": "reinforcement_learning",
        "screened": dt.date.today(),
        "stage": "abstract_screen",
        "reason": "single_agent_method",
        "note": "A single agent learns from its own verbal feedback; no team is trained.",
    }
    assert validate(kb).ok
    assert "wrote exclusions/E033.yaml" in capsys.readouterr().out


def test_exclude_leaves_placeholders_for_validate(kb: Path, arxiv_api: ArxivStub) -> None:
    argv = ["exclude", "2303.11366", "--stage", "abstract_screen", "--reason", "out_of_scope"]
    assert run("--root", str(kb), *argv) == 0
    problems = validate(kb).problems
    assert {(p.path, p.field) for p in problems} == {
        ("exclusions/E033.yaml", "note"),
        ("exclusions/E033.yaml", "query_family"),
    }


def test_exclude_choices_come_from_the_taxonomy(
    kb: Path, arxiv_api: ArxivStub, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["exclude", "2303.11366", "--stage", "coffee_screen", "--reason", "out_of_scope"]
    before = _files(kb)
    assert run("--root", str(kb), *argv) == 2
    err = _one_line_error(capsys)
    assert "--stage: unknown value 'coffee_screen'" in err and "abstract_screen" in err
    assert _files(kb) == before and arxiv_api.requests == []
    # A value added to taxonomy.yaml is accepted without touching the code.
    taxonomy = kb / "taxonomy.yaml"
    taxonomy.write_text(
        taxonomy.read_text().replace(
            "      - id: duplicate_screen\n",
            "      - id: coffee_screen\n        label: Coffee screen\n"
            "        definition: Excluded over coffee.\n      - id: duplicate_screen\n",
        )
    )
    assert run("--root", str(kb), *argv) == 0
    assert load_yaml_file(kb / "exclusions" / "E033.yaml").data["stage"] == "coffee_screen"


def test_exclude_reports_an_excluded_paper(
    kb: Path, arxiv_api: ArxivStub, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["exclude", "https://arxiv.org/abs/2308.08155", "--stage", "abstract_screen"]
    assert run("--root", str(kb), *argv, "--reason", "background_only") == 1
    line = _line(kb / "exclusions" / "E003.yaml", "identifier")
    assert f"already excluded: exclusions/E003.yaml:{line}" in capsys.readouterr().out
    assert not (kb / "exclusions" / "E033.yaml").exists()
    assert arxiv_api.requests == []


def test_exclude_a_non_arxiv_url(kb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = "https://openreview.net/forum?id=AbCdEf123"
    argv = ["exclude", url, "--stage", "abstract_screen", "--reason", "out_of_scope"]
    assert run("--root", str(kb), *argv) == 2
    assert "give --title" in _one_line_error(capsys)
    assert run("--root", str(kb), *argv, "--title", "A Paper Seen on OpenReview") == 0
    data = load_yaml_file(kb / "exclusions" / "E033.yaml").data
    assert (data["identifier"], data["source"], data["url"]) == (
        "OpenReview:AbCdEf123",
        "openreview",
        url,
    )
    # The same URL again is reported, not written twice.
    assert run("--root", str(kb), *argv, "--title", "Another Title") == 1
    assert "already excluded: exclusions/E033.yaml" in capsys.readouterr().out


class FailingArxiv(QuietHandler):
    """An arXiv API that answers every request with HTTP 503."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        send_atom(self, 503, b"busy")


@pytest.mark.parametrize("failure", ["unreachable", "always-503"])
def test_exclude_network_failure_is_one_line_and_exit_2(
    kb: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], failure: str
) -> None:
    # exclude fetches an arXiv title as add does: a failed fetch is exit 2, not a finding (1).
    monkeypatch.setenv(ENV_DELAY, "0")
    server = LoopbackServer(FailingArxiv)
    url = server.url
    if failure == "unreachable":
        server.close()  # nothing listens there any more
    monkeypatch.setenv(ENV_ARXIV_URL, url)
    before = _files(kb)
    argv = ["exclude", "2303.11366", "--stage", "abstract_screen", "--reason", "out_of_scope"]
    try:
        assert run("--root", str(kb), *argv) == 2
    finally:
        if failure != "unreachable":
            server.close()
    line = _one_line_error(capsys)
    wanted = "cannot reach the arXiv API" if failure == "unreachable" else "answered HTTP 503"
    assert wanted in line, line
    assert _files(kb) == before
