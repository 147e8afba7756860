"""Issue 27, item 2: every command checks the clone it stands in.

The data root comes from ``--root``, else ``MASRL_KB_ROOT``, else the current folder and
its parents (a folder holding ``taxonomy.yaml`` and ``papers/``); the clone the package
was installed from is never taken silently, and ``validate``'s last line names the root.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import masrl_kb
from masrl_kb.kb import paths
from masrl_kb.kb.paths import ENV_ROOT, RootNotFoundError, find_root
from masrl_kb.kb.synthetic import write_synthetic_root
from tests.conftest import REPO, run_cli

BROKEN = "year: not-a-year\n"


def _break(root: Path) -> str:
    """Break the first paper record of ``root``; its path relative to the root."""
    record = sorted((root / "papers").glob("*.yaml"))[0]
    text = record.read_text(encoding="utf-8")
    record.write_text(
        "\n".join(BROKEN.strip() if ln.startswith("year:") else ln for ln in text.splitlines())
        + "\n",
        encoding="utf-8",
    )
    return f"papers/{record.name}"


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Path, Path, str]:
    """Two copies of one data root; the second has a broken record (its path returned)."""
    first = write_synthetic_root(tmp_path / "clone-a", papers=3, exclusions=1)
    second = tmp_path / "clone-b"
    shutil.copytree(first, second)
    return first, second, _break(second)


def test_a_command_checks_the_clone_it_runs_in_not_the_installed_one(
    clones: tuple[Path, Path, str], tmp_path: Path
) -> None:
    """An environment whose package comes from clone A (its own copy of ``masrl_kb/`` first
    on the path, as an editable install of A gives), run inside clone B: B is checked."""
    first, second, broken = clones
    shutil.copytree(REPO / "masrl_kb", first / "masrl_kb", ignore=shutil.ignore_patterns("*.pyc"))
    env = {k: v for k, v in os.environ.items() if k != ENV_ROOT}
    env["PYTHONPATH"] = str(first)
    probe = (
        "import sys, masrl_kb.kb.paths as p; print('installed from', p.CLONE, file=sys.stderr);"
        "from masrl_kb.cli.main import main; sys.exit(main(['validate']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=second / "papers",
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert f"installed from {first}" in done.stderr  # the environment is clone A's
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{broken}:" in done.stdout
    assert done.stderr.rstrip().endswith(f"1 problem(s) in 1 file(s) in {second}")
    assert "ok:" not in done.stdout


def test_in_process_the_install_clone_is_never_the_default(
    clones: tuple[Path, Path, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    first, second, broken = clones
    monkeypatch.setattr(paths, "CLONE", first)
    monkeypatch.delenv(ENV_ROOT, raising=False)
    monkeypatch.chdir(second / "exclusions")
    assert find_root() == second
    assert run_cli("validate") == 2
    out, err = capsys.readouterr()
    assert f"{broken}:" in out and "year: expected a whole number" in out
    assert f"in {second}" in err
    with pytest.raises(masrl_kb.InvalidRecordsError):
        masrl_kb.load_papers()
    monkeypatch.chdir(first)
    assert run_cli("validate") == 0
    assert capsys.readouterr().out.strip() == f"ok: 3 papers and 1 exclusions are valid in {first}"


def test_root_precedence_option_then_environment_then_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    option = write_synthetic_root(tmp_path / "option", papers=1)
    environment = write_synthetic_root(tmp_path / "environment", papers=2)
    here = write_synthetic_root(tmp_path / "here", papers=3)
    monkeypatch.chdir(here)
    monkeypatch.delenv(ENV_ROOT, raising=False)

    def checked(*argv: str) -> str:
        assert run_cli(*argv, "validate") == 0
        return capsys.readouterr().out.strip()

    assert checked() == f"ok: 3 papers and 0 exclusions are valid in {here}"
    assert len(masrl_kb.load_papers()) == 3
    monkeypatch.setenv(ENV_ROOT, str(environment))
    assert checked() == f"ok: 2 papers and 0 exclusions are valid in {environment}"
    assert len(masrl_kb.load_papers()) == 2
    assert checked("--root", str(option)) == f"ok: 1 papers and 0 exclusions are valid in {option}"
    assert len(masrl_kb.load_papers(option)) == 1
    assert len(masrl_kb.load_papers(root=option)) == 1


def test_no_root_is_one_line_saying_how_to_name_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A taxonomy alone is not a data root: the marker files are taxonomy.yaml and papers/.
    (tmp_path / "taxonomy.yaml").write_text((REPO / "taxonomy.yaml").read_text())
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(ENV_ROOT, raising=False)
    for command in ("validate", "stats", "claims"):
        assert run_cli(command) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1
        assert "--root DIR" in err and ENV_ROOT in err and "ok:" not in err
    with pytest.raises(RootNotFoundError, match="--root DIR"):
        masrl_kb.load_papers()
    with pytest.raises(FileNotFoundError):  # the error stays a FileNotFoundError
        find_root()


@pytest.mark.parametrize("where", ["option", "environment"])
@pytest.mark.parametrize("kind", ["missing", "no-taxonomy"])
def test_a_named_root_that_is_not_one_is_refused(
    where: str,
    kind: str,
    tmp_path: Path,
    mini_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A bad ``--root`` or ``MASRL_KB_ROOT`` is refused, never replaced by the current clone."""
    named = tmp_path / ("nowhere" if kind == "missing" else "empty")
    if kind == "no-taxonomy":
        named.mkdir()
    monkeypatch.chdir(mini_root)
    argv = ["validate"]
    if where == "option":
        argv = ["--root", str(named), *argv]
    else:
        monkeypatch.setenv(ENV_ROOT, str(named))
    assert run_cli(*argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    label = f"--root {named}" if where == "option" else f"{ENV_ROOT}={named}"
    reason = "no such folder" if kind == "missing" else "no taxonomy.yaml in this folder"
    assert err == f"masrl-kb: {label}: {reason}\n"


def test_the_search_starts_in_the_current_folder_and_goes_up(
    mini_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_ROOT, raising=False)
    deep = mini_root / "papers" / "a" / "b"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert find_root() == mini_root
    assert paths.search_root(mini_root.parent) is None
