"""Candidate lists from scholarly indexes, as CSV for ``masrl-kb screen import``.

One module per service, each behind :mod:`.transport` (deadline, size cap,
rate limit, bounded retries honouring Retry-After, strict JSON):

- :mod:`.openreview`: a venue's submissions matching keywords;
- :mod:`.openalex`: a search in a publication-date window, and the works
  citing the pool (forward snowballing);
- :mod:`.semantic_scholar`: recommendations seeded with the pool as positives
  and the exclusions as negatives.

:mod:`.rows` cleans every value and writes the CSV atomically.
"""
