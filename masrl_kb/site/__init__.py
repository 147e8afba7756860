"""The knowledge base's website: pages generated from the records at build time.

``build_site(root)`` runs MkDocs; ``site_files(root)`` returns every generated
page as text (no MkDocs needed); ``safe_url`` is the only gate for hrefs.
They are imported on first use: ``build_site`` only starts MkDocs, and the process
that does so need not load pandas and the page modules the MkDocs child loads.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "build_site": "masrl_kb.site.build",
    "safe_url": "masrl_kb.site.html",
    "site_files": "masrl_kb.site.pages",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'masrl_kb.site' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
