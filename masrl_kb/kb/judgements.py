"""Kept for the site's imports: the evidence rules are the paper model's validators now."""

from masrl_kb.kb.model.paper import BENCHMARK_CATEGORY, EVALUATED_CATEGORIES

__all__ = ["BENCHMARK_CATEGORY", "EVALUATED_CATEGORIES"]
