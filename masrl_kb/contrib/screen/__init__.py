"""Living-review screening rounds, one step per module: :mod:`.rounds` runs a batch
(``screen run``/``screen import``), :mod:`.import_files` reads exported lists,
:mod:`.dedup` finds duplicates, :mod:`.ranking` orders the candidates,
:mod:`.round_files` and :mod:`.store` write the folder, :mod:`.decisions` turns
decisions into records. The arXiv search is :mod:`masrl_kb.contrib.sources.arxiv`."""
