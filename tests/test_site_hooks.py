"""The build hooks stash finished HTML past Markdown without changing a page."""

from __future__ import annotations

import re
from pathlib import Path

import markdown
import pytest
from mkdocs.config import load_config
from mkdocs.utils.meta import get_data

from masrl_kb.kb.paths import find_root
from masrl_kb.kb.synthetic import write_synthetic_root
from masrl_kb.site import site_files
from masrl_kb.site.icons import icon_stylesheet, masked_icons
from masrl_kb.site.md_stash import restore_asides
from masrl_kb.site.mkdocs_hooks import finish
from masrl_kb.site.theme_assets import lunr_files, unused_assets

MARKER = re.compile(r"<!--kb:(html(?: nosearch)?|end)-->")
MARKER_LINE = re.compile(r"^<!--kb:(?:html(?: nosearch)?|end)-->$", re.M)


def _converter(stash: bool = True) -> markdown.Markdown:
    config = load_config(str(find_root() / "mkdocs.yml"))
    extensions = config["markdown_extensions"]
    assert "masrl_kb.site.md_stash" in extensions
    if not stash:
        extensions = [e for e in extensions if e != "masrl_kb.site.md_stash"]
    return markdown.Markdown(extensions=extensions, extension_configs=config["mdx_configs"])


def _both_ways(text: str) -> tuple[str, str]:
    """A page without its markers converted by Markdown alone, and converted with
    its marked regions stashed (as the build does), each finished alike."""
    body = get_data(text)[0]
    direct = _converter(stash=False).convert(MARKER_LINE.sub("", body))
    stashed = restore_asides(_converter().convert(body))
    return finish(direct, {}).strip(), finish(stashed, {}).strip()


@pytest.fixture(scope="module")
def pages(real_site_files: dict[str, str]) -> dict[str, str]:
    return {p: t for p, t in real_site_files.items() if p.endswith(".md")}


@pytest.mark.slow  # converts every generated page of the real site both ways
def test_stashing_regions_changes_no_page(pages) -> None:
    held = [p for p, t in pages.items() if "<!--kb:html" in t]
    assert any(p.startswith("papers/") for p in held) and any(p.startswith("cells/") for p in held)
    for path in held:
        direct, via_stash = _both_ways(pages[path])
        assert via_stash == direct, path


def test_markers_open_and_close_in_turn_and_never_nest(pages) -> None:
    for path, text in pages.items():
        kinds = [m.group(1) for m in MARKER.finditer(text)]
        opens, ends = kinds[0::2], kinds[1::2]
        assert all(k.startswith("html") for k in opens), path
        assert ends == ["end"] * len(opens), path


def test_nosearch_regions_are_left_out_of_what_search_reads() -> None:
    text = "# Title\n\n<!--kb:html-->\n<p>found</p>\n<!--kb:end-->\n\n"
    text += "<!--kb:html nosearch-->\n<table><tr><td>hidden</td></tr></table>\n<!--kb:end-->\n"
    searchable = _converter().convert(text)  # what the search plugin reads
    assert "found" in searchable and "hidden" not in searchable
    full = restore_asides(searchable)
    assert "found" in full and "hidden" in full and "kb:aside" not in full


def test_a_marker_inside_record_text_is_escaped_and_never_held(tmp_path: Path) -> None:
    root = write_synthetic_root(tmp_path / "kb", 2, 0)
    record = next((root / "papers").glob("*.yaml"))
    hostile = "x <!--kb:end--> <!--kb:html nosearch--> <!--kb:aside:0--> y"
    text = record.read_text().replace("summary: A synthetic", f"summary: '{hostile}' #", 1)
    record.write_text(text)
    files = site_files(root)
    page = files[f"papers/{record.stem}/index.md"]
    assert "&lt;!--kb:end--&gt;" in page and "&lt;!--kb:aside:0--&gt;" in page
    kinds = [m.group(1) for m in MARKER.finditer(page)]
    assert kinds == ["html", "end", "html nosearch", "end"]
    direct, via_stash = _both_ways(page)
    assert via_stash == direct


