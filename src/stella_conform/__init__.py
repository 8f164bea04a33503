"""stella-conform: conformance tests and fuzzing for clients of stella's output.

The package maps the repository's top-level folders into one namespace:
``stella_conform.schemas`` (vocabulary), ``stella_conform.generators``
(Hypothesis strategies), ``stella_conform.conformance`` (runner, grader,
reports), ``stella_conform.fixtures`` and ``stella_conform.adapters`` (data).
"""

from stella_conform._version import __version__

__all__ = ["__version__"]
