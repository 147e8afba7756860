"""The command line: exit codes and output computed by the API."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest

import masrl_kb
from masrl_kb.cli import main
from tests.conftest import GOOD_PAPER, REPO


def test_validate_ok(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate"]) == 0
    papers, exclusions = len(masrl_kb.load_papers()), len(masrl_kb.load_exclusions())
    assert capsys.readouterr().out.strip() == (
        f"ok: {papers} papers and {exclusions} exclusions are valid in {REPO}"
    )


def test_validate_reports_every_problem_and_exits_2(
    mini_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (mini_root / "papers" / "bad.yaml").write_text(
        GOOD_PAPER.replace("topology: centralized", "topology: ring").replace(
            "year: 2025", "year: 1"
        )
    )
    assert main(["--root", str(mini_root), "validate"]) == 2
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    next_year = dt.date.today().year + 1
    assert lines[0] == f"papers/bad.yaml:5: year: year 1 is outside 1950..{next_year}"
    assert lines[1].startswith("papers/bad.yaml:14: topology: unknown value 'ring'; allowed: ")
    assert "2 problem(s) in 1 file(s)" in captured.err


def test_github_annotations(
    mini_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    (mini_root / "papers" / "bad.yaml").write_text(GOOD_PAPER.replace("year: 2025", 'year: "x"'))
    assert main(["--root", str(mini_root), "validate"]) == 2
    out = capsys.readouterr().out
    assert "::error file=papers/bad.yaml,line=5::year: expected a whole number, got 'x'" in out


def test_stats_prints_api_values(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats"]) == 0
    out = capsys.readouterr().out
    papers = masrl_kb.load_papers()
    assert f"pooled papers: {len(papers)}" in out
    table = masrl_kb.crosstab("reward_type", "credit_unit", papers=papers)
    assert table.to_string() in out
    assert masrl_kb.crosstab("decision", "topology", papers=papers).to_string() in out


def test_commands_on_invalid_records_fail_cleanly(
    mini_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (mini_root / "papers" / "bad.yaml").write_text("key: [1,\n  2\ntitle: x\n")
    assert main(["--root", str(mini_root), "stats"]) == 2  # a user error (issue 8)
    assert "papers/bad.yaml:3: yaml: malformed YAML" in capsys.readouterr().err


def test_console_script_is_installed() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "masrl_kb.cli", "validate"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok: ")


def test_one_parser_serves_every_command_of_a_process(monkeypatch, capsys) -> None:
    """main() builds the parser once (a new one only when the help texts' taxonomy ids
    change), and a parse, a refused one too, leaves it as it was."""
    import importlib

    from masrl_kb.cli.contrib import help_key

    cli_main = importlib.import_module("masrl_kb.cli.main")
    cli_main._parser_for.cache_clear()
    built: list[int] = []
    real = cli_main.build_parser
    monkeypatch.setattr(cli_main, "build_parser", lambda: built.append(1) or real())
    argv = ["export", "csv", "--where", 'credit_unit == "agent"']
    for _ in range(2):
        assert cli_main.main(argv) == 0
        with pytest.raises(SystemExit):
            cli_main.main(["stats", "--as-of", "not-a-day"])
    assert built == [1]
    fresh, again = (
        vars(real().parse_args(argv)),
        vars(cli_main._parser_for(help_key()).parse_args(argv)),
    )
    assert again.pop("func").__qualname__ == fresh.pop("func").__qualname__
    assert again == fresh
    capsys.readouterr()
