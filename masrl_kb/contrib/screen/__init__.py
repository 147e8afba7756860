"""Living-review screening rounds, one step per module: :mod:`.rounds` (``screen run`` and
``screen import``), :mod:`.import_files` (over :mod:`.list_text` and :mod:`.list_formats`),
:mod:`.dedup`, :mod:`.ranking`, :mod:`.round_files`,
:mod:`.store`, :mod:`.decisions` (``screen decide``) and :mod:`.migrate` (``screen migrate``)."""
