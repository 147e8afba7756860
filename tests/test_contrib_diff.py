"""``masrl-kb diff <git-ref>`` on throwaway git repositories."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from masrl_kb.contrib.diff import diff_against
from masrl_kb.kb.synthetic import dump_record, write_synthetic_root
from masrl_kb.kb.taxonomy import load_taxonomy
from tests.conftest import run_cli as run

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Test", "-c", "user.email=test@example.org", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository holding a committed synthetic knowledge base."""
    root = write_synthetic_root(tmp_path / "kb", papers=20, exclusions=2, seed=3)
    shutil.copy(REPO / "claims.yaml", root / "claims.yaml")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def _retag(root: Path) -> tuple[str, str, str]:
    """Move one paper to another reward family and make it learn O5."""
    tax = load_taxonomy(root)
    path = root / "papers" / "synthetic-00003.yaml"
    data = _load(path)
    old = data["reward_type"]
    new = next(
        v for v in tax["reward_type"].ids if tax.family_of(v) not in (tax.family_of(old), "NA")
    )
    data["reward_type"] = new
    data["decisions"] = [d for d in data["decisions"] if d["id"] != "O5"]
    evidence = {"source": "paper", "where": "Section 3", "url": "https://example.org/paper"}
    data["decisions"].append(
        {
            "id": "O5",
            "learned": True,
            "why": "A learned stop action.",
            "mechanism": "explicit",
            "evidence": evidence,
        }
    )
    path.write_text(dump_record(data))
    return data["key"], old, new


def test_diff_names_the_paper_the_field_and_the_cells(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key, old, new = _retag(repo)
    assert run("--root", str(repo), "diff", "HEAD") == 0
    out = capsys.readouterr().out
    assert out.startswith("## Knowledge-base changes against `HEAD`")
    assert "0 added, 0 removed, 1 retagged" in out
    assert f"- `{key}`: `reward_type` {old} → {new}" in out
    assert "`O5` absent → learned" in out or "`O5` present → learned" in out
    assert "### Cross-tab cells that change" in out
    tax = load_taxonomy(repo)
    unit = _load(repo / "papers" / f"{key}.yaml")["credit_unit"]
    old_family, new_family = tax.family_of(old), tax.family_of(new)
    cells = [
        line for line in out.splitlines() if line.startswith("| reward_family × credit_unit |")
    ]
    assert any(line.startswith(f"| reward_family × credit_unit | {old_family} | {unit} |")
               and line.endswith("| −1 |") for line in cells)  # fmt: skip
    assert any(line.startswith(f"| reward_family × credit_unit | {new_family} | {unit} |")
               and line.endswith("| +1 |") for line in cells)  # fmt: skip
    assert "### Claims that change" in out and "| `o5-never-learned` |" in out


def test_diff_of_an_unchanged_tree(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("--root", str(repo), "diff", "HEAD") == 0
    assert "No paper, exclusion, cross-tab cell or claim changes." in capsys.readouterr().out


def test_diff_added_and_removed_records(repo: Path) -> None:
    (repo / "papers" / "synthetic-00004.yaml").unlink()
    data = _load(repo / "papers" / "synthetic-00005.yaml")
    data.update(key="brand-new2026", title="A Brand New Paper", arxiv_id="2601.00001")
    data["url"] = "https://arxiv.org/abs/2601.00001"
    (repo / "papers" / "brand-new2026.yaml").write_text(dump_record(data))
    (repo / "exclusions" / "E00002.yaml").unlink()
    report = diff_against("HEAD", repo).markdown
    assert "1 added, 1 removed, 0 retagged" in report
    assert "### Papers added\n\n- `brand-new2026` — A Brand New Paper (" in report
    assert "### Papers removed\n\n- `synthetic-00004` — " in report
    assert "### Exclusions removed\n\n- `E00002` — " in report
    assert "| `exclusions-logged` | 2 (broken) | 1 (broken) |" in report
    assert "`pool-size`" not in report  # 20 papers before and after: not listed


def test_diff_says_when_the_ref_fails_validation(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = repo / "papers" / "synthetic-00002.yaml"
    good = path.read_text()
    path.write_text(good.replace("topology: ", "topology: ring\nx_topology: "))
    git(repo, "commit", "-q", "-am", "broken")
    path.write_text(good)
    assert run("--root", str(repo), "diff", "HEAD") == 0
    out = capsys.readouterr().out
    assert "**`HEAD` fails validation** (2 problem(s)); cross-tab and claim changes are not" in out
    assert "papers/synthetic-00002.yaml" in out


def test_diff_unknown_ref(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("--root", str(repo), "diff", "no-such-branch") == 2
    assert "unknown git ref 'no-such-branch'" in capsys.readouterr().err


def test_diff_outside_git(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    root = write_synthetic_root(tmp_path / "plain", papers=2)
    assert run("--root", str(root), "diff", "HEAD") == 2
    assert "is not inside a git repository" in capsys.readouterr().err
