"""The Jinja2 environment that lays out every generated page: page modules compute data,
templates lay it out, and Jinja escapes record text (autoescape); the ``md`` filter
escapes a Markdown heading, ``xml`` cleans text for the Atom feed."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import jinja2
from jinja2 import pass_context
from jinja2.runtime import Context as Scope
from markupsafe import Markup, escape

from masrl_kb.kb.cache import folder as cache_folder
from masrl_kb.kb.paths import ENV_ROOT
from masrl_kb.kb.rules import NA
from masrl_kb.site import lists, urls
from masrl_kb.site.html import md_text, safe_url


def decision_marks(tax, row: dict) -> list[tuple[str, str, str]]:
    """(id, status, label) of each decision a paper touches, in taxonomy order."""
    spec = tax["decision"]
    return [(d, row[d], spec.label_of(d)) for d in spec.ids if row[d] != "absent"]


# Links are functions rather than macros: a page calls them thousands of times, and a
# Jinja macro call costs several times a function call. Each reads the page being
# rendered (``page``, for relative hrefs) and the records (``ctx``) from the template.


@pass_context
def link(scope: Scope, to: str, text: object, title: object = None) -> Markup:
    """An internal link, relative to the page being rendered; text and title escaped."""
    tip = f' title="{escape(title)}"' if title else ""
    return Markup(f'<a href="{escape(scope["page"].href(to))}"{tip}>{escape(text)}</a>')


@pass_context
def paper_link(scope: Scope, key: str) -> Markup:
    return link(scope, urls.paper(key), scope["ctx"].rows[key]["title"])


@pass_context
def key_link(scope: Scope, key: str) -> Markup:
    return link(scope, urls.paper(key), key, scope["ctx"].rows[key]["title"])


@pass_context
def tag(scope: Scope, axis: str, value: object, short: bool = False) -> Markup:
    """A value's link to its taxonomy section (its short id with ``short``, label on hover)."""
    label = urls.value_label(scope["ctx"], axis, value)
    if short and value != NA:
        return link(scope, urls.value(axis, value), value, label)
    return link(scope, urls.value(axis, value), label)


@pass_context
def paper_set(scope: Scope, name: str, keys: list[str] | tuple[str, ...]) -> dict[str, object]:
    """The list ``name`` of papers (:func:`masrl_kb.site.lists.register`): its count, the
    papers table filtered to it and its CSV, as site URLs."""
    return lists.register(scope["ctx"], name, keys)


# Characters XML 1.0 forbids; the xml filter drops them from text bound for the Atom feed.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def template_cache() -> jinja2.FileSystemBytecodeCache | None:
    """Compiled templates kept in this user's cache folder (never in the repository, where
    a pull request could place code); None when it may not be trusted (``cache.folder``:
    inside the data root the build reads, ``$MASRL_KB_ROOT``, is one such case)."""
    named = os.environ.get(ENV_ROOT)
    folder = cache_folder(Path(named) if named else None)
    return None if folder is None else jinja2.FileSystemBytecodeCache(str(folder), "jinja-%s.cache")


@cache
def environment() -> jinja2.Environment:
    """One environment per process: templates compile once per build."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("masrl_kb.site", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=template_cache(),
    )
    env.filters.update(md=lambda text: Markup(md_text(text)))
    env.filters["xml"] = lambda text: _XML_INVALID.sub("", str(text))
    helpers = (safe_url, decision_marks, link, paper_link, key_link, tag, paper_set)
    env.globals.update({f.__name__: f for f in helpers}, urls=urls, list_name=lists.list_name)
    return env


@cache
def template(name: str) -> jinja2.Template:
    return environment().get_template(name)


def render(name: str, /, **data: object) -> str:
    """One template rendered with ``data`` (``page`` and ``ctx`` by convention)."""
    return template(name).render(**data)


def macro(template_name: str, name: str) -> Callable[..., Markup]:
    """A macro of a template, callable from Python (returns escaped-safe markup)."""
    return getattr(template(template_name).module, name)
