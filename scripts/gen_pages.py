"""mkdocs-gen-files entry point: every page comes from ``masrl_kb.site``."""

from masrl_kb.site import write_generated

write_generated()
