"""The protocol page: the survey's sources, query families, inclusion rules and
exclusion codes, from ``protocol.yaml`` and ``taxonomy.yaml``."""

from __future__ import annotations

from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context


def axis_rows(ctx: Context, axis: str) -> list[tuple[str, str, str]]:
    """(id, label, definition) of every value of a taxonomy axis, in taxonomy order."""
    return [(v.id, v.label, v.definition) for v in ctx.tax[axis].values]


def protocol_page(ctx: Context) -> Page:
    protocol = ctx.protocol
    page = Page(urls.PROTOCOL, "Search and screening protocol")
    return page.show(
        "protocol.md",
        ctx=ctx,
        protocol=protocol,
        reasons=(protocol.reason_axis, axis_rows(ctx, protocol.reason_axis)),
        stages=(protocol.stage_axis, axis_rows(ctx, protocol.stage_axis)),
    )
