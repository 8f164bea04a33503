"""What a client claims to read, and so what it is graded on.

Real clients read subsets of what stella writes: a dashboard that never keeps a
turn count, a reader of run envelopes that never looks at ``events``, a client
that recognizes six of the fourteen event types.  Grading such a client on the
rest is noise, not a finding.  A client therefore claims, in its hello or on the
command line (the command line wins, and is the only way in exit mode):

* ``knows`` — the event types it recognizes.  The oracle decodes relative to it
  (:meth:`Vocabulary.restrict`): any other type is unrecognized *for this client*.
  A claim may name the types of any stella, today's or an older one's: ``complete``
  and ``turn_complete`` are both claimable whichever stella wrote the streams (the
  vocabulary says which stella that is; the claims say what the client knows).  A name
  no bundled vocabulary writes is kept, with a warning in the report: a typo guard.
* ``reads`` — the envelope parts it reads (:data:`READS`): the shapes ``run``,
  ``pipeline``, ``query``, and the nested ``events`` and ``files_touched``.
  Cases and checks only for those; the reference envelope reader ignores the rest.
* ``computes`` — the summary fields it fills in (:data:`COMPUTES`).  A check whose
  fields it does not compute is ``skip``, saying so; a check comparing several
  fields compares only the computed ones.  A field computed without knowing the
  event types it is read from (:data:`DEPENDS`: ``terminator`` without
  ``run_complete``) is not a skip but a ``fail`` of the check about those types,
  saying so (:meth:`Claims.unmet`): it is the bug of a client waiting for an old name.
  Only a field named in ``computes``, in a mode that reports summaries, is "computed":
  without the claim (or in exit mode) the client has said nothing, and the check skips.
* ``summary_only`` — it does not process line by line (a whole-text reader, a file
  poller), so it writes no line observations; checks that need them are ``skip``.

A claim left out means "everything": a client that claims nothing is graded on it all.
Every report prints the claims and what they left ungraded, so a release-gating
run shows what was *not* checked.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stella_conform.conformance.checks import CATALOGUE
from stella_conform.conformance.checks.model import PROFILE_INPUT, REPORTING, Check, profiles
from stella_conform.conformance.kinds import KINDS
from stella_conform.errors import SetupError
from stella_conform.schemas.vocabulary import (
    BUNDLED,
    BUNDLED_ALIASES,
    Vocabulary,
    VocabularyError,
    bundled_names,
    bundled_types,
)

#: Envelope parts a client can claim to read, and how a report names them.
READS = ("run", "pipeline", "query", "events", "files_touched")
READS_WORDS = {
    "run": "run envelopes",
    "pipeline": "--pipeline envelopes",
    "query": "query envelopes",
    "events": "the events array",
    "files_touched": "the files_touched payload",
}
#: Summary fields a client can claim to compute (report and persistent modes): the
#: summary's fields, and every field a check of the catalogue compares.
_SUMMARY_FIELDS = (
    "rejected_line",
    "known_events",
    "unrecognized_events",
    "unrecognized_types",
    "final_text",
    "texts",
    "preview",
    "stages",
    "terminator",
    "turns_completed",
    "elapsed_ms",
    "usage",
    "tool_calls",
    "status",
    "text",
    "model",
    "stop_reason",
    "cost_usd",
    "input_tokens",
    "output_tokens",
    "files_touched",
    "rows",
)
COMPUTES = tuple(
    dict.fromkeys(
        [
            *_SUMMARY_FIELDS,
            *("texts" if f == "texts-unordered" else f for c in CATALOGUE for f in c.fields),
        ]
    )
)
#: What a summary field is read from: the event types a client must know to compute it,
#: as groups of which it must know one name each.  ``TURN_BOUNDARY`` stands for the
#: stella's own turn boundary or today's name for it (a client built for today's stella
#: treats an archived ``complete`` as unknown, as the contract says).  A group naming no
#: type the stella writes asks nothing.
TURN_BOUNDARY = "<turn boundary>"
DEPENDS: Mapping[str, tuple[tuple[str, ...], ...]] = {
    "final_text": (("text",),),
    "texts": (("text",),),
    "preview": (("text_delta",), ("text",)),
    "stages": (("stage",),),
    "terminator": (("run_complete",), ("error",)),
    "turns_completed": ((TURN_BOUNDARY,),),
    "tool_calls": (("tool_start",), ("tool_result",)),
    "usage": (("step_usage",),),
}
#: Judges that need one observation per line: nothing to judge from a summary alone.
#: (A dispatch check holds a client that reports no lines to the verdict alone, and the
#: unterminated last line's content is compared summary against summary: both need none.)
LINE_JUDGES = frozenset({"lockstep", "last-line-kept"})
#: Judges whose whole point is the summary fields (the others also judge a verdict).
FIELD_JUDGES = frozenset(
    {
        "reading",
        "count",
        "stream-order",
        "elapsed",
        "reported-fields",
        "exact-integers",
        "torn-adds-nothing",
    }
)


def split_names(value: str | Iterable[str] | None) -> list[str] | None:
    """``"a, b,c"`` or a list as names; ``None`` or empty stays "no claim"."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else [str(v) for v in value]
    names = [i.strip() for i in items if i.strip()]
    return names or None


