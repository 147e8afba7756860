"""The theme's inline icons (a third of a paper page's chrome) as empty ``<svg>`` elements
whose CSS class draws the icon as a mask, from one stylesheet per build."""

from __future__ import annotations

import hashlib
import re
from urllib.parse import quote

# A Material Design icon as the theme inlines it (one path; Font Awesome icons carry
# a licence comment and are left as they are).
_ICON = re.compile(
    r'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="([^"<>]*)"/></svg>'
)
ICON_CSS = "assets/kb-icons.css"
SVG_NS = "http://www.w3.org/2000/svg"


def masked_icons(html: str, icons: dict[str, str]) -> str:
    """The page with each inline icon replaced by an empty ``<svg>`` of its class;
    ``icons`` gains each class's path data."""

    def swap(match: re.Match[str]) -> str:
        name = "kb-i-" + hashlib.sha1(match.group(1).encode()).hexdigest()[:8]  # stable
        icons[name] = match.group(1)
        return f'<svg viewBox="0 0 24 24" class="{name}"></svg>'

    return _ICON.sub(swap, html)


def icon_stylesheet(icons: dict[str, str]) -> str:
    """CSS drawing each icon class as a mask in the text colour (as the theme's own
    CSS icons are drawn)."""
    rules = []
    for name, path_data in sorted(icons.items()):
        svg = f'<svg xmlns="{SVG_NS}" viewBox="0 0 24 24"><path d="{path_data}"/></svg>'
        url = f'url("data:image/svg+xml;charset=utf-8,{quote(svg, safe=" =/:,.-")}")'
        rules.append(
            f".{name}{{-webkit-mask:{url} center/contain no-repeat;"
            f"mask:{url} center/contain no-repeat;background-color:currentcolor}}"
        )
    return "\n".join(rules) + "\n"
