"""The knowledge base's website: pages generated from the records at build time.

``build_site(root)`` runs MkDocs; ``site_files(root)`` returns every generated
page as text (no MkDocs needed); ``safe_url`` is the only gate for hrefs.
"""

from masrl_kb.site.build import build_site
from masrl_kb.site.html import safe_url
from masrl_kb.site.pages import site_files

__all__ = ["build_site", "safe_url", "site_files"]
