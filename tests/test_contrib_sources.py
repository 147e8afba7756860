"""``masrl-kb screen fetch``: each adapter against recorded answers on a loopback stub.

A normal answer maps to exact CSV rows; paging follows the service's scheme;
a 429 with Retry-After is waited out and retried. Hostile answers are in
tests/hostile/sources_cases.py (tests/test_contrib_sources_hostile.py).
"""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import pytest

from masrl_kb.cli.main import main
from masrl_kb.contrib.export.csv_io import csv_text
from masrl_kb.contrib.sources.http import SourceError, retry_after_seconds
from masrl_kb.contrib.sources.rows import COLUMNS, candidate, write_csv
from masrl_kb.kb.synthetic import write_synthetic_root
from tests.loopback import JsonStub

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "sources"
WINDOW_ARGS = ("--since", "2026-05-04", "--until", "2026-11-30")


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def ok(name: str):
    return 200, fixture(name), []


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = write_synthetic_root(tmp_path / "kb", papers=2, exclusions=1)
    (root / "exclusions" / "E00009.yaml").write_text(
        "id: E00009\ntitle: Synthetic excluded preprint\nidentifier: arXiv:2409.00001\n"
        "url: https://arxiv.org/abs/2409.00001\n"
    )
    return root


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setenv("MASRL_KB_SOURCES_DELAY", "0")
    monkeypatch.setenv("MASRL_KB_SOURCES_DEADLINE", "10")
    for name in (
        "MASRL_KB_OPENALEX_API_KEY",
        "MASRL_KB_OPENALEX_MAILTO",
        "SEMANTIC_SCHOLAR_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def serve(monkeypatch: pytest.MonkeyPatch, env: str, route) -> JsonStub:
    stub = JsonStub(route)
    monkeypatch.setenv(env, stub.url)
    return stub


def run(root: Path, *args: str, capsys) -> tuple[int, str, str]:
    code = main(["--root", str(root), "screen", "fetch", *args])
    out, err = capsys.readouterr()
    return code, out, err


def rows_of(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames or ()) == COLUMNS
        return list(reader)


def row(**values: str) -> dict:
    return {name: values.get(name, "") for name in COLUMNS}


# ---------------------------------------------------------------- OpenReview


def openreview_route(request, n):
    offset = int(request.query.get("offset", "0"))
    return ok("openreview_notes_1.json" if offset == 0 else "openreview_notes_2.json")


def test_openreview_maps_matching_notes_to_rows_across_pages(root, tmp_path, fast, capsys):
    stub = serve(fast, "MASRL_KB_OPENREVIEW_URL", openreview_route)
    out_file = tmp_path / "or.csv"
    try:
        code, out, err = run(
            root, "openreview", "--venue", "Example.cc/2026/Conference",
            "--keyword", "multi-agent", "--keyword", "credit  assignment",
            "--page-size", "2", "-o", str(out_file), capsys=capsys,
        )  # fmt: skip
    finally:
        stub.close()
    assert code == 0, err
    assert [(r.path, r.query["offset"], r.query["limit"]) for r in stub.requests] == [
        ("/notes", "0", "2"),
        ("/notes", "2", "2"),
    ]
    assert all(r.query["content.venueid"] == "Example.cc/2026/Conference" for r in stub.requests)
    assert rows_of(out_file) == [
        row(
            id="openreview:Fx1aB2cD3e",
            title="Learned Delegation for Orchestrator Agents (fixture)",
            authors="Example, Ada; van der Sample, Bo",
            date="2026-05-28",
            url="https://openreview.net/forum?id=Fx1aB2cD3e",
            abstract="An orchestrator trained with reinforcement learning decides which worker "
            "to call in a Multi-Agent system.",
            openreview_id="Fx1aB2cD3e",
        ),
        row(
            id="openreview:Hz3cD4eF5g",
            title="Message-Level Credit Assignment in LLM Teams (fixture)",
            authors="Sample, Dee",
            date="2026-09-15",
            url="https://openreview.net/forum?id=Hz3cD4eF5g",
            abstract="We estimate the credit of each message with a learned critic.",
            openreview_id="Hz3cD4eF5g",
        ),
    ]
    assert f"wrote 2 rows to {out_file} (3 records read)" in out
    assert "query: OpenReview API v2 content.venueid=Example.cc/2026/Conference" in out
    assert (
        "import with: masrl-kb screen import" in out
        and "--source openreview --since YYYY-MM-DD --until YYYY-MM-DD" in out
    )


def test_openreview_window_and_invitation(root, tmp_path, fast, capsys):
    stub = serve(fast, "MASRL_KB_OPENREVIEW_URL", openreview_route)
    out_file = tmp_path / "or.csv"
    try:
        code, out, _ = run(
            root, "openreview", "--venue", "Example.cc/2026/Conference/-/Submission",
            "--keyword", "credit", "--since", "2026-06-01", "--until", "2026-12-31",
            "--page-size", "2", "-o", str(out_file), capsys=capsys,
        )  # fmt: skip
    finally:
        stub.close()
    assert code == 0
    assert stub.requests[0].query["invitation"] == "Example.cc/2026/Conference/-/Submission"
    assert [r["id"] for r in rows_of(out_file)] == ["openreview:Hz3cD4eF5g"]
    assert "--since 2026-06-01 --until 2026-12-31" in out


# ---------------------------------------------------------------- OpenAlex


def openalex_route(request, n):
    if request.path.startswith("/works/doi:"):
        if request.path == "/works/doi:10.48550/arxiv.2501.10000":
            return ok("openalex_work_doi.json")
        return 404, b'{"error": "Not found", "message": "no such work"}', []
    flt = request.query.get("filter", "")
    if flt.startswith("title.search:"):
        return ok("openalex_title_search.json")
    if flt.startswith("cites:"):
        return ok("openalex_cites_1.json")
    return ok(
        "openalex_search_1.json" if request.query["cursor"] == "*" else "openalex_search_2.json"
    )


SEARCH_ROWS = [
    row(
        title='\'=HYPERLINK("x") Debate Without Training (fixture)',
        date="2026-05-20",
        url="https://openalex.org/W4100000003",
        abstract="Agents argue.",
    ),
    row(
        id="2606.01234",
        title="Turn-Level Credit for Agent Teams (fixture)",
        authors="Example, Eve; de la Sample, Fay",
        date="2026-06-02",
        url="https://arxiv.org/abs/2606.01234",
        abstract="We train an orchestrator with RL and RL",
        doi="10.48550/arxiv.2606.01234",
        arxiv_id="2606.01234",
    ),
    row(
        id="doi:10.1234/fixture.5678",
        title="Stopping Rules Learned by Multi-Agent Systems (fixture)",
        authors="Placeholder, Gus",
        date="2026-07-15",
        url="https://doi.org/10.1234/fixture.5678",
        doi="10.1234/fixture.5678",
    ),
]


def test_openalex_search_pages_by_cursor(root, tmp_path, fast, capsys):
    fast.setenv("MASRL_KB_OPENALEX_MAILTO", "kb@example.org")
    fast.setenv("MASRL_KB_OPENALEX_API_KEY", "secret-key-123")
    stub = serve(fast, "MASRL_KB_OPENALEX_URL", openalex_route)
    out_file = tmp_path / "oa.csv"
    try:
        code, out, err = run(
            root, "openalex", "--query", "multi-agent reinforcement learning",
            "--since", "2026-05-04", "--until", "2026-11-30", "-o", str(out_file), capsys=capsys,
        )  # fmt: skip
    finally:
        stub.close()
    assert code == 0, err
    assert [r.query["cursor"] for r in stub.requests] == [
        "*",
        "IlsxNzgwMDAwMDAwMDAwLCAnVzQxMDAwMDAwMDEnXSI=",
    ]
    first = stub.requests[0].query
    assert first["search"] == "multi-agent reinforcement learning"
    assert first["filter"] == "from_publication_date:2026-05-04,to_publication_date:2026-11-30"
    assert first["mailto"] == "kb@example.org" and first["api_key"] == "secret-key-123"
    assert int(first["per_page"]) <= 100
    assert rows_of(out_file) == SEARCH_ROWS
    assert "secret-key-123" not in out + err
    assert "wrote 3 rows" in out and "--source openalex" in out


def test_openalex_cites_pool_resolves_each_pooled_paper(root, tmp_path, fast, capsys):
    stub = serve(fast, "MASRL_KB_OPENALEX_URL", openalex_route)
    out_file = tmp_path / "cites.csv"
    try:
        code, out, err = run(
            root, "openalex", "--cites-pool", "--since", "2026-05-04", "--until", "2026-11-30",
            "-o", str(out_file), capsys=capsys,
        )  # fmt: skip
    finally:
        stub.close()
    assert code == 0, err
    asked = [(r.path, r.query.get("filter", "")) for r in stub.requests]
    assert asked[0] == ("/works/doi:10.48550/arxiv.2501.10000", "")
    assert asked[1] == ("/works/doi:10.48550/arxiv.2502.10001", "")  # answered 404
    assert asked[2][1].startswith("title.search:Synthetic Paper Number 1 on Multi-Agent Credit")
    assert asked[3][1] == (
        "cites:W4000000100|W4000000101,"
        "from_publication_date:2026-05-04,to_publication_date:2026-11-30"
    )
    assert [r["id"] for r in rows_of(out_file)] == ["2608.05555"]
    assert "citing 2 pooled papers" in out


# ---------------------------------------------------------------- Semantic Scholar


def test_semantic_scholar_seeds_with_pool_and_exclusions(root, tmp_path, fast, capsys):
    fast.setenv("SEMANTIC_SCHOLAR_API_KEY", "s2key")
    stub = serve(fast, "MASRL_KB_S2_URL", lambda r, n: ok("s2_recommendations.json"))
    out_file = tmp_path / "s2.csv"
    try:
        code, out, err = run(
            root, "semantic-scholar", "--since", "2026-05-04", "--until", "2026-11-30",
            "-o", str(out_file), capsys=capsys,
        )  # fmt: skip
    finally:
        stub.close()
    assert code == 0, err
    (request,) = stub.requests
    assert (request.method, request.path) == ("POST", "/papers")
    assert request.headers["x-api-key"] == "s2key"
    assert request.query["fields"] == "title,authors,externalIds,publicationDate,url,abstract"
    assert json.loads(request.body) == {
        "positivePaperIds": ["ArXiv:2501.10000", "ArXiv:2502.10001"],
        "negativePaperIds": ["ArXiv:2409.00001"],
    }
    assert rows_of(out_file) == [
        row(
            id="2606.04321",
            title="Recommended Orchestrator Training (fixture)",
            authors="Example, Ivy; Sample, Jo",
            date="2026-06-10",
            url="https://arxiv.org/abs/2606.04321",
            abstract="A planner agent is trained with RL to route subtasks.",
            arxiv_id="2606.04321",
        ),
        row(
            id="doi:10.5555/fixture.2026.7",
            title="Credit Estimators for Agent Messages (fixture)",
            authors="Placeholder, Kit",
            date="2026-08-01",
            url="https://www.semanticscholar.org/paper/b1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
            doi="10.5555/fixture.2026.7",
        ),
    ]
    assert "wrote 2 rows" in out and "1 recommendations had no publication date" in out
    assert "--source semantic_scholar --since 2026-05-04 --until 2026-11-30" in out


def test_semantic_scholar_without_a_key_sends_none(root, tmp_path, fast, capsys):
    stub = serve(fast, "MASRL_KB_S2_URL", lambda r, n: ok("s2_recommendations.json"))
    try:
        code, _, _ = run(
            root, "semantic-scholar", "--since", "2026-05-04", "--until", "2026-11-30",
            "-o", str(tmp_path / "s2.csv"), capsys=capsys,
        )  # fmt: skip
    finally:
        stub.close()
    assert code == 0 and "x-api-key" not in stub.requests[0].headers


# ---------------------------------------------------------------- 429 and Retry-After


def busy_then(route, retry_after: str):
    def answer(request, n):
        if n == 0:
            return 429, b'{"error": "Too Many Requests"}', [("Retry-After", retry_after)]
        return route(request, n - 1)

    return answer


CASES_429 = [
    ("openreview", "MASRL_KB_OPENREVIEW_URL", openreview_route,
     ["--venue", "V", "--keyword", "credit", "--page-size", "2"]),
    ("openalex", "MASRL_KB_OPENALEX_URL", openalex_route,
     ["--query", "agents", "--since", "2026-05-04", "--until", "2026-11-30"]),
    ("semantic-scholar", "MASRL_KB_S2_URL", lambda r, n: ok("s2_recommendations.json"),
     ["--since", "2026-05-04", "--until", "2026-11-30"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("source", "env", "route", "args"), CASES_429, ids=[c[0] for c in CASES_429]
)
def test_a_429_is_retried_after_its_retry_after(
    source, env, route, args, root, tmp_path, fast, capsys
):
    stub = serve(fast, env, busy_then(route, "1"))
    out_file = tmp_path / "out.csv"
    start = time.monotonic()
    try:
        code, out, err = run(root, source, *args, "-o", str(out_file), capsys=capsys)
    finally:
        stub.close()
    assert code == 0, err
    assert time.monotonic() - start >= 1.0  # the wait asked for, though the delay is 0
    assert stub.requests[0].path == stub.requests[1].path
    assert len(rows_of(out_file)) >= 1


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds("99999999") == 86400.0


# ---------------------------------------------------------------- the file


def test_the_csv_is_never_written_through_a_link(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.csv"
    target.write_text("keep\n")
    link = tmp_path / "out.csv"
    link.symlink_to(target)
    rows = [candidate("A title", ["Doe, Jane"], None)]
    with pytest.raises(SourceError, match="symbolic link"):
        write_csv(link, rows)
    assert target.read_text() == "keep\n"
    with pytest.raises(SourceError, match="not a regular file"):
        write_csv(tmp_path, rows)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere.csv", "out.csv"]


def test_cleaning_drops_controls_and_quotes_formulas() -> None:
    row_ = candidate("\x1b+Red\u202e title\n", ["  A\x07 B  "], None, url="javascript:x")
    assert row_ is not None
    assert list(row_.cells().values())[1:3] == ["+Red title", "B, A"]
    assert '\'+Red title,"B, A"' in csv_text(COLUMNS, [row_.cells()])
    assert row_.url == ""
    assert candidate("\x00\x01", [], None) is None


def test_openreview_keywords_match_whole_words_ignoring_case() -> None:
    from masrl_kb.contrib.sources.openreview import keyword_pattern

    pattern = keyword_pattern(["RL", "credit  assignment", "multi-agent"])
    assert pattern.search("Trained with rl.")
    assert not pattern.search("A world model")  # "rl" inside a word
    assert pattern.search("Credit\nAssignment across turns")
    assert pattern.search("MULTI-AGENT systems") and not pattern.search("multi agent systems")


@pytest.mark.parametrize(
    ("env", "value", "fragment"),
    [
        ("MASRL_KB_SOURCES_DEADLINE", "soon", "MASRL_KB_SOURCES_DEADLINE='soon'"),
        ("MASRL_KB_OPENALEX_URL", "file:///etc/passwd", "is not an http(s) URL"),
        ("MASRL_KB_OPENALEX_MAILTO", "not an address", "is not an e-mail address"),
        ("MASRL_KB_OPENALEX_API_KEY", "key\x1b[2J", "holds characters an API key does not"),
    ],
)
def test_bad_settings_are_one_line_usage_errors(root, tmp_path, fast, capsys, env, value, fragment):
    fast.setenv(env, value)
    out_file = tmp_path / "oa.csv"
    code, out, err = run(
        root, "openalex", "--query", "agents", "--since", "2026-05-04", "--until", "2026-11-30",
        "-o", str(out_file), capsys=capsys,
    )  # fmt: skip
    assert code == 2
    assert len(err.splitlines()) == 1 and fragment in err and "\x1b" not in err
    assert not out_file.exists()


def test_a_refused_connection_is_one_line_and_exit_2(root, tmp_path, fast, capsys):
    stub = JsonStub(lambda r, n: None)
    url = stub.url
    stub.close()  # nothing listens there any more
    fast.setenv("MASRL_KB_S2_URL", url)
    code, _, err = run(
        root, "semantic-scholar", "--since", "2026-05-04", "--until", "2026-11-30",
        "-o", str(tmp_path / "s2.csv"), capsys=capsys,
    )  # fmt: skip
    assert (
        code == 2 and err.startswith("masrl-kb: semantic-scholar: ") and len(err.splitlines()) == 1
    )
    assert not (tmp_path / "s2.csv").exists()


def test_the_weekly_workflow_calls_fetch_with_real_options() -> None:
    import re
    import shlex

    import yaml

    from masrl_kb.cli.main import build_parser

    path = Path(__file__).resolve().parents[1] / ".github" / "workflows" / "screen.yml"
    steps = yaml.safe_load(path.read_text())["jobs"]["round"]["steps"]
    runs = [s["run"].replace("\\\n", " ") for s in steps if "run" in s]
    calls = [
        line.strip().split(" > ")[0]
        for run in runs
        for line in run.splitlines()
        if line.strip().startswith("masrl-kb screen fetch")
    ]
    assert {shlex.split(c)[3] for c in calls} == {"openreview", "openalex", "semantic-scholar"}
    values = {"SINCE": "2026-11-23", "UNTIL": "2026-11-29", "venue": "V", "QUERY": "q", "n": "1"}
    for call in calls:
        filled = re.sub(r"\$\{?(\w+)\}?", lambda m: values[m.group(1)], call)
        args = build_parser().parse_args(shlex.split(filled)[1:])
        assert args.output.startswith("fetched/") and args.since and args.until


def test_requests_name_the_tool_and_ask_for_json(root, tmp_path, fast, capsys):
    stub = serve(fast, "MASRL_KB_S2_URL", lambda r, n: ok("s2_recommendations.json"))
    try:
        run(root, "semantic-scholar", *WINDOW_ARGS, "-o", str(tmp_path / "s.csv"), capsys=capsys)
    finally:
        stub.close()
    headers = stub.requests[0].headers
    assert headers["user-agent"].startswith("masrl-kb (living-review screening")
    assert headers["accept"] == "application/json"
    assert headers["content-type"] == "application/json"


def test_openalex_names_pooled_papers_it_cannot_find(tmp_path, fast, capsys):
    root = write_synthetic_root(tmp_path / "kb3", papers=3, exclusions=0)
    stub = serve(fast, "MASRL_KB_OPENALEX_URL", openalex_route)
    try:
        code, out, err = run(
            root, "openalex", "--cites-pool", *WINDOW_ARGS, "-o", str(tmp_path / "c.csv"),
            capsys=capsys,
        )  # fmt: skip
    finally:
        stub.close()
    assert code == 0, err
    assert "note: 1 pooled papers not found in OpenAlex: synthetic-00002" in out
    assert "cites:W4000000100|W4000000101," in stub.requests[-1].query["filter"]
