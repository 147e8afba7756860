"""Where the knowledge base's data lives: the data root a command or a call works on."""

from __future__ import annotations

import os
from pathlib import Path

ENV_ROOT = "MASRL_KB_ROOT"
Root = str | os.PathLike[str] | None  # a data root argument (None: find_root's search)
TAXONOMY_FILE = "taxonomy.yaml"
PAPERS_DIR = "papers"
# The clone this package runs from. Its mkdocs.yml and protocol.yaml serve as templates for a
# bare data root (site/build.py, site/context.py); it is never taken as the data root itself:
# an environment installed from one clone must check the clone it is run in.
CLONE = Path(__file__).resolve().parents[2]
HOW_TO_POINT = f"pass --root DIR (root=... in Python) or set {ENV_ROOT}"


class RootNotFoundError(FileNotFoundError, ValueError):
    """No data root: none found from the current folder up, or the one named is not a
    folder. A ``ValueError`` too: for the Python API it is a bad argument."""


def is_data_root(folder: Path) -> bool:
    """A folder holding the project's marker files: ``taxonomy.yaml`` and ``papers/``."""
    return (folder / TAXONOMY_FILE).is_file() and (folder / PAPERS_DIR).is_dir()


def search_root(start: Path | None = None) -> Path | None:
    """The nearest data root from ``start`` (the current folder) up, or None."""
    here = Path.cwd() if start is None else start
    return next((f for f in (here, *here.parents) if is_data_root(f)), None)


def _folder(given: object, label: str) -> Path:
    """A named root as a path: text or a path-like that names an existing folder."""
    if isinstance(given, os.PathLike):
        given = os.fspath(given)
    if not isinstance(given, str) or not given:
        what = "an empty text" if given == "" else type(given).__name__
        raise RootNotFoundError(f"{label.strip()}: expected a folder's path, got {what}")
    path = Path(given)
    if not path.is_dir():
        shown = "".join(ch if ch.isprintable() else "?" for ch in given)
        why = "not a folder" if path.exists() else "no such folder"
        raise RootNotFoundError(f"{label}{shown}: {why}")
    return path


def find_root(root: Root = None) -> Path:
    """The data root: ``root``, else ``$MASRL_KB_ROOT``, else the nearest folder from the
    current one up holding ``taxonomy.yaml`` and ``papers/``; raises
    :class:`RootNotFoundError` (saying how to name one) when there is none."""
    if root is not None:
        return _folder(root, "root ")
    if os.environ.get(ENV_ROOT):
        return _folder(os.environ[ENV_ROOT], f"{ENV_ROOT}=")
    found = search_root()
    if found is None:
        raise RootNotFoundError(
            f"no data root ({TAXONOMY_FILE} and {PAPERS_DIR}/) in the current folder or its "
            f"parents: {HOW_TO_POINT}, or run inside a clone"
        )
    return found
