"""Where the knowledge base's data lives."""

from __future__ import annotations

import os
from pathlib import Path

ENV_ROOT = "MASRL_KB_ROOT"
Root = str | os.PathLike[str] | None  # a data root argument (None: find_root's search)
TAXONOMY_FILE = "taxonomy.yaml"
# The clone this package runs from (its mkdocs.yml and protocol also serve a bare data root).
CLONE = Path(__file__).resolve().parents[2]


def find_root(root: Root = None) -> Path:
    """The data root (the folder holding ``taxonomy.yaml``): ``root``, else
    ``MASRL_KB_ROOT``, else the clone the package runs from, else the nearest one up
    from the current directory."""
    if root is not None:
        return Path(root)
    if os.environ.get(ENV_ROOT):
        return Path(os.environ[ENV_ROOT])
    if (CLONE / TAXONOMY_FILE).is_file():
        return CLONE
    for folder in (Path.cwd(), *Path.cwd().parents):
        if (folder / TAXONOMY_FILE).is_file():
            return folder
    raise FileNotFoundError(
        "no taxonomy.yaml found: pass root=..., set MASRL_KB_ROOT, or run inside a clone"
    )
