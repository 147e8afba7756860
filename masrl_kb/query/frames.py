"""The pandas API in one import, as notebooks and ``masrl_kb`` name it: records as
DataFrames (:mod:`masrl_kb.query.pool`), axes and cross-tabs (:mod:`masrl_kb.query.axes`)
and the evaluation tables (:mod:`masrl_kb.query.evaluation_table`). It defines nothing.

Load once (``papers = load_papers()``) and pass ``papers=`` to the other functions.
"""

from __future__ import annotations

from masrl_kb.kb.fields import ARTIFACT_KINDS
from masrl_kb.query.axes import (
    DECISION_AXES,
    axes_of,
    axis_mask,
    axis_values,
    cell_papers,
    check_axis,
    check_value,
    crosstab,
    require_columns,
    select,
    tag_matrix,
    value_counts,
)
from masrl_kb.query.evaluation_table import (
    EVALUATION_COLUMNS,
    RESULT_COLUMNS,
    RESULT_NUMBER_COLUMNS,
    benchmark_matrix,
    evaluations,
    results,
)
from masrl_kb.query.pool import (
    DRAFT_COLUMNS,
    DateLike,
    Frames,
    InvalidRecordsError,
    PathLike,
    load_drafts,
    load_exclusions,
    load_papers,
    load_pool,
    pool_as_of,
)
from masrl_kb.query.record_rows import EXCLUSION_TAGS

__all__ = [
    "ARTIFACT_KINDS",
    "DECISION_AXES",
    "DRAFT_COLUMNS",
    "EVALUATION_COLUMNS",
    "EXCLUSION_TAGS",
    "RESULT_COLUMNS",
    "RESULT_NUMBER_COLUMNS",
    "DateLike",
    "Frames",
    "InvalidRecordsError",
    "PathLike",
    "axes_of",
    "axis_mask",
    "axis_values",
    "benchmark_matrix",
    "cell_papers",
    "check_axis",
    "check_value",
    "crosstab",
    "evaluations",
    "load_drafts",
    "load_exclusions",
    "load_papers",
    "load_pool",
    "pool_as_of",
    "require_columns",
    "results",
    "select",
    "tag_matrix",
    "value_counts",
]