@pytest.mark.parametrize(
    ("languages", "expected"),
    [
        (["en"], set()),
        (["de"], {"min/lunr.de.min.js", "min/lunr.stemmer.support.min.js"}),
        (
            ["en", "ja"],
            {
                "tinyseg.js",
                "min/lunr.ja.min.js",
                "min/lunr.multi.min.js",
                "min/lunr.stemmer.support.min.js",
            },
        ),
        (["th"], {"wordcut.js", "min/lunr.th.min.js", "min/lunr.stemmer.support.min.js"}),
    ],
)
def test_search_keeps_the_tokenisers_its_languages_load(languages, expected) -> None:
    assert lunr_files(languages) == expected


def test_unused_assets_are_source_maps_and_other_languages(tmp_path: Path) -> None:
    lunr = tmp_path / "assets" / "javascripts" / "lunr"
    for name in ("min/lunr.de.min.js", "min/lunr.fr.min.js", "min/lunr.stemmer.support.min.js"):
        (lunr / name).parent.mkdir(parents=True, exist_ok=True)
        (lunr / name).write_text("x")
    (tmp_path / "assets" / "javascripts" / "bundle.js").write_text("x")
    (tmp_path / "assets" / "javascripts" / "bundle.js.map").write_text("x")
    unused = {p.relative_to(tmp_path).as_posix() for p in unused_assets(tmp_path, ["de"])}
    assert unused == {
        "assets/javascripts/bundle.js.map",
        "assets/javascripts/lunr/min/lunr.fr.min.js",
    }


def test_pages_are_minified_but_pre_and_textarea_keep_their_whitespace() -> None:
    html = "<div>\n    <p>a</p>\n\n  <pre>x\n    y</pre>\n  <TEXTAREA>\n  z</TEXTAREA>\n  <b>c</b>"
    html += "</div>"
    out = finish(html, {})
    assert "<pre>x\n    y</pre>" in out and "<textarea>\n  z</textarea>" in out.lower()
    assert "\n    <p>" not in out and "</p>" in out and len(out) < len(html)
    assert finish(html, {}) == out  # deterministic


def test_compiled_templates_are_cached_only_in_a_private_folder(tmp_path, monkeypatch) -> None:
    import stat

    from masrl_kb.site.templates import template_cache

    folder = tmp_path / "user-cache"  # the package's per-user cache folder (kb/cache.py)
    monkeypatch.setenv("MASRL_KB_CACHE_DIR", str(folder))
    cache = template_cache()
    assert cache is not None and Path(cache.directory) == folder
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    folder.rmdir()
    elsewhere = tmp_path / "shared"
    elsewhere.mkdir(mode=0o777)
    folder.symlink_to(elsewhere)  # planted by someone else: refused, no cache
    assert template_cache() is None
    folder.unlink()
    folder.write_text("not a folder")
    assert template_cache() is None


def test_inline_icons_become_classes_drawn_from_one_stylesheet() -> None:
    path = "M3 6h18v2H3z"
    icon = f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="{path}"/></svg>'
    ours = '<svg class="kb-chart" viewBox="0 0 640 166" role="img"><path d="M0 0"/></svg>'
    escaped = "&lt;svg xmlns=&quot;http://www.w3.org/2000/svg&quot;&gt;"  # record text
    icons: dict[str, str] = {}
    html = masked_icons(f"<label>{icon}</label>{ours}<p>{escaped}</p>{icon}", icons)
    (name,) = icons
    assert html.count(f'<svg viewBox="0 0 24 24" class="{name}"></svg>') == 2
    assert ours in html and escaped in html and path not in html
    css = icon_stylesheet(icons)
    assert css.startswith(f".{name}{{") and "mask:" in css and "M3 6h18v2H3z" in css


def test_every_icon_class_in_the_built_site_has_its_rule(real_site: Path) -> None:
    css = (real_site / "assets" / "kb-icons.css").read_text()  # the session's one build
    used = set()
    for page in real_site.rglob("*.html"):
        used |= set(re.findall(r'class="?(kb-i-[0-9a-f]{8})', page.read_text()))
        assert (
            'xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path' not in page.read_text()
        )
    assert used and all(f".{name}{{" in css for name in used)
