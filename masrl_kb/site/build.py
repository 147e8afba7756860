"""Build the site with MkDocs from any data root."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from masrl_kb.kb.paths import ENV_ROOT, find_root
from masrl_kb.site.context import CLONE

CONFIG_FILE = "mkdocs.yml"
# Silence the theme's and plugins' end-of-life banners: they are not about this site.
QUIET = {"NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}


def config_file(root: Path) -> Path:
    """The root's own mkdocs.yml, else the package clone's (synthetic roots have none)."""
    for folder in (root, CLONE):
        if (folder / CONFIG_FILE).is_file():
            return folder / CONFIG_FILE
    raise FileNotFoundError(f"no {CONFIG_FILE} in {root} or {CLONE}")


def build_site(
    root: str | os.PathLike[str] | None = None,
    strict: bool = True,
    site_dir: str | os.PathLike[str] | None = None,
) -> int:
    """Run ``mkdocs build`` (``--strict`` by default) for a data root; return its exit code.

    The data root reaches the page generator through ``MASRL_KB_ROOT``; the
    site goes to ``site_dir`` (default ``<root>/site``).
    """
    data_root = find_root(root).resolve()
    config = config_file(data_root)
    target = Path(site_dir).resolve() if site_dir else data_root / "site"
    command = [
        sys.executable,
        "-m",
        "mkdocs",
        "build",
        "--quiet",
        "-f",
        str(config),
        "-d",
        str(target),
    ]
    if strict:
        command.append("--strict")
    env = {**os.environ, ENV_ROOT: str(data_root), **QUIET}
    # The config's own folder as cwd keeps its relative paths (docs/, scripts/) resolvable.
    return subprocess.run(command, env=env, cwd=config.parent, check=False).returncode
