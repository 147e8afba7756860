"""One command-line error path: user errors are one line and exit 2, bugs exit 70."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from masrl_kb.cli import main
from masrl_kb.cli.common import EXIT_BUG, EXIT_INTERRUPTED, EXIT_USER_ERROR
from tests.conftest import GOOD_PAPER, REPO

CLI_MAIN = sys.modules["masrl_kb.cli.main"]  # the package re-exports main(), hiding the module


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    assert err.startswith("masrl-kb")
    return err.strip()


@pytest.mark.parametrize(
    "argv",
    [
        ["nosuch"],
        ["export", "csv", "--bogus"],
        ["export"],
        ["trace", "synth", "--agents", "two", "--steps", "5"],
        ["claims", "--check", "extra"],
    ],
)
def test_bad_arguments_are_one_line_exit_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == EXIT_USER_ERROR
    line = _one_error_line(capsys)
    assert "error:" in line and "usage:" in line


def test_missing_root_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere"
    assert main(["--root", str(missing), "validate"]) == EXIT_USER_ERROR
    assert _one_error_line(capsys) == f"masrl-kb: --root {missing}: no such folder"


def test_root_without_taxonomy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(tmp_path), "stats"]) == EXIT_USER_ERROR
    assert _one_error_line(capsys).endswith(": no taxonomy.yaml in this folder")


@pytest.mark.parametrize("text", ["", "axes: [\n", "version: 1\naxes: 5\n", "version: 1\n"])
def test_broken_taxonomy(mini_root: Path, text: str, capsys: pytest.CaptureFixture[str]) -> None:
    (mini_root / "taxonomy.yaml").write_text(text, encoding="utf-8")
    for command in ("validate", "stats", "claims"):
        assert main(["--root", str(mini_root), command]) == EXIT_USER_ERROR
        assert "taxonomy.yaml" in _one_error_line(capsys)


@pytest.mark.parametrize("command", ["stats", "claims", "build"])
def test_invalid_records_stop_commands_in_one_line(
    mini_root: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = GOOD_PAPER.replace("topology: centralized", "topology: ring")
    (mini_root / "papers" / "bad.yaml").write_text(bad, encoding="utf-8")
    claims = "claims:\n  - {id: n, statement: s, table: papers, op: '>=', expected: 0}\n"
    (mini_root / "claims.yaml").write_text(claims, encoding="utf-8")
    code = main(["--root", str(mini_root), command])
    assert code == EXIT_USER_ERROR
    line = _one_error_line(capsys)
    assert "papers/bad.yaml:14: topology: unknown value 'ring'" in line
    assert not (mini_root / "site").exists()


def test_export_of_invalid_records(mini_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (mini_root / "papers" / "bad.yaml").write_text("key: [1,\n", encoding="utf-8")
    assert main(["--root", str(mini_root), "export", "csv"]) == EXIT_USER_ERROR
    assert "papers/bad.yaml" in _one_error_line(capsys)


@pytest.mark.parametrize("target", ["missing-folder/out.csv", "."])
def test_unwritable_output(tmp_path: Path, target: str, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / target
    assert main(["--root", str(REPO), "export", "csv", "-o", str(output)]) == EXIT_USER_ERROR
    assert str(output) in _one_error_line(capsys)


def test_malformed_claims_file(mini_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (mini_root / "claims.yaml").write_text("claims: 5\n", encoding="utf-8")
    assert main(["--root", str(mini_root), "claims"]) == EXIT_USER_ERROR
    assert _one_error_line(capsys).startswith("masrl-kb: claims.yaml:1: claims: ")


def test_control_characters_never_reach_the_terminal(
    mini_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = 'credit_unit == "\x1b[2J\x07' + "x" * 5000 + '"'
    assert main(["--root", str(mini_root), "export", "csv", "--where", where]) == EXIT_USER_ERROR
    line = _one_error_line(capsys)
    assert "\x1b" not in line and "\x07" not in line
    assert len(line) < 1000


def _explode(args) -> int:
    raise KeyError("boom")


@pytest.fixture
def fresh_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """main() builds its parser once a process; a test replacing a command's function needs
    one built after the replacement."""
    monkeypatch.setattr(CLI_MAIN, "_parser_for", lambda key: CLI_MAIN.build_parser())


def test_unexpected_error_is_one_line_exit_70(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fresh_parser
) -> None:
    monkeypatch.setattr(CLI_MAIN, "cmd_validate", _explode)
    assert main(["validate"]) == EXIT_BUG
    line = _one_error_line(capsys)
    assert line.startswith("masrl-kb: unexpected error (a bug): KeyError: ")
    assert "--debug" in line


def test_debug_shows_the_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fresh_parser
) -> None:
    monkeypatch.setattr(CLI_MAIN, "cmd_validate", _explode)
    assert main(["--debug", "validate"]) == EXIT_BUG
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "_explode" in err


def _interrupt(args) -> int:
    raise KeyboardInterrupt


def test_interrupt_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fresh_parser
) -> None:
    monkeypatch.setattr(CLI_MAIN, "cmd_stats", _interrupt)
    assert main(["stats"]) == EXIT_INTERRUPTED
    assert _one_error_line(capsys) == "masrl-kb: interrupted"


def test_console_entry_point_exit_codes(tmp_path: Path) -> None:
    """The real process: exit status and a single stderr line, no traceback."""
    result = subprocess.run(
        [sys.executable, "-m", "masrl_kb.cli", "--root", str(tmp_path / "x"), "validate"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == EXIT_USER_ERROR
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "taxonomy",
    [
        "axes: [1, 2]\n",
        "axes:\n  exclusion_reason:\n    values: not-a-list\n",
        "axes:\n  exclusion_reason:\n    values: [{id: [nested]}, 7, {label: no id}]\n",
        "a: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\naxes: *c\n",
        "\x00not yaml",
    ],
    ids=["axes-list", "values-text", "odd-values", "aliases", "binary"],
)
def test_option_help_survives_a_hostile_taxonomy(
    taxonomy: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """Help texts read the taxonomy's ids without the model; a file that is not a
    taxonomy gives the generic wording, never a crash or a stray id."""
    from masrl_kb.cli import contrib

    (tmp_path / "taxonomy.yaml").write_text(taxonomy, encoding="utf-8")
    monkeypatch.setenv("MASRL_KB_ROOT", str(tmp_path))
    contrib._default_axis_ids.cache_clear()
    try:
        with pytest.raises(SystemExit) as done:
            main(["exclude", "--help"])
    finally:
        contrib._default_axis_ids.cache_clear()
    assert done.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "reason code (an id of exclusion_reason in taxonomy.yaml)" in out
