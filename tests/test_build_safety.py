"""Builds never lose the last good site, and --site-dir never deletes what it did not create."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from masrl_kb.cli import main
from masrl_kb.kb.synthetic import write_synthetic_root
from masrl_kb.site import build as site_build
from masrl_kb.site.build import MARKER, SiteDirError, build_site

# A small MkDocs project of its own: its page-generating hook fails while a FAIL file
# exists, after adding a page, as a crash halfway through page generation would.
MKDOCS_YML = """\
site_name: build safety
docs_dir: docs
hooks:
  - gen.py
"""
GEN_PY = """\
from pathlib import Path

from mkdocs.structure.files import File


def on_files(files, config):
    text = Path("VERSION").read_text()
    files.append(File.generated(config, "generated.md", content="# generated " + text))
    if Path("FAIL").exists():
        raise RuntimeError("page generation failed on purpose")
    return files
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = write_synthetic_root(tmp_path / "kb", papers=2, exclusions=1)
    (root / "mkdocs.yml").write_text(MKDOCS_YML, encoding="utf-8")
    (root / "gen.py").write_text(GEN_PY, encoding="utf-8")
    (root / "docs").mkdir(exist_ok=True)
    (root / "docs" / "index.md").write_text("# home\n", encoding="utf-8")
    (root / "VERSION").write_text("one", encoding="utf-8")
    return root


def snapshot(folder: Path) -> dict[str, str]:
    """Relative path -> content hash of every file under ``folder``."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".building-" in p.name or ".old-" in p.name)


def test_failed_page_generation_keeps_the_old_site(root: Path) -> None:
    site = root.parent / "out" / "site"
    assert build_site(root, strict=False, site_dir=site) == 0
    before = snapshot(site)
    assert "generated/index.html" in before and MARKER in before
    (root / "VERSION").write_text("two", encoding="utf-8")
    (root / "FAIL").touch()
    assert build_site(root, strict=False, site_dir=site) != 0
    assert snapshot(site) == before
    assert leftovers(site.parent) == []


def test_successful_build_replaces_the_previous_one(root: Path) -> None:
    site = root.parent / "out"
    assert build_site(root, strict=False, site_dir=site) == 0
    (root / "VERSION").write_text("two", encoding="utf-8")
    assert build_site(root, strict=False, site_dir=site) == 0
    assert "generated two" in (site / "generated" / "index.html").read_text(encoding="utf-8")
    assert leftovers(site.parent) == []


def _interrupted(command: list[str], data_root: Path, cwd: Path, preview: bool = False) -> int:
    out = Path(command[command.index("-d") + 1])
    (out / "index.html").write_text("half a site", encoding="utf-8")
    raise KeyboardInterrupt


def test_interrupted_build_keeps_the_old_site(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = root.parent / "out"
    assert build_site(root, strict=False, site_dir=site) == 0
    before = snapshot(site)
    monkeypatch.setattr(site_build, "run_mkdocs", _interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_site(root, strict=False, site_dir=site)
    assert snapshot(site) == before
    assert leftovers(site.parent) == []


def test_crash_while_swapping_puts_the_old_site_back(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = root.parent / "out"
    assert build_site(root, strict=False, site_dir=site) == 0
    before = snapshot(site)
    real_rename = Path.rename

    def failing_rename(self: Path, target: Path) -> Path:
        if ".building-" in self.name:
            raise OSError("disk full")
        return real_rename(self, target)

    monkeypatch.setattr(Path, "rename", failing_rename)
    with pytest.raises(OSError, match="disk full"):
        build_site(root, strict=False, site_dir=site)
    monkeypatch.undo()
    assert snapshot(site) == before
    assert leftovers(site.parent) == []


def test_foreign_file_in_site_dir_survives(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site = root.parent / "mine"
    site.mkdir()
    (site / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(SiteDirError, match="not a previous masrl-kb build"):
        build_site(root, strict=False, site_dir=site)
    assert main(["--root", str(root), "build", "--no-strict", "--site-dir", str(site)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "refusing to delete" in err
    assert (site / "notes.txt").read_text(encoding="utf-8") == "keep me"
    assert [p.name for p in site.iterdir()] == ["notes.txt"]


def test_file_added_to_a_previous_build_survives(root: Path) -> None:
    site = root.parent / "out"
    assert build_site(root, strict=False, site_dir=site) == 0
    (site / "CNAME").write_text("example.org", encoding="utf-8")
    with pytest.raises(SiteDirError, match=r"holds files a build did not create \(CNAME\)"):
        build_site(root, strict=False, site_dir=site)
    assert (site / "CNAME").read_text(encoding="utf-8") == "example.org"


@pytest.mark.parametrize("kind", ["file", "forged-marker", "symlink"])
def test_other_targets_are_refused(root: Path, tmp_path: Path, kind: str) -> None:
    target = tmp_path / "target"
    if kind == "file":
        target.write_text("not a folder", encoding="utf-8")
    elif kind == "forged-marker":
        target.mkdir()
        (target / MARKER).write_text('{"generator": "someone else"}', encoding="utf-8")
        (target / "data.csv").write_text("1,2", encoding="utf-8")
    else:
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "keep.txt").write_text("x", encoding="utf-8")
        target.symlink_to(elsewhere)
    before = snapshot(tmp_path)
    with pytest.raises(SiteDirError):
        build_site(root, strict=False, site_dir=target)
    assert snapshot(tmp_path) == before


def test_empty_site_dir_is_used(root: Path) -> None:
    site = root.parent / "empty"
    site.mkdir()
    assert build_site(root, strict=False, site_dir=site) == 0
    assert (site / MARKER).is_file() and (site / "index.html").is_file()


def test_legacy_default_site_is_replaced(root: Path) -> None:
    legacy = root / "site"
    (legacy / "search").mkdir(parents=True)
    (legacy / "sitemap.xml").write_text("<urlset/>", encoding="utf-8")
    (legacy / "search" / "search_index.json").write_text("{}", encoding="utf-8")
    assert build_site(root, strict=False) == 0
    assert (legacy / MARKER).is_file()


# ---------------------------------------------------------------- fail fast, stop cleanly

SLOW_GEN_PY = """\
import os
import time
from pathlib import Path


