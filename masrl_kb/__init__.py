"""masrl-kb: the knowledge base of RL for LLM-based multi-agent systems.

>>> import masrl_kb
>>> papers = masrl_kb.load_papers()
>>> masrl_kb.crosstab("reward_family", "credit_unit", papers=papers)
"""

from masrl_kb.claims import evaluate_claims, load_claims
from masrl_kb.query import (
    InvalidRecordsError,
    cell_papers,
    crosstab,
    load_exclusions,
    load_papers,
    load_pool,
    select,
    tag_matrix,
    value_counts,
)
from masrl_kb.taxonomy import load_taxonomy
from masrl_kb.validate import validate

__all__ = [
    "InvalidRecordsError",
    "cell_papers",
    "crosstab",
    "evaluate_claims",
    "load_claims",
    "load_exclusions",
    "load_papers",
    "load_pool",
    "load_taxonomy",
    "select",
    "tag_matrix",
    "validate",
    "value_counts",
]
__version__ = "0.1.0"
