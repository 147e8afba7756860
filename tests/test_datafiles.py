"""``validate`` reads every data file; ``build`` shows a data error as one line.

Many more broken files are in the hostile corpus (tests/hostile/datafiles.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import masrl_kb
from masrl_kb.query.claimsfile import ClaimsFileError, load_claims
from masrl_kb.site import build as site_build
from tests.conftest import run_cli
from tests.hostile.datafiles import CLAIMS, ROUND_FILE, valid_files


@pytest.fixture
def root(mini_root: Path) -> Path:
    valid_files(mini_root)
    return mini_root


def _never(*args, **kwargs):
    raise AssertionError("MkDocs was started on broken data")


@pytest.mark.parametrize(
    ("rel", "text", "expected"),
    [
        ("claims.yaml", CLAIMS.replace("id: strict", "id: pool"), "claims.yaml:7: id: 'pool'"),
        ("claims.yaml", "claims: [\n", "claims.yaml:2: yaml: malformed YAML"),
        (
            "protocol.yaml",
            "version: 1\n",
            "protocol.yaml:1: deduplication: missing required field (How duplicates are found.)",
        ),
        (ROUND_FILE, "round: [\n", f"{ROUND_FILE}:2: yaml: malformed YAML"),
    ],
)
def test_build_shows_a_broken_data_file_in_one_line(
    root: Path,
    rel: str,
    text: str,
    expected: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (root / rel).write_text(text, encoding="utf-8")
    monkeypatch.setattr(site_build, "run_mkdocs", _never)
    capsys.readouterr()
    assert run_cli("--root", str(root), "build") == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(f"masrl-kb: {expected}")
    assert "Traceback" not in captured.err and not (root / "site").exists()


def test_validate_lists_the_problems_of_every_file_at_once(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claims = root / "claims.yaml"
    claims.write_text(CLAIMS.replace("expected: 1\n", "expected: 100000000000\n"), "utf-8")
    round_file = root / ROUND_FILE
    text = round_file.read_text("utf-8").replace("retrieved: 10", "retrieved: 99999999")
    round_file.write_text(text, encoding="utf-8")
    bad = sorted((root / "papers").glob("*.yaml"))[0]
    bad.write_text(bad.read_text("utf-8").replace("year: ", "year: 1", 1), "utf-8")
    capsys.readouterr()
    assert run_cli("--root", str(root), "validate") == 2
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "claims.yaml:6: expected: 100000000000 is outside 0..1000000"
    assert out[1].startswith(f"papers/{bad.name}:") and " year: " in out[1]
    assert out[2] == f"{ROUND_FILE}:9: counts.retrieved: 99999999 is outside 0..1000000"
    report = masrl_kb.validate(root)  # the API says the same as the command
    assert [str(p) for p in report.problems] == out


def test_duplicate_claim_ids_are_refused(root: Path) -> None:
    (root / "claims.yaml").write_text(CLAIMS.replace("id: strict", "id: pool"), "utf-8")
    with pytest.raises(ClaimsFileError, match=r"claims.yaml:7: id: 'pool' given twice \(line 2\)"):
        load_claims(root)


def test_the_real_data_files_are_valid() -> None:
    report = masrl_kb.validate()
    assert report.ok, [str(p) for p in report.problems]


def test_a_round_problem_inside_a_field_names_the_entry(root: Path) -> None:
    path = root / ROUND_FILE
    decided = "decided:\n  '2611.00001': {decision: maybe, record: papers/a.yaml}\nrun_on:"
    path.write_text(path.read_text("utf-8").replace("run_on:", decided), encoding="utf-8")
    found = [str(p) for p in masrl_kb.validate(root).problems if p.path == ROUND_FILE]
    assert found == [
        f"{ROUND_FILE}:6: decided: 2611.00001.decision: Input should be 'include' or 'exclude'"
    ]
