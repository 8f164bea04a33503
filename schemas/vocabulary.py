"""What the kit treats as *known*: type tags, their body schemas, and the
contract facts a schema cannot carry.

A vocabulary answers the reference decoder's three questions about a line
whose ``type`` is a string: is the tag known, which legacy spellings does it
accept, and does the body fit.  Everything else (an unrecognized tag, a
missing ``type``) is inert by rule 3 and never reaches the vocabulary.

The default vocabulary is written by us from the contract
(``events.schema.json`` + ``vocabulary.json``).  A stella release's generated
wire schema (``agentevent.schema.json``, a top-level ``oneOf`` over ``type``
consts) can replace it, so a client is graded against the release it ships
with; the aliases and archived shapes still apply to the tags it knows.  Other
vocabularies ship by name (:data:`BUNDLED`): ``stella-older`` is the stella
that still wrote ``complete`` as its turn boundary.

Two sets matter and can differ.  :attr:`Vocabulary.written` is what the stella
writes (the generators draw streams from it); :attr:`Vocabulary.known` is what
the client under test recognizes of it.  They are equal until a client claims
(``--knows``): :meth:`Vocabulary.restrict` keeps every body schema but narrows
``known``, so the reference decoder reads an unclaimed type as unrecognized *for
this client* (a bad ``tool_result`` body is inert to a client that never reads
``tool_result``), and rule-4 cases are drawn from known types only.

A client may also know types this stella never writes: ``complete``, the turn
boundary of an older stella, in a client that reads archived streams as well as
today's.  Such a claimed type is taken from the bundled vocabulary that defines it
(:attr:`Vocabulary.foreign`): where a stream holds one (an archived fixture), the
oracle reads it as that stella wrote it, and a turn boundary of that stella closes
a turn (:attr:`Vocabulary.turn_boundaries`).  :attr:`Vocabulary.recognized` is
every type the client claims, written here or not.  The vocabulary is always the
stream's producer; the claims are the client's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stella_conform.schemas.fastfit import FastCompiler, Fits
from stella_conform.schemas.fit import FitCheck, FitCompiler, UnsupportedSchema, resolve_ref

if TYPE_CHECKING:
    from stella_conform.schemas.learnt import Learnt


class VocabularyError(ValueError):
    """A schema that cannot be turned into a vocabulary; the message says why."""


@dataclass(frozen=True)
class Alias:
    """A renamed field: ``field`` is the self-describing name, ``legacy`` the old one.

    When both are present the self-describing name wins.
    """

    field: str
    legacy: str


@dataclass(frozen=True)
class ArchivedShape:
    """A known tag whose body lacks ``missing`` is read as unrecognized, not corrupt."""

    type: str
    missing: str
    why: str


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """A versioned set of known types and how to read them."""

    name: str
    version: str
    members: Mapping[str, Mapping[str, Any]]
    root: Mapping[str, Any] = field(repr=False)
    aliases: Mapping[str, Alias] = field(default_factory=dict)
    archived: Mapping[str, ArchivedShape] = field(default_factory=dict)
    source: str = "builtin"
    #: The type that closes one turn (``complete`` before stella renamed it).
    turn_boundary: str = "turn_complete"
    #: The types the client claims to know (``None``: every member), written here or not.
    claimed: frozenset[str] | None = None
    #: Claimed types this stella never writes, each with the bundled vocabulary that
    #: defines it (its body schema, aliases and archived shapes come from there).
    foreign: Mapping[str, Vocabulary] = field(default_factory=dict, repr=False)
    #: Aliases the schema names only in its descriptions (``schemas/learnt.py``).
    learnt: tuple[Learnt, ...] = field(default=(), repr=False)

    @property
    def known(self) -> frozenset[str]:
        """The types of this stella the client recognizes: a line of any other type this
        stella writes is unrecognized."""
        if self.claimed is None:
            return frozenset(self.members)
        return self.claimed & frozenset(self.members)

    @property
    def recognized(self) -> frozenset[str]:
        """Every type the client claims to know, whether this stella writes it or not."""
        return self.claimed if self.claimed is not None else frozenset(self.members)

    @property
    def turn_boundaries(self) -> frozenset[str]:
        """The types that close a turn for this client: this stella's turn boundary, and a
        claimed type that is the turn boundary of the stella it comes from (``complete``)."""
        return frozenset(
            {self.turn_boundary, *(t for t, v in self.foreign.items() if t == v.turn_boundary)}
        )

    @property
    def type_aliases(self) -> Mapping[str, str]:
        """Old event type names the schema's descriptions keep as aliases: old -> today's."""
        return {a.legacy: a.name for a in self.learnt if a.kind == "type"}

    @property
    def tolerant(self) -> Vocabulary | None:
        """This vocabulary with every learnt alias in its keywords (``None`` without any):
        how stella decodes, where the keywords alone refuse a legacy spelling."""
        if not self.learnt:
            return None
        key = id(self.root)
        made = _TOLERANT.get(key)
        if made is None:
            from stella_conform.schemas.learnt import tolerant

            made = Vocabulary.from_schema_document(
                tolerant(self.root, self.learnt),
                name=self.name,
                version=self.version,
                aliases=self.aliases,
                archived=self.archived,
                source=self.source,
                turn_boundary=self.turn_boundary,
                learn=False,
            )
            _TOLERANT[key] = made
        return made

    def home(self, tag: str) -> Vocabulary:
        """The vocabulary that defines ``tag`` for this client (itself, or a foreign one)."""
        return self.foreign.get(tag, self)

    @property
    def written(self) -> frozenset[str]:
        """Every type this stella writes, known to the client or not (what streams hold)."""
        return frozenset(self.members)

    @property
    def unclaimed(self) -> frozenset[str]:
        """Types stella writes that the client does not claim to know (not graded as known)."""
        return self.written - self.known

    def restrict(self, known: Iterable[str]) -> Vocabulary:
        """This vocabulary as seen by a client that recognizes only ``known``.

        Every body schema stays (streams still hold every type), but the decoder's
        dispatch, and so every expected outcome, treats the other types as
        unrecognized.  A name this stella never writes is a type the client knows
        from another stella: defined by the first bundled vocabulary that has it
        (:attr:`foreign`), or by none (a name no stella writes: nothing to read).
        Whether such a name is a typo is the claim's to say (``claims.py`` warns).
        """
        wanted = frozenset(known)
        if self.claimed is None and wanted == self.written:
            return self
        key = (id(self), wanted)
        cached = _RESTRICTED.get(key)
        if cached is None:
            foreign = {t: v for t in sorted(wanted - self.written) if (v := _defining(t))}
            cached = replace(self, claimed=wanted, foreign=foreign)
            # the compiled fits are per member and do not depend on the claim: share them
            for name in ("_fits", "_fast"):
                if name in self.__dict__:
                    cached.__dict__[name] = self.__dict__[name]
            _RESTRICTED[key] = cached
        return cached

    @property
    def ident(self) -> str:
        """``name@version``, recorded in every report."""
        return f"{self.name}@{self.version}"

    @cached_property
    def _fits(self) -> dict[str, FitCheck]:
        compiler = FitCompiler(self.root)
        out: dict[str, FitCheck] = {}
        for tag, schema in self.members.items():
            try:
                out[tag] = compiler.compile(schema, f"#/oneOf[{tag}]")
            except UnsupportedSchema as exc:
                raise VocabularyError(f"{self.source}: {exc}") from exc
        return out

    @cached_property
    def _fast(self) -> dict[str, Fits]:
        try:
            return FastCompiler(self.root).compile_many(self.members)
        except UnsupportedSchema as exc:
            raise VocabularyError(f"{self.source}: {exc}") from exc

    def compile_all(self) -> None:
        """Compile every member now, so a bad schema fails at load, not mid-run."""
        _ = self._fits
        _ = self._fast

    @cached_property
    def dispatch(self) -> dict[str, tuple[Fits, Alias | None, str | None]]:
        """Per known tag: the fast fit, its alias, the key whose absence is an archived shape."""
        own = {
            tag: (
                self._fast[tag],
                self.aliases.get(tag),
                self.archived[tag].missing if tag in self.archived else None,
            )
            for tag in self.members
            if tag in self.known
        }
        for tag, home in self.foreign.items():
            own[tag] = home.dispatch[tag]
        return own

    @cached_property
    def archived_today(self) -> Mapping[str, ArchivedShape]:
        """Shapes this (older) stella wrote as its normal ones that today's vocabulary reads
        as archived: a ``stage`` without ``scope`` from the stella before scope existed.
        The oracle reads them as this stella meant them (reading A of the point
        ``shape-archived-today``) and as today's client reads them (reading B)."""
        today = _default()
        return {
            tag: shape
            for tag, shape in today.archived.items()
            if tag in self.members and tag not in self.archived
        }

    @cached_property
    def prose_constrained(self) -> frozenset[str]:
        """Known types whose schema states a constraint only in prose (``schemas/prose.py``:
        each constraint, where it applies, and the check the decoder runs).  Cached here:
        the decoder asks on every known line."""
        from stella_conform.schemas.prose import constrained_tags

        return constrained_tags(self)

    @cached_property
    def pointless(self) -> frozenset[str]:
        """Known types a body that fits can touch no registered point with: no shape that
        today's vocabulary reads as archived, no legacy alias, no constraint stated in
        prose, no tagged union inside. The careful decode asks nothing more of them (the
        points :func:`stella_conform.oracle.classify._known_points` looks for are those four)."""
        from stella_conform.schemas.tagged_unions import wrappers

        return frozenset(
            tag
            for tag in self.dispatch
            if tag not in self.archived_today
            and tag not in self.prose_constrained
            and self.home(tag).aliases.get(tag) is None
            and not wrappers(self.home(tag), tag)
        )

    def fits(self, tag: str, normalized: Mapping[str, Any]) -> bool:
        """The fast yes/no form of :meth:`misfit` (the decoder's hot path)."""
        if tag in self.foreign:
            return self.foreign[tag].fits(tag, normalized)
        return self._fast[tag](normalized)

    def normalize(self, tag: str, event: Mapping[str, Any]) -> dict[str, Any]:
        """Resolve a legacy field spelling to the self-describing one."""
        alias = self.home(tag).aliases.get(tag)
        if alias is None or alias.field in event or alias.legacy not in event:
            return dict(event) if not isinstance(event, dict) else event  # nothing to rename
        out = dict(event)
        out[alias.field] = out.pop(alias.legacy)
        return out

    def archived_shape(self, tag: str, event: Mapping[str, Any]) -> ArchivedShape | None:
        shape = self.home(tag).archived.get(tag)
        if shape is not None and shape.missing not in event:
            return shape
        return None

    def misfit(self, tag: str, normalized: Mapping[str, Any]) -> str | None:
        """``None`` when the (normalized) body fits its schema, else the reason."""
        if tag in self.foreign:
            return self.foreign[tag].misfit(tag, normalized)
        return self._fits[tag](normalized, "")

    def schema_for(self, tag: str) -> dict[str, Any]:
        """A standalone JSON Schema for one member (for strict validators)."""
        schema = dict(self.members[tag])
        defs = self.root.get("$defs")
        if defs:
            schema["$defs"] = defs
        schema.setdefault("$schema", "https://json-schema.org/draft/2020-12/schema")
        return schema

    # ------------------------------------------------------------------ loading

    @classmethod
    def default(cls) -> Vocabulary:
        return _default()

    @classmethod
    def bundled(cls, name: str) -> Vocabulary:
        """A vocabulary shipped with the kit, by name (``default``, ``stella-older``...)."""
        manifest = BUNDLED.get(BUNDLED_ALIASES.get(name, name))
        if manifest is None:
            raise VocabularyError(
                f"no bundled vocabulary named {name!r} (bundled: {', '.join(bundled_names())})"
            )
        return _load_bundled(manifest)

    @classmethod
    def load(cls, spec: str | Path | None) -> Vocabulary:
        """A vocabulary from what a user typed: nothing (the default), a wire schema
        file, or a bundled vocabulary's name; raises :class:`VocabularyError`.

        A file of that name wins over a bundled name, so a user's own file is never
        shadowed by the kit.
        """
        if spec is None or str(spec) == "":
            return _default()
        path = Path(spec)
        if not path.exists() and BUNDLED_ALIASES.get(str(spec), str(spec)) in BUNDLED:
            return cls.bundled(str(spec))
        if not path.exists():
            raise VocabularyError(
                f"wire schema not found: {path} (nor is it a bundled vocabulary: "
                f"{', '.join(bundled_names())})"
            )
        return cls.from_wire_schema(path)

    @classmethod
    def from_wire_schema(cls, path: str | Path, *, name: str | None = None) -> Vocabulary:
        """Import a stella wire schema file; raises :class:`VocabularyError`."""
        from stella_conform.safe_files import DOCUMENT_CAP, read_regular

        path = Path(path)
        try:
            # a regular file of at most a document's size: a FIFO is refused at once (it
            # hung the kit), /dev/zero is not read without bound
            text = read_regular(path, DOCUMENT_CAP).decode("utf-8")
        except FileNotFoundError:
            raise VocabularyError(f"wire schema not found: {path}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise VocabularyError(f"cannot read wire schema {path}: {exc}") from None
        # The same file read again (every check of a run or a matrix column asks for its
        # vocabulary) is the same vocabulary: its fits are compiled once, not per check.
        key = (str(path), name, text)
        loaded = _IMPORTED.get(key)
        if loaded is not None:
            return loaded
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise VocabularyError(f"{path}: not JSON ({exc})") from None
        base = _default()
        loaded = cls.from_schema_document(
            doc,
            name=name or "wire",
            version=_schema_version_label(doc, path),
            aliases=base.aliases,
            archived=base.archived,
            source=str(path),
        )
        _IMPORTED[key] = loaded
        return loaded

    @classmethod
    def from_schema_document(
        cls,
        doc: Any,
        *,
        name: str,
        version: str,
        aliases: Mapping[str, Alias] | None = None,
        archived: Mapping[str, ArchivedShape] | None = None,
        source: str = "<schema>",
        turn_boundary: str = "turn_complete",
        learn: bool = True,
    ) -> Vocabulary:
        """``learn``: read the aliases the schema names in its descriptions
        (``schemas/learnt.py``)."""
        if not isinstance(doc, dict):
            raise VocabularyError(f"{source}: a wire schema must be a JSON object")
        branches = doc.get("oneOf")
        if not isinstance(branches, list) or not branches:
            raise VocabularyError(
                f"{source}: unsupported wire schema: expected a top-level 'oneOf' over event types"
            )
        dialect = doc.get("$schema")
        if dialect is not None and "2020-12" not in str(dialect):
            raise VocabularyError(
                f"{source}: unsupported JSON Schema dialect {dialect!r} (need draft 2020-12)"
            )
        members: dict[str, Mapping[str, Any]] = {}
        for index, branch in enumerate(branches):
            resolved = _resolve(doc, branch, source, index)
            tag = _type_const(resolved)
            if tag is None:
                raise VocabularyError(
                    f"{source}: oneOf[{index}] does not pin 'type' to one string const"
                )
            if tag in members:
                raise VocabularyError(f"{source}: type {tag!r} is declared twice")
            members[tag] = resolved
        known = set(members)
        vocab = cls(
            name=name,
            version=version,
            members=members,
            root=doc,
            aliases={k: v for k, v in (aliases or {}).items() if k in known},
            archived={k: v for k, v in (archived or {}).items() if k in known},
            source=source,
            turn_boundary=turn_boundary,
            learnt=_learn(doc) if learn else (),
        )
        vocab.compile_all()
        return vocab


def _resolve(doc: Mapping[str, Any], branch: Any, source: str, index: int) -> Mapping[str, Any]:
    seen = 0
    while isinstance(branch, Mapping) and "$ref" in branch and len(branch) == 1:
        try:
            branch = resolve_ref(doc, branch["$ref"])
        except UnsupportedSchema as exc:
            raise VocabularyError(f"{source}: oneOf[{index}]: {exc}") from None
        seen += 1
        if seen > 32:
            raise VocabularyError(f"{source}: oneOf[{index}]: reference loop")
    if not isinstance(branch, Mapping):
        raise VocabularyError(f"{source}: oneOf[{index}] is not a schema object")
    return branch


def _type_const(member: Mapping[str, Any]) -> str | None:
    props = member.get("properties")
    if not isinstance(props, Mapping):
        return None
    spec = props.get("type")
    if not isinstance(spec, Mapping):
        return None
    if isinstance(spec.get("const"), str):
        return str(spec["const"])
    enum = spec.get("enum")
    if isinstance(enum, list) and len(enum) == 1 and isinstance(enum[0], str):
        return enum[0]
    return None


def _schema_version_label(doc: Mapping[str, Any], path: Path) -> str:
    import hashlib

    digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:12]
    return f"{path.name}#{digest}"


