"""Living-review screening rounds, one step per module: :mod:`.rounds` (``screen run`` and
``screen import``), :mod:`.import_files`, :mod:`.dedup`, :mod:`.ranking`, :mod:`.round_files`,
:mod:`.store` and :mod:`.decisions` (``screen decide``)."""
