"""Where candidates come from, each service behind :mod:`.http` (deadline, size caps,
bounded retries honouring Retry-After):

- :mod:`.arxiv`: the arXiv API, for ``add``/``exclude`` and ``screen run``;
- :mod:`.openreview`, :mod:`.openalex`, :mod:`.semantic_scholar`: candidate lists
  as CSV for ``screen import`` (``screen fetch``), through :mod:`.transport`
  (rate limit, strict JSON); :mod:`.rows` cleans every value and writes the CSV.
"""
