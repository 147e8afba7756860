"""The knowledge base's website: pages generated from the records at build time.

``build_site(root)`` runs MkDocs; ``site_files(root)`` returns every generated
page as text (no MkDocs needed); ``safe_url`` is the only gate for hrefs.
They are imported on first use: ``build_site`` only starts MkDocs, and the process
that does so need not load pandas and the page modules the MkDocs child loads.
"""

from __future__ import annotations

from masrl_kb import lazy_exports

_HOMES = {
    "build_site": "masrl_kb.site.build",
    "safe_url": "masrl_kb.site.html",
    "site_files": "masrl_kb.site.pages",
}
__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
