"""One model of the kit's options (:mod:`.model`), the kinds that check their values
(:mod:`.kinds`), the ``[tool.stella-conform]`` table of a client's ``pyproject.toml``
(:mod:`.pyproject`), and the :class:`SuiteConfig` made from resolved options
(:mod:`.suite`)."""

from stella_conform.options.kinds import MAX_COUNT, MAX_SECONDS, Problem
from stella_conform.options.model import BY_NAME, OPTIONS, Option, Source, Unset

__all__ = ["BY_NAME", "MAX_COUNT", "MAX_SECONDS", "OPTIONS", "Option", "Problem", "Source", "Unset"]
