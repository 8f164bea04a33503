"""Generated cases depend on the seed alone, not on how the kit is installed.

Hypothesis mixes constants it finds in *local* modules (any module outside
site-packages and the standard library) into a small share of its draws.  An editable
install makes the kit's own modules local and a wheel does not, so one seed would draw
other cases in a checkout than in CI or on a user's machine: a saved replay, a docs example
or a matrix cell could not be reproduced across installs.  The kit's own modules are never
a source of constants; a user's code (an in-process parser under the pytest plugin) still
is, as Hypothesis intends.

This touches an internal of Hypothesis; if it moves, the kit still runs, but its draws
depend on the install (``tests/generators/test_generators.py`` notices).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import cache
from pathlib import Path

import stella_conform

#: Where the kit's modules live, as imported (``src/stella_conform`` in a checkout, the
#: package in site-packages) and as resolved (the top-level folders the links point to).
_KIT_ROOTS = tuple(
    {
        str(Path(stella_conform.__file__).parent) + "/",
        *(
            str((Path(stella_conform.__file__).parent / name).resolve()) + "/"
            for name in ("schemas", "generators", "conformance")
        ),
    }
)


def _is_kit_file(path: str) -> bool:
    return path.startswith(_KIT_ROOTS)


def exclude_the_kit_from_local_constants() -> bool:
    """Make Hypothesis skip the kit's modules when it collects local constants."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - an internal moved
        return False
    original: Callable[[str], bool] | None = getattr(providers, "is_local_module_file", None)
    if original is None:  # pragma: no cover
        return False
    if getattr(original, "_skips_the_kit", False):
        return True

    def is_local_module_file(path: str) -> bool:
        return not _is_kit_file(path) and original(path)

    is_local_module_file._skips_the_kit = True  # type: ignore[attr-defined]
    setattr(providers, "is_local_module_file", is_local_module_file)  # noqa: B010
    return True


@cache
def local_constants_digest() -> str:
    """A digest of the constants Hypothesis mixes into its draws from the running program's
    own modules: cases drawn under other constants are other cases, so whatever keeps
    generated cases (the case cache) keys them by this too. If the internal it reads
    moves, the digest says "unknown" and only narrows what is shared."""
    try:
        from hypothesis.internal.conjecture.providers import _get_local_constants

        found = _get_local_constants()
        text = repr(sorted((k, sorted(map(repr, v))) for k, v in vars(found).items()))
    except Exception as exc:  # any failure only narrows what is shared
        text = f"unknown: {type(exc).__name__}"
    return hashlib.sha256(text.encode()).hexdigest()
