"""The data files of a git ref, extracted for ``masrl-kb diff`` with ``git archive`` into a
folder of their own (tarfile's ``data`` filter: no member outside it, no device).
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

from masrl_kb.kb.benchmarks import BENCHMARKS_FILE
from masrl_kb.kb.records import EXCLUSIONS_DIR, PAPERS_DIR
from masrl_kb.kb.taxonomy import TAXONOMY_FILE
from masrl_kb.query.claims import CLAIMS_FILE

DATA_PATHS = (PAPERS_DIR, EXCLUSIONS_DIR, TAXONOMY_FILE, CLAIMS_FILE, BENCHMARKS_FILE)


class DiffError(Exception):
    """The ref cannot be read (not a git repository, unknown ref...)."""


def _git(root: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, check=False, timeout=120
        )
    except FileNotFoundError:
        raise DiffError("git is not installed or not on PATH") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DiffError(f"git {' '.join(args)}: {message[-1] if message else 'failed'}")
    return done.stdout


def extract_ref(root: Path, ref: str, dest: Path) -> None:
    """Write the ref's data files (those that exist there) under ``dest``."""
    try:
        prefix = _git(root, "rev-parse", "--show-prefix").decode().strip()
    except DiffError:
        raise DiffError(f"{root} is not inside a git repository") from None
    try:
        _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except DiffError:
        raise DiffError(
            f"unknown git ref {ref!r} (fetch it first, e.g. git fetch origin)"
        ) from None
    tree = f"{ref}:{prefix}" if prefix else ref
    listed = _git(root, "ls-tree", "--name-only", tree).decode().splitlines()
    present = [p for p in DATA_PATHS if p in listed]
    dest.mkdir(parents=True, exist_ok=True)
    if not present:
        return
    archive = _git(root, "archive", "--format=tar", tree, "--", *present)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
