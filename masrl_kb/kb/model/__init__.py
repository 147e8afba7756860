"""The typed models: each data file's fields and per-record rules, in one place
(:mod:`.base`: the shared machinery, :mod:`.types`: the field types)."""
