"""What an input kind decides: the one protocol every kind of input the kit grades follows.

The kit feeds clients four kinds of input (a stream of JSON lines, an envelope document, a
scenario a fake ``stella`` plays to a wrapper, a trace journal).  Everything that differs
between them is a method or an attribute of one :class:`InputKind`: where its fixtures
live and how one is read, how a case is handed to a client, what the oracle expects of it,
how a failing case is saved, how its cases are drawn and kept.  The rest of the kit asks
the kind (``check.kind``, ``case.input_kind``, ``KINDS[name]``) instead of switching on its
name, so a new input is one new module whose kind registers itself.

A kind's :attr:`~InputKind.name` is the string written wherever a kind is serialised (a
case cache's entries, the report, :attr:`GradedCase.kind`): those stay as they are.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from stella_conform.conformance.checks.model import Check
    from stella_conform.conformance.clients.runner import Client, Feed, Observation
    from stella_conform.conformance.kinds.case import GradedCase
    from stella_conform.generators.grammar import TextForm
    from stella_conform.generators.runs import Run
    from stella_conform.generators.strata import Stratum
    from stella_conform.oracle.decoder import RunSummary
    from stella_conform.oracle.readings import Alternative
    from stella_conform.schemas.vocabulary import Vocabulary


class Player(Protocol):
    """What hands a case's bytes to the client under test (a run's case runner)."""

    @property
    def client(self) -> Client: ...

    def play(self, stream: bytes, feed: Feed) -> Observation:
        """Run the client on ``stream`` as ``feed`` says; what it did."""
        ...


class InputKind(ABC):
    """One kind of input: how its cases are made, fed, read by the oracle, kept and shown.

    The defaults suit a kind whose cases are one document each, generated afresh every
    run, and whose oracle reading names no line; a kind overrides what differs.
    """

    #: The kind's name, as serialised (case cache, report JSON, ``GradedCase.kind``).
    name: ClassVar[str]

    # ------------------------------------------------------------------ fixtures

    #: A case file's suffix (its curated fixtures, a saved failing case).
    suffix: ClassVar[str]
    #: The folder of a fixtures directory its curated fixtures are in ("": the top).
    fixture_folder: ClassVar[str] = ""
    #: Whether a file whose name fits no kind's suffix is read as this kind's (whose reader
    #: then says what is wrong with it).
    fallback: ClassVar[bool] = False

    def fixture_path(self, directory: Path, name: str) -> Path:
        """Where the fixture ``name`` of this kind lives under a fixtures ``directory``."""
        folder = directory / self.fixture_folder if self.fixture_folder else directory
        return folder / f"{name}{self.suffix}"

    @abstractmethod
    def load(
        self, path: Path, vocab: Vocabulary | None = None, data: bytes | None = None
    ) -> GradedCase | None:
        """A case file of this kind as a case, validated (``SetupError`` if it is not
        valid); ``None`` when the file is another kind's of the same suffix.

        ``data``: the case's bytes where the caller has read them already (then the case
        file is not read again, so what is graded is what was checked)."""

    # ------------------------------------------------------------------ feeding a client

    #: How a message names one case's input ("stream", "document").
    noun: ClassVar[str] = "stream"
    #: Whether an in-process client (a parser called as a function) can read it.
    in_process: ClassVar[bool] = False
    #: Whether a run first starts the client once on a plain case, so one that cannot start
    #: says so once instead of once per check.
    preflight: ClassVar[bool] = False

    def feed(self, case: GradedCase, check: Check) -> Feed:
        """How the case's bytes reach the client (by default one document, written whole)."""
        from stella_conform.conformance.clients.runner import Feed

        return Feed("document")

    def paired(self, check: Check, case: GradedCase) -> bytes | None:
        """The input a self-comparing check also feeds the client (``None``: none)."""
        return None

    def observe(self, case: GradedCase, check: Check, player: Player) -> Observation:
        """Hand the case to the client and say what it did (and, for a self-comparing
        check, what it did with the paired input)."""
        feed = self.feed(case, check)
        obs = player.play(case.stream, feed)
        twin = self.paired(check, case)
        if twin is not None and obs.ok:
            obs.paired = player.play(twin, feed)
        return obs

    #: Whether a client claims which parts of this input it reads (``--reads``).
    reads_parts: ClassVar[bool] = False

    def parts(self, case: GradedCase) -> frozenset[str] | None:
        """The parts of the input a client may claim to read (``None``: it has none)."""
        return None

    #: Whether the profiles fed this input build on the reader's checks (a dashboard or a
    #: recorder reads streams as a reader does, so ``reader`` is graded with them).
    reader_first: ClassVar[bool] = False

    # ------------------------------------------------------------------ the oracle

    #: The parts of the oracle's reading worth printing next to a failure.
    expected_keys: ClassVar[tuple[str, ...]] = ("verdict",)
    #: Fields of the oracle's reading that are notes on the input, never a summary field a
    #: client is asked for (an envelope's ``reason`` for rejecting it, its ``shape``).
    oracle_notes: ClassVar[frozenset[str]] = frozenset()
    #: Whether the oracle reads the input line by line as a client reports its lines, so an
    #: excerpt can show the lines the client read differently.
    line_outcomes: ClassVar[bool] = False

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

    # ------------------------------------------------------------------ saving a failure

    def saved_files(self, directory: Path, name: str) -> list[Path]:
        """The files :meth:`save` writes for the case ``name``: by default the case and its
        expectation beside it."""
        from stella_conform.oracle.corpus import EXPECT_SUFFIX

        return [directory / f"{name}{self.suffix}", directory / f"{name}{EXPECT_SUFFIX}"]

    @abstractmethod
    def save(
        self,
        directory: Path,
        name: str,
        case: GradedCase,
        *,
        check: Check,
        description: str,
        seed: int | None,
    ) -> Path:
        """Write a failing case in its fixture format (what :meth:`load` reads back);
        returns the case file's path."""

    # ------------------------------------------------------------------ generated cases

    #: How :func:`~stella_conform.generators.grammar.scan` reads its bytes (``None``: its
    #: cases are not JSON text the grammar audit scans).
    text_form: ClassVar[TextForm | None] = None
    #: Whether real recordings (the seed corpus) can stand in for its generated runs.
    recordings: ClassVar[bool] = False
    #: Whether fuzz's feedback counts the shapes of its events (a stream's).
    event_shapes: ClassVar[bool] = False

    @abstractmethod
    def strategy(
        self, check: Check, vocab: Vocabulary, recordings: Sequence[Run] = ()
    ) -> SearchStrategy[Any] | None:
        """The generated cases a check grades (``None``: none can be made for the client)."""

    def stratum_list(self, check: Check, vocab: Vocabulary) -> Iterator[Stratum]:
        """The strata a check grades in every run before its random examples."""
        return iter(())

    @abstractmethod
    def owns_generated(self, case: Any) -> bool:
        """Whether ``case`` is one of this kind's generated cases (what its strategy draws)."""

    @abstractmethod
    def graded(
        self, case: Any, vocab: Vocabulary | None = None, reads: frozenset[str] | None = None
    ) -> GradedCase:
        """A generated case as the grader sees it (``reads``: the parts the client claims)."""

    # ------------------------------------------------------------------ the case cache

    #: Whether the case cache keeps its generated cases (a kind whose cases drive another
    #: program, as a wrapper's scenarios drive the fake stella, generates them every time).
    cached: ClassVar[bool] = False

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