def data_path(*parts: str) -> Path:
    """Path of a file shipped in the package's ``schemas`` folder."""
    base = resources.files("stella_conform.schemas")
    return Path(str(base.joinpath(*parts)))


def load_schema(name: str) -> dict[str, Any]:
    """One of the kit's own JSON Schemas, by file name."""
    with open(data_path(name), encoding="utf-8") as fh:
        loaded: dict[str, Any] = json.load(fh)
    return loaded


#: Bundled vocabularies: name -> manifest file in the package's ``schemas`` folder.
BUNDLED = {"stella-default": "vocabulary.json", "stella-older": "vocabulary.older.json"}
#: Short names accepted wherever a bundled vocabulary is named.
BUNDLED_ALIASES = {"default": "stella-default", "older": "stella-older"}

_LOADED: dict[str, Vocabulary] = {}
#: A schema's tolerant vocabulary, by the schema document's identity (shared by its claims).
_TOLERANT: dict[int, Vocabulary] = {}
#: Imported wire schemas by (path, name, the file's text): a changed file is a new entry.
_IMPORTED: dict[tuple[str, str | None, str], Vocabulary] = {}
_RESTRICTED: dict[tuple[int, frozenset[str]], Vocabulary] = {}


def _learn(doc: Mapping[str, Any]) -> tuple[Learnt, ...]:
    from stella_conform.schemas.learnt import learn

    return learn(doc)


