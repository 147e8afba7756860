"""Build the site with MkDocs from any data root, never losing the last good site.

MkDocs builds into a fresh temporary folder beside the target, which replaces the target
only when the build succeeds (a failure, an interrupt or SIGTERM leaves the old site). A
target is replaced only if it is empty or a previous build (its :data:`MARKER` lists every
file it created), so ``--site-dir`` never deletes files the build did not create.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from masrl_kb.kb.paths import CLONE, ENV_ROOT, find_root

CONFIG_FILE = "mkdocs.yml"
MARKER = ".masrl-kb-site.json"
GENERATOR = "masrl-kb build"
# A default site/ built before the marker existed is recognised by MkDocs' own outputs.
LEGACY_SIGNS = ("sitemap.xml", "search/search_index.json")
SHOWN_FOREIGN = 5
CHILD_GRACE_SECONDS = 5  # after SIGTERM, how long MkDocs may take to stop before SIGKILL
# Silence the theme's and plugins' end-of-life banners: they are not about this site.
QUIET = {"NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
# Set for a preview build: the page generator leaves drafts out instead of refusing them.
ENV_PREVIEW = "MASRL_KB_PREVIEW"


class SiteDirError(ValueError):
    """The output folder holds files the build did not create; nothing was changed."""


def source_file(root: Path, name: str) -> Path | None:
    """A repository file (mkdocs.yml, CITATION.cff) from the data root, else from the package
    clone (synthetic roots have none)."""
    return next((folder / name for folder in (root, CLONE) if (folder / name).is_file()), None)


def build_site(
    root: str | os.PathLike[str] | None = None,
    strict: bool = True,
    site_dir: str | os.PathLike[str] | None = None,
    preview: bool = False,
) -> int:
    """Run ``mkdocs build`` (``--strict`` by default) into ``site_dir`` (default
    ``<root>/site``), raising :class:`SiteDirError` first when it holds files no build
    created; the exit code. ``preview`` leaves drafts out under a banner."""
    data_root = find_root(root).resolve()
    config = source_file(data_root, CONFIG_FILE)
    if config is None:
        raise FileNotFoundError(f"no {CONFIG_FILE} in {data_root} or {CLONE}")
    default = site_dir is None
    target = data_root / "site" if site_dir is None else Path(site_dir).absolute()
    if not default:
        check_not_protected(target, data_root)
    check_replaceable(target, legacy_ok=default)
    target.parent.mkdir(parents=True, exist_ok=True)
    with _sigterm_raises():
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.building-", dir=target.parent))
        try:
            command = [sys.executable, "-m", "mkdocs", "build", "--quiet", "-f", str(config)]
            command += ["-d", str(staging), *(["--strict"] if strict else [])]
            code = run_mkdocs(command, data_root, config.parent, preview)
            if code == 0:
                write_marker(staging)
                swap_in(staging, target)
            return code
        finally:
            shutil.rmtree(staging, ignore_errors=True)  # gone already after a swap


class Terminated(SystemExit):
    """SIGTERM arrived during a build: unwinds like an interrupt, exits 128 + 15."""


def _raise_terminated(signum: int, frame: object) -> None:  # noqa: ARG001
    raise Terminated(128 + signum)


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """SIGTERM becomes :class:`Terminated` for the duration, so cleanup code runs
    (by default SIGTERM ends Python at once, leaving the child and the temp folder)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def run_mkdocs(command: list[str], data_root: Path, cwd: Path, preview: bool = False) -> int:
    """MkDocs in a child process; its exit code."""
    env = {**os.environ, ENV_ROOT: str(data_root), **QUIET, ENV_PREVIEW: "1"}
    if not preview:  # only --preview makes a preview, never a stray variable
        del env[ENV_PREVIEW]
    # The config's own folder as cwd keeps its relative paths (docs/, scripts/) resolvable.
    child = subprocess.Popen(command, env=env, cwd=cwd)
    try:
        return child.wait()
    except BaseException:
        if child.poll() is None:  # still running: SIGTERM, then SIGKILL after a grace period
            child.terminate()
            try:
                child.wait(timeout=CHILD_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        raise


# ---------------------------------------------------------------- the output folder


def _walk(folder: Path) -> Iterator[str]:
    """Every file and link under ``folder`` as a POSIX path relative to it, lazily
    (stops when asked), never following a link to a folder."""
    for base, dirs, files in os.walk(folder):
        rel = Path(base).relative_to(folder)
        links = [d for d in dirs if (Path(base) / d).is_symlink()]
        for name in sorted([*files, *links]):
            yield (rel / name).as_posix()


def write_marker(folder: Path) -> None:
    """Record what this build created, so a later build may replace exactly that."""
    listing = {"generator": GENERATOR, "files": sorted(_walk(folder))}
    (folder / MARKER).write_text(json.dumps(listing, indent=1) + "\n", encoding="utf-8")


def _marker_files(folder: Path) -> set[str] | None:
    """The files a previous build listed, or None when ``folder`` carries no valid marker."""
    path = folder / MARKER
    if path.is_symlink() or not path.is_file():
        return None
    try:
        listing = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(listing, dict) or listing.get("generator") != GENERATOR:
        return None
    files = listing.get("files")
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return {*files, MARKER}


def check_not_protected(target: Path, data_root: Path) -> None:
    """Refuse, before looking inside, a target whose replacement would remove far
    more than a site: a file-system root, the home folder, the current folder,
    the data root or any folder holding one of them."""
    resolved = target.resolve()
    guarded = {"the data root": data_root.resolve(), "the current folder": Path.cwd().resolve()}
    guarded["your home folder"] = Path.home().resolve()
    if resolved == Path(resolved.anchor):
        raise SiteDirError(f"{target}: a file-system root; choose an empty or new folder")
    for what, folder in guarded.items():
        if resolved == folder or resolved in folder.parents:
            raise SiteDirError(
                f"{target}: is or holds {what}; refusing to replace it with the site: "
                "choose an empty or new folder"
            )


def check_replaceable(target: Path, legacy_ok: bool = False) -> None:
    """Raise :class:`SiteDirError` unless ``target`` is missing, empty or a previous build
    holding only the files it listed (``legacy_ok``: or a MkDocs build from before markers)."""
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise SiteDirError(f"{target}: not a folder; refusing to replace it with the site")
    if not target.exists():
        return
    with os.scandir(target) as entries:
        if next(entries, None) is None:  # an empty folder
            return
    listed = _marker_files(target)
    if listed is None:
        if legacy_ok and all((target / sign).is_file() for sign in LEGACY_SIGNS):
            return
        raise SiteDirError(
            f"{target}: not empty and not a previous masrl-kb build (no {MARKER}); "
            "refusing to delete its files: choose an empty or new folder"
        )
    # Only a folder a build marked is walked, and only until enough is found to say so.
    unlisted = (path for path in _walk(target) if path not in listed)
    foreign = list(itertools.islice(unlisted, SHOWN_FOREIGN + 1))
    if foreign:
        shown = ", ".join(foreign[:SHOWN_FOREIGN])
        more = " and more" if len(foreign) > SHOWN_FOREIGN else ""
        raise SiteDirError(
            f"{target}: holds files a build did not create ({shown}{more}); "
            "refusing to delete them: move them out or choose another folder"
        )


def swap_in(staging: Path, target: Path) -> None:
    """Put the finished build at ``target``; the old site is removed only once it is replaced."""
    if not target.exists():
        staging.rename(target)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
    old.rmdir()  # a free name beside the target, on the same file system
    target.rename(old)
    try:
        staging.rename(target)
    except BaseException:
        old.rename(target)  # put the last good site back
        raise
    shutil.rmtree(old, ignore_errors=True)
