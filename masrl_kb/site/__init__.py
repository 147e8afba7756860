"""The knowledge base's website: ``build_site(root)`` runs MkDocs, ``site_files(root)``
returns every generated page as text, ``safe_url`` is the only gate for hrefs. Imported on
first use, so the process that starts MkDocs need not load pandas and the page modules."""

from __future__ import annotations

from masrl_kb import lazy_exports

_HOMES = {
    "build_site": "masrl_kb.site.build",
    "safe_url": "masrl_kb.site.html",
    "site_files": "masrl_kb.site.pages",
}
__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
