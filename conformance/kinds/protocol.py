"""What an input kind decides: the one protocol every kind of input the kit grades follows.

The kit feeds clients four kinds of input (a stream of JSON lines, an envelope document, a
scenario a fake ``stella`` plays to a wrapper, a trace journal).  Everything that differs
between them is a method or an attribute of one :class:`InputKind`, so the rest of the
kit asks the kind (``KINDS[case.kind].…``) instead of switching on its name, and a new
input is one new module that registers its kind.

A kind's :attr:`~InputKind.name` is the string written wherever a kind is serialised (a
case cache's entries, the report, :attr:`GradedCase.kind`): those stay as they are.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from stella_conform.conformance.checks.case import GradedCase
    from stella_conform.conformance.checks.model import Check
    from stella_conform.generators.grammar import TextForm
    from stella_conform.oracle.decoder import RunSummary
    from stella_conform.oracle.readings import Alternative
    from stella_conform.schemas.vocabulary import Vocabulary


class InputKind(ABC):
    """One kind of input: how its cases are made, read by the oracle, kept and shown.

    The defaults suit a kind whose cases are generated afresh every run and whose oracle
    reading names no line; a kind overrides what differs.
    """

    #: The kind's name, as serialised (case cache, report JSON, ``GradedCase.kind``).
    name: ClassVar[str]
    #: How :func:`~stella_conform.generators.grammar.scan` reads its bytes (``None``: its
    #: cases are not JSON text the grammar audit scans).
    text_form: ClassVar[TextForm | None] = None
    #: Whether the case cache keeps its generated cases (a kind whose cases drive another
    #: program, as a wrapper's scenarios drive the fake stella, generates them every time).
    cached: ClassVar[bool] = False
    #: Whether a client claims which parts of this input it reads (``--reads``).
    reads_parts: ClassVar[bool] = False
    #: Whether the profiles fed this input build on the reader's checks (a dashboard or a
    #: recorder reads streams as a reader does, so ``reader`` is graded with them).
    reader_first: ClassVar[bool] = False
    #: Whether the oracle reads the input line by line as a client reports its lines, so an
    #: excerpt can show the lines the client read differently.
    line_outcomes: ClassVar[bool] = False
    #: Fields of the oracle's reading that are notes on the input, never a summary field a
    #: client is asked for (an envelope's ``reason`` for rejecting it, its ``shape``).
    oracle_notes: ClassVar[frozenset[str]] = frozenset()

    # ------------------------------------------------------------------ generated cases

    @abstractmethod
    def owns_generated(self, case: Any) -> bool:
        """Whether ``case`` is one of this kind's generated cases (what its strategy draws)."""

    @abstractmethod
    def graded(
        self, case: Any, vocab: Vocabulary | None = None, reads: frozenset[str] | None = None
    ) -> GradedCase:
        """A generated case as the grader sees it (``reads``: the parts the client claims)."""

    # ------------------------------------------------------------------ the oracle

    #: The parts of the oracle's reading worth printing next to a failure.
    expected_keys: ClassVar[tuple[str, ...]] = ("verdict",)

    @abstractmethod
    def reading(self, case: GradedCase) -> dict[str, Any]:
        """The oracle's reading of the case, as JSON (holding :attr:`expected_keys`)."""

    @abstractmethod
    def expected_verdict(self, case: GradedCase) -> str:
        """What a correct client concludes of the case (``accept`` or ``reject``)."""

    def alternatives(self, case: GradedCase) -> tuple[Alternative, ...]:
        """The other conforming readings of the case (empty when the contract is plain)."""
        return ()

    def also_conforming(self, case: GradedCase, keys: Sequence[str]) -> list[dict[str, Any]]:
        """The other conforming readings as a failure lists them beside the expected one
        (``keys`` of each; empty: none are listed)."""
        return []

    def summaries(self, case: GradedCase) -> list[RunSummary]:
        """The oracle's summaries under every reading, against which a client's digested
        texts are expanded (empty: the kind's summaries hold no digests)."""
        return []

    def default_touched(self, case: GradedCase) -> frozenset[str] | None:
        """The registered points the default reading reached (``None``: not known)."""
        return None

    def rejected_line(self, case: GradedCase) -> int | None:
        """The line the oracle rejects the case at (``None``: none, or no lines)."""
        return None

    # ------------------------------------------------------------------ the case cache

    def cache_fields(self, case: GradedCase) -> dict[str, Any]:
        """What a case cache entry holds beside the case's bytes, name and mutations."""
        return {}

    def known_mutations(self, check: Check) -> Collection[str]:
        """The mutation names a cached case of ``check`` may carry."""
        return check.mutations

    def check_cache_fields(self, entry: Mapping[str, Any]) -> None:  # noqa: B027 - a no-op default
        """Validate what :meth:`cache_fields` wrote (``ValueError`` saying what is wrong)."""

    def from_cache(
        self,
        entry: Mapping[str, Any],
        data: bytes,
        vocab: Vocabulary,
        reads: frozenset[str] | None,
    ) -> GradedCase:
        """A cached case, from its validated entry and its checked bytes."""
        raise NotImplementedError(f"the {self.name} kind keeps no cached cases")

    def __repr__(self) -> str:
        return f"<input kind {self.name}>"
