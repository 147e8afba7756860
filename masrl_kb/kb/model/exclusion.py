"""The exclusion record (``exclusions/E<nnn>.yaml``): one screened-out work and why."""

from __future__ import annotations

from typing import Annotated

from masrl_kb.kb.model.base import KbModel
from masrl_kb.kb.model.base import field as doc
from masrl_kb.kb.model.types import EXCLUSION_ID_PATTERN, Axis, Date, LongText, Text, Url, pattern


class Exclusion(KbModel):
    """One screened-out record: exclusions/E<nnn>.yaml."""

    id: Annotated[str, pattern(EXCLUSION_ID_PATTERN)] = doc("Log id E001...; equals the file name.")
    title: Text = doc("Title or label of the screened record.")
    identifier: Text = doc("arXiv:..., OpenReview:..., ACL:... or a label for docs.")
    url: Url = doc("http(s) link to the screened record.")
    source: Annotated[str, Axis("exclusion_source")] = doc("Where it was found.")
    query_family: Annotated[str, Axis("query_family")] = doc("Query family that surfaced it.")
    screened: Date = doc("Screening date (YYYY-MM-DD, unquoted).")
    stage: Annotated[str, Axis("exclusion_stage")] = doc("Screening stage that excluded it.")
    reason: Annotated[str, Axis("exclusion_reason")] = doc("Exclusion reason code.")
    note: LongText = doc("Why, in the curators' own words.")