def bundled_names() -> list[str]:
    return sorted(BUNDLED)


def bundled_types() -> frozenset[str]:
    """Every type some bundled vocabulary writes (what a claim may name without a warning)."""
    return frozenset(t for name in BUNDLED for t in Vocabulary.bundled(name).written)


def _defining(tag: str) -> Vocabulary | None:
    """The first bundled vocabulary (today's first) that writes ``tag``, if any."""
    for name in BUNDLED:
        vocab = Vocabulary.bundled(name)
        if tag in vocab.members:
            return vocab
    return None


def _load_bundled(manifest_name: str) -> Vocabulary:
    loaded = _LOADED.get(manifest_name)
    if loaded is None:
        manifest = load_schema(manifest_name)
        doc = load_schema(manifest["schema"])
        aliases = {tag: Alias(**spec) for tag, spec in manifest["aliases"].items()}
        archived = {a["type"]: ArchivedShape(**a) for a in manifest["archived_shapes"]}
        loaded = Vocabulary.from_schema_document(
            doc,
            name=manifest["name"],
            version=manifest["version"],
            aliases=aliases,
            archived=archived,
            source="builtin:" + manifest["schema"],
            turn_boundary=manifest.get("turn_boundary", "turn_complete"),
        )
        _LOADED[manifest_name] = loaded
    return loaded


def _default() -> Vocabulary:
    return _load_bundled(BUNDLED["stella-default"])