def on_files(files, config):
    Path("CHILD_PID").write_text(str(os.getpid()))
    time.sleep(120)  # a build that takes long: the test stops it from outside
    return files
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"  # a zombie has stopped; only its exit status is left


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_sigterm_stops_mkdocs_and_removes_the_temporary_folder(root: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import REPO

    (root / "gen.py").write_text(SLOW_GEN_PY, encoding="utf-8")
    site = root.parent / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-m", "masrl_kb.cli", "--root", str(root), "build", "--no-strict"]
    parent = subprocess.Popen([*argv, "--site-dir", str(site)], env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not (root / "CHILD_PID").exists():
            assert parent.poll() is None, parent.stderr.read()
            assert time.monotonic() < deadline, "mkdocs never reached the page hook"
            time.sleep(0.1)
        time.sleep(0.2)
        child = int((root / "CHILD_PID").read_text())
        assert _alive(child) and leftovers(site.parent) != []
        parent.send_signal(signal.SIGTERM)
        code = parent.wait(timeout=30)
    finally:
        if parent.poll() is None:
            parent.kill()
    assert code == 128 + signal.SIGTERM
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child), "the MkDocs child outlived the build"
    assert leftovers(site.parent) == [] and not site.exists()
    assert b"Traceback" not in parent.stderr.read()


@pytest.mark.parametrize("target", ["/", "home", "data-root", "above-root", "cwd"])
def test_dangerous_site_dirs_are_refused_before_any_walk(
    root: Path,
    target: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import os

    monkeypatch.chdir(root.parent)
    path = {
        "/": Path("/"),
        "home": Path.home(),
        "data-root": root,
        "above-root": root.parent,
        "cwd": Path("."),
    }[target]

    def no_walk(*args, **kwargs):
        raise AssertionError("walked the folder before refusing it")

    monkeypatch.setattr(os, "walk", no_walk)
    monkeypatch.setattr(site_build, "run_mkdocs", no_walk)
    before = snapshot(root)
    assert main(["--root", str(root), "build", "--no-strict", "--site-dir", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("refusing" in err or "file-system root" in err)
    assert {k: v for k, v in snapshot(root).items() if not k.startswith(".cache/")} == before


def test_a_full_unmarked_folder_is_refused_without_a_walk(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    big = tmp_path / "big"
    (big / "a" / "b").mkdir(parents=True)
    (big / "a" / "b" / "file.txt").write_text("x", encoding="utf-8")
    monkeypatch.setattr(os, "walk", lambda *a, **k: (_ for _ in ()).throw(AssertionError("walk")))
    with pytest.raises(SiteDirError, match="not a previous masrl-kb build"):
        build_site(root, strict=False, site_dir=big)