@dataclass(frozen=True)
class Claims:
    """A client's claims; ``None`` for a claim not made (graded on everything)."""

    knows: frozenset[str] | None = None
    reads: frozenset[str] | None = None
    computes: frozenset[str] | None = None
    summary_only: bool = False
    #: Where each claim came from: ``command line`` or ``hello``.
    sources: Mapping[str, str] = field(default_factory=dict)
    #: What the report warns about the claims (a claimed type no stella writes).
    warnings: tuple[str, ...] = ()
    #: Types graded as known though the client does not claim them (:meth:`knowing`): part
    #: of ``knows`` while a check is graded, never of what the client is said to claim.
    assumed: frozenset[str] = frozenset()

    @property
    def any(self) -> bool:
        return bool(
            self.knows is not None
            or self.reads is not None
            or self.computes is not None
            or self.summary_only
        )

    # ------------------------------------------------------------ grading

    def vocabulary(self, vocab: Vocabulary) -> Vocabulary:
        """The vocabulary as this client sees it: ``vocab``'s streams, read with the types
        the client claims (any stella's: see :meth:`Vocabulary.restrict`)."""
        if self.knows is None:
            return vocab
        return vocab.restrict(self.knows)

    def unmet(
        self, check: Check, vocab: Vocabulary, mode: str
    ) -> tuple[str, frozenset[str]] | None:
        """Why this check fails whatever the cases: the client computes a field the check
        compares without knowing an event type that field is read from; with the types
        it would have to know (``None``: no such field).

        Only a field the client *says* it computes counts (it is in ``computes``), and
        only in a ``mode`` where it reports a summary: a client that claims no
        ``computes``, or runs in exit mode, has said nothing about the field, and the
        check skips as any check about types it does not know (:meth:`skip_reason`).
        Only a check about event types (``types``) asks: it is where the missing
        knowledge is the finding; the other checks compare the field with the client's
        own claims and stay quiet, so the flaw trips one check.  The check is then graded
        as if the client knew those types too (:meth:`knowing`), so the failure shows
        the cases it gets wrong.
        """
        if self.knows is None or self.computes is None or mode not in REPORTING:
            return None
        if not check.types or not check.fields:
            return None
        found: list[str] = []
        needed: set[str] = set()
        for name in dict.fromkeys(_field_name(f) for f in self.fields(check)):
            for group in DEPENDS.get(name, ()):
                names = [vocab.turn_boundary, "turn_complete"] if TURN_BOUNDARY in group else group
                written = [n for n in dict.fromkeys(names) if n in vocab.written]
                if not written or any(n in vocab.recognized for n in names):
                    continue  # this stella writes none of them, or the client knows one
                needed.add(written[0])
                found.append(
                    f"the client computes {name} but does not know {_either(written)}, which "
                    f"{name} is read from: {_consequence(name, written)} (claim "
                    f"{_either(written)} in knows, or leave {name} out of computes)"
                )
        return ("; ".join(found), frozenset(needed)) if found else None

    def knowing(self, types: Iterable[str]) -> Claims:
        """These claims, with ``types`` known as well (how an unmet check is graded); the
        types it adds are :attr:`assumed`, so what the client claimed stays told apart."""
        added = frozenset(types) - (self.knows or frozenset())
        return replace(
            self, knows=(self.knows or frozenset()) | added, assumed=self.assumed | added
        )

    @property
    def own(self) -> Claims:
        """The claims the client made, without the types the kit assumed it knows."""
        if not self.assumed:
            return self
        return replace(self, knows=(self.knows or frozenset()) - self.assumed, assumed=frozenset())

    def fields(self, check: Check) -> tuple[str, ...]:
        """The check's summary fields this client computes (all of them without a claim)."""
        if self.computes is None:
            return check.fields
        return tuple(f for f in check.fields if _field_name(f) in self.computes)

    def skip_reason(self, check: Check, vocab: Vocabulary) -> str | None:
        """Why this check grades nothing the client claims, or ``None`` to grade it."""
        if self.summary_only and check.judge in LINE_JUDGES:
            return (
                "the client reports only a summary (it does not process line by line), and "
                "this check needs one observation per line"
            )
        if check.types and not any(t in vocab.recognized for t in check.types):
            named = [t for t in check.types if t in vocab.written] or list(check.types)
            return f"the client does not know {_either(named)}"
        if self.reads is not None and check.reads and not any(r in self.reads for r in check.reads):
            return f"the client does not read {_either([READS_WORDS[r] for r in check.reads])}"
        only_fields = check.judge in FIELD_JUDGES or check.modes == REPORTING
        if self.computes is not None and check.fields and only_fields and not self.fields(check):
            names = ", ".join(dict.fromkeys(_field_name(f) for f in check.fields))
            return f"the client does not compute {names}"
        return None

    def reads_parts(self, parts: Iterable[str]) -> bool:
        """Whether an envelope made of ``parts`` (its shapes) is one this client reads."""
        return self.reads is None or any(p in self.reads for p in parts)

    def as_options(self) -> list[str]:
        """The command-line options that make the claims the client made (for replay
        commands: a replay judges the case as the client claimed, an unmet claim and all;
        the types the kit assumed, :attr:`assumed`, are the replay's to assume again)."""
        own = self.own
        out = []
        for name, value in (("knows", own.knows), ("reads", own.reads)):
            if value is not None:
                out += [f"--{name}", ",".join(sorted(value))]
        if self.computes is not None:
            out += ["--computes", ",".join(sorted(self.computes))]
        if self.summary_only:
            out.append("--summary-only")
        return out

    # ------------------------------------------------------------ reporting

    def to_json(
        self, vocab: Vocabulary | None = None, checks: Sequence[Check] | None = None
    ) -> dict[str, Any]:
        out: dict[str, Any] = {
            "knows": sorted(self.knows) if self.knows is not None else None,
            "reads": sorted(self.reads) if self.reads is not None else None,
            "computes": sorted(self.computes) if self.computes is not None else None,
            "summary_only": self.summary_only,
            "sources": dict(self.sources),
            "warnings": list(self.warnings),
        }
        if vocab is not None:
            out["not_graded"] = self.not_graded(vocab, checks)
        return out

    def not_graded(self, vocab: Vocabulary, checks: Sequence[Check] | None = None) -> list[str]:
        """What these claims leave out of ``checks`` (default: any check), in words."""
        out = []
        if self.knows is not None:
            missing = sorted(vocab.written - self.knows)
            if missing:
                out.append(
                    f"event types the client does not know ({len(missing)} of "
                    f"{len(vocab.written)}), read as unrecognized: {', '.join(missing)}"
                )
            elsewhere = sorted(self.knows - vocab.written)
            if elsewhere:
                out.append(
                    f"event types the client knows that {vocab.ident} never writes: "
                    f"{', '.join(elsewhere)}"
                )
        parts_read = checks is None or any(KINDS[c.input].reads_parts for c in checks)
        if self.reads is not None and parts_read:
            missing = [READS_WORDS[r] for r in READS if r not in self.reads]
            if missing:
                out.append(f"envelope parts the client does not read: {', '.join(missing)}")
        if self.computes is not None:
            used: tuple[str, ...] = COMPUTES
            read: frozenset[str] = frozenset(COMPUTES)
            if checks is not None:
                asked = {_field_name(f) for c in checks for f in c.fields}
                used = tuple(c for c in COMPUTES if c in asked)
                read = graded_fields(c for c in CATALOGUE if c.profile in _profiles_of(checks))
            missing = [c for c in used if c not in self.computes]
            if missing:
                out.append(f"summary fields the client does not compute: {', '.join(missing)}")
            # and the other way: what it says it computes that no check of the profiles
            # graded reads (a field a check left out by --only grades is not news)
            ungraded = [c for c in COMPUTES if c in self.computes and c not in read]
            if ungraded:
                out.append(
                    "summary fields the client computes that no selected profile grades: "
                    + ", ".join(ungraded)
                )
        if self.summary_only:
            out.append("per-line observations (the client reports only a summary)")
        return out

    def describe(self, vocab: Vocabulary, checks: Sequence[Check] | None = None) -> list[str]:
        """Lines for a terminal or Markdown report; empty without claims."""
        if not self.any:
            return []

        def told(name: str) -> str:
            where = self.sources.get(name)
            return f" (from the {where})" if where else ""

        lines = []
        if self.knows is not None:
            lines.append(f"knows: {', '.join(sorted(self.knows))}{told('knows')}")
        if self.reads is not None:
            lines.append(f"reads: {', '.join(sorted(self.reads))}{told('reads')}")
        if self.computes is not None:
            lines.append(f"computes: {', '.join(sorted(self.computes))}{told('computes')}")
        if self.summary_only:
            lines.append(f"summary only{told('summary_only')}")
        lines += [f"warning: {w}" for w in self.warnings]
        lines += [f"not graded: {n}" for n in self.not_graded(vocab, checks)]
        return lines


