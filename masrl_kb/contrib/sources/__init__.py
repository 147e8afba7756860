"""Where candidates come from, each service behind the bounded :mod:`.http`: :mod:`.arxiv`
(``add``/``exclude``, ``screen run``); :mod:`.openreview`, :mod:`.openalex` and
:mod:`.semantic_scholar` write CSV for ``screen import`` (``screen fetch``) via :mod:`.rows`.
"""
