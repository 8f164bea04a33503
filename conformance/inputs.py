"""What a user tells a grading command, checked whole before any client starts.

``run``, ``fuzz`` and the pytest plugin take the same values: profiles, ``--only`` /
``--skip``, a known-failures file, a vocabulary (a bundled name or a wire schema), the
claims (``knows``, ``reads``, ``computes``, ``summary-only``), the example databases and
the report paths.  :func:`check_told` checks all of them, in one place and before the
first client process (the auto-mode probe included): a bad value is a
:class:`~stella_conform.errors.SetupError` naming it (exit 2; the plugin's usage error,
exit 4), never a traceback once the client has run, and a client that logs its starts
sees none.  A matrix checks each ``[[client]]`` the same way before it reads any hello
(:func:`stella_conform.conformance.matrix.load_config`).

What needs the client's hello (the profiles and claims it makes) is added afterwards by
:meth:`Told.claims` and :meth:`Told.checks`; what fails there is the client's word,
not the user's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stella_conform.conformance.checks import Check, select, unmatched_globs
from stella_conform.conformance.checks.claims import (
    Claims,
    claims_from,
    from_hello,
    merge,
    resolve_profiles,
)
from stella_conform.conformance.report.files import check_writable
from stella_conform.conformance.report.model import load_known_failures
from stella_conform.errors import SetupError
from stella_conform.schemas.vocabulary import Vocabulary, VocabularyError


@dataclass(frozen=True)
class Told:
    """The user's values, checked: what a grading command runs with."""

    vocab: Vocabulary
    #: The claims the user made (command line, ini values), before any hello's.
    told: Claims
    profiles: tuple[str, ...] = ()
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    known: dict[str, str] = field(default_factory=dict)
    #: The example database built from the user's values (``None``: none).
    database: Any = None

    def claims(self, hello: Mapping[str, Any] | None) -> Claims:
        """The user's claims over the hello's (the user's win where both make one)."""
        return merge(self.told, from_hello(hello, self.vocab))

    def checks(self, hello: Mapping[str, Any] | None) -> list[Check]:
        """The checks to grade: the user's profiles, else the hello's, filtered."""
        return select(resolve_profiles(self.profiles, hello), self.only, self.skip)


def check_told(
    *,
    where: str,
    vocabulary: Path | str | None = None,
    profiles: Sequence[str] = (),
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    known_failures: Path | None = None,
    knows: str | None = None,
    reads: str | None = None,
    computes: str | None = None,
    summary_only: bool | None = None,
    database: Callable[[], Any] | None = None,
    reports: Sequence[Path | None] = (),
) -> Told:
    """Every value the user gave, checked before any client starts; :class:`SetupError`
    naming the first bad one.

    ``where`` names the claims' source in messages ("command line", "stella options").
    ``database`` builds the example database from the user's values (it raises
    :class:`SetupError` for a bad one); it is called last, after every cheaper check.
    """
    profiles = tuple(profiles)
    resolve_profiles(profiles, None)  # an unknown profile, before the hello can add any
    bad = unmatched_globs([*only, *skip])
    if bad:
        raise SetupError(
            f"--only/--skip {bad[0]!r} matches no check id (see stella-conform checks)"
        )
    known = load_known_failures(known_failures) if known_failures else {}
    check_writable(list(reports))
    vocab = load_vocabulary(vocabulary)
    told = claims_from(
        knows=knows,
        reads=reads,
        computes=computes,
        summary_only=summary_only,
        vocab=vocab,
        where=where,
    )
    return Told(
        vocab,
        told,
        profiles,
        tuple(only),
        tuple(skip),
        known,
        database() if database is not None else None,
    )


def load_vocabulary(source: Path | str | None) -> Vocabulary:
    """A bundled vocabulary by name or a wire schema file; :class:`SetupError` when bad."""
    try:
        return Vocabulary.load(source)
    except VocabularyError as exc:
        raise SetupError(str(exc)) from None