#: Summary fields a judge reads beyond the fields its check compares: where the client
#: rejected (from its summary, or its line observations), the text an unknown event must
#: not lend its words to.
JUDGE_READS: Mapping[str, tuple[str, ...]] = {
    "rejected-line": ("rejected_line",),
    "no-guessing": ("final_text",),
}


def _profiles_of(checks: Sequence[Check]) -> frozenset[str]:
    """The profiles ``checks`` belong to, ``reader`` with a stream profile's (a dashboard
    reads the stream first: :func:`resolve_profiles`)."""
    chosen = {c.profile for c in checks}
    if any(KINDS[PROFILE_INPUT[p]].reader_first for p in chosen if p in PROFILE_INPUT):
        chosen.add("reader")
    return frozenset(chosen)


def graded_fields(checks: Iterable[Check]) -> frozenset[str]:
    """The summary fields some check of ``checks`` grades: what it compares, or its judge
    reads (:data:`JUDGE_READS`)."""
    out: set[str] = set()
    for check in checks:
        out.update(_field_name(f) for f in check.fields)
        out.update(JUDGE_READS.get(check.judge, ()))
    return frozenset(out)


def _field_name(name: str) -> str:
    return "texts" if name == "texts-unordered" else name


def _either(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else " or ".join(names)


def _consequence(name: str, types: Sequence[str]) -> str:
    """What a client that computes ``name`` without ``types`` gets wrong, in words."""
    if name == "terminator" and "run_complete" in types:
        return "a run it reads never ends (the bug of a client still waiting for complete)"
    if name == "terminator":
        return "a failed run, which ends on error, never ends"
    if name == "turns_completed":
        return "it never sees a turn end"
    return f"its {name} misses every such event"


# ------------------------------------------------------------ building claims


def _checked(kind: str, names: Iterable[str], allowed: Sequence[str], where: str) -> frozenset[str]:
    chosen = list(names)
    unknown = [n for n in chosen if n not in allowed]
    if unknown:
        raise SetupError(
            f"{where}: unknown {kind} name {unknown[0]!r} (known: {', '.join(allowed)})"
        )
    return frozenset(chosen)


def knows_file(value: str) -> str | None:
    """The file a ``knows`` value names, or ``None`` for names: a value with no comma that
    reads as a path (a ``/`` in it, or ending ``.json``) or names something there that is
    no folder (a regular file, or a FIFO, which must not be taken for a type's name). A
    folder with a type's name (``error``) leaves the name a name."""
    spec = value.strip()
    if not spec or "," in spec:
        return None
    if "/" in spec or os.sep in spec or spec.endswith(".json"):
        return spec
    if os.path.lexists(spec) and not os.path.isdir(spec):
        return spec
    return None


def knows_from(
    value: str | Iterable[str], vocab: Vocabulary, where: str
) -> tuple[frozenset[str], tuple[str, ...]]:
    """``TYPE,...``, or a wire schema / vocabulary file or bundled name (its types); with
    the warnings the names deserve.

    Any stella's types may be named: a type this stella never writes is one the client
    knows from another (``complete`` from an older stella), never a reason to refuse
    the claim.  Only a name that neither this stella nor any bundled vocabulary writes
    is warned about, since it is most likely a typo; it is kept (nothing to grade there).
    """
    if isinstance(value, str) and "," not in value:
        spec = value.strip()
        file = knows_file(spec)
        if file is not None:
            from stella_conform.safe_files import named_path_problem

            problem = named_path_problem(file, "file")
            if problem is not None:  # a FIFO or a device: refused, never read for names
                raise SetupError(f"{where}: {file}: {problem}")
            if not Path(file).is_file():
                raise SetupError(f"{where}: no such file: {file}")
        if file is not None or BUNDLED_ALIASES.get(spec, spec) in BUNDLED:
            try:
                theirs = Vocabulary.load(spec)
            except VocabularyError as exc:
                raise SetupError(f"{where}: {exc}") from None
            return frozenset(theirs.written), ()
    names = split_names(value) or []
    if not names:
        raise SetupError(f"{where}: name at least one event type")
    anywhere = vocab.written | bundled_types()
    strangers = [n for n in dict.fromkeys(names) if n not in anywhere]
    warnings = tuple(
        f"{where}: {n!r} is a type neither {vocab.ident} nor any bundled vocabulary "
        f"({', '.join(bundled_names())}) writes: a typo? It is graded as a type this stella "
        "never writes"
        for n in strangers
    )
    return frozenset(names), warnings


def claims_from(
    *,
    knows: str | Iterable[str] | None,
    reads: str | Iterable[str] | None,
    computes: str | Iterable[str] | None,
    summary_only: bool | None,
    vocab: Vocabulary,
    where: str,
) -> Claims:
    """Claims from one source (the command line, a hello, an ini file, a matrix entry)."""
    sources = {}
    known = None
    warnings: tuple[str, ...] = ()
    if knows is not None and (split_names(knows) or isinstance(knows, str)):
        known, warnings = knows_from(knows, vocab, f"{where} knows")
        sources["knows"] = where
    read = None
    if split_names(reads) is not None:
        read = _checked("reads", split_names(reads) or [], READS, f"{where} reads")
        sources["reads"] = where
    computed = None
    if split_names(computes) is not None:
        computed = _checked("computes", split_names(computes) or [], COMPUTES, f"{where} computes")
        sources["computes"] = where
    if summary_only:
        sources["summary_only"] = where
    return Claims(known, read, computed, bool(summary_only), sources, warnings)


def from_hello(hello: Mapping[str, Any] | None, vocab: Vocabulary) -> Claims:
    """The claims an adapter's hello makes (additive keys of protocol version 1)."""
    if not hello:
        return Claims()
    name = (hello.get("client") or {}).get("name", "the adapter")
    return claims_from(
        knows=hello.get("knows"),
        reads=hello.get("reads"),
        computes=hello.get("computes"),
        summary_only=hello.get("summary_only") is True,
        vocab=vocab,
        where=f"hello of {name}",
    )


def merge(first: Claims, then: Claims) -> Claims:
    """``first``'s claims where it makes them (the command line), else ``then``'s (the hello)."""
    return replace(
        first,
        knows=first.knows if first.knows is not None else then.knows,
        reads=first.reads if first.reads is not None else then.reads,
        computes=first.computes if first.computes is not None else then.computes,
        summary_only=first.summary_only or then.summary_only,
        sources={**dict(then.sources), **dict(first.sources)},
        warnings=first.warnings if first.knows is not None else then.warnings,
    )


def resolve_profiles(given: Sequence[str], hello: Mapping[str, Any] | None) -> tuple[str, ...]:
    """Profiles to grade: the given ones (or the hello's), with ``reader`` under every
    stream profile, because a dashboard or a recorder reads the stream first.

    ``--profile dashboard`` therefore grades ``reader`` and ``dashboard``; with no
    ``--profile``, the profiles the adapter's hello claims; with neither, ``reader``.
    """
    chosen = list(given)
    source = "--profile"
    if not chosen and hello and isinstance(hello.get("profiles"), list):
        chosen = [str(p) for p in hello["profiles"]]
        source = "the hello's profiles"
    unknown = [p for p in chosen if p not in PROFILE_INPUT]
    if unknown:
        raise SetupError(
            f"{source}: unknown profile {unknown[0]!r} (known: {', '.join(profiles())})"
        )
    if not chosen:
        chosen = ["reader"]
    if any(KINDS[PROFILE_INPUT[p]].reader_first for p in chosen) and "reader" not in chosen:
        chosen.insert(0, "reader")
    return tuple(p for p in profiles() if p in chosen)
