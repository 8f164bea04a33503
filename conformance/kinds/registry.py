"""The registry of input kinds, keyed by name: a kind registers itself where it is defined
(``@register`` over its class), and the rest of the kit looks it up by the name a case or a
check carries (``KINDS[case.kind]``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from stella_conform.conformance.kinds.protocol import InputKind

if TYPE_CHECKING:
    from stella_conform.conformance.kinds.case import GradedCase
    from stella_conform.schemas.vocabulary import Vocabulary

K = TypeVar("K", bound=type[InputKind])


class Registry(Mapping[str, InputKind]):
    """Every input kind the kit grades, by name, in the order they registered."""

    def __init__(self) -> None:
        self._kinds: dict[str, InputKind] = {}

    def __getitem__(self, name: str) -> InputKind:
        try:
            return self._kinds[name]
        except KeyError:
            known = ", ".join(self._kinds)
            raise KeyError(f"no input kind {name!r} (known: {known})") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._kinds)

    def __len__(self) -> int:
        return len(self._kinds)

    def add(self, kind: InputKind) -> InputKind:
        """Register ``kind`` under its name (a second kind of the same name is refused)."""
        if kind.name in self._kinds:
            raise ValueError(f"an input kind named {kind.name!r} is registered already")
        self._kinds[kind.name] = kind
        return kind

    def remove(self, name: str) -> None:
        """Unregister a kind (a test's toy kind, once graded)."""
        del self._kinds[name]

    def load(
        self, path: Path, vocab: Vocabulary | None = None, *, data: bytes | None = None
    ) -> GradedCase:
        """A case file of any kind as a case, validated: read by the kind whose suffix its
        name ends with (the longest such suffix first; kinds sharing one, a stream's and a
        journal's, tell their files apart by reading them), else by the fallback kind.

        ``data``: the case's bytes where the caller has read them already (``replay``,
        through the safe reader, refusing a link): the case file is not read again, so
        what is graded is what was checked, never a file swapped in between."""
        from stella_conform.errors import SetupError

        kinds = list(self._kinds.values())
        fitting = sorted(
            (k for k in kinds if path.name.endswith(k.suffix)), key=lambda k: -len(k.suffix)
        )
        for kind in fitting or [k for k in kinds if k.fallback]:
            case = kind.load(path, vocab, data)
            if case is not None:
                return case
        raise SetupError(f"{path}: not a case file of any kind ({', '.join(self._kinds)})")

    def of_generated(self, case: Any) -> InputKind:
        """The kind whose strategy drew ``case``."""
        for kind in self._kinds.values():
            if kind.owns_generated(case):
                return kind
        raise TypeError(f"not a generated case: {type(case).__name__}")


#: The input kinds, by name.
KINDS = Registry()


def register(cls: K) -> K:
    """Class decorator: register one instance of the kind (``@register class …``)."""
    KINDS.add(cls())
    return cls
