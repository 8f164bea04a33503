"""One InputKind per input: a kind registered from here alone is graded end to end, and no
string switch on the input kind is left outside ``conformance/kinds``.

The toy kind's input is a few lines of words; a correct client rejects one that holds a line
``BAD``.  It comes with its own catalogue row (a profile fed the toy kind), its own judge and
its own fixture folder, and is graded through :func:`run_check`, the road ``stella-conform
run`` takes for each check, with no edit to the kit.

The switch test reads the kit's sources as Python (not as text, so a scenario document's
``"stream"`` key or a profile named ``envelope`` is not taken for a kind) and reports every
comparison of an expression about a kind (``case.kind``, ``check.input``, ``entry["kind"]``,
``PROFILE_INPUT[p]``) with a kind's name, and any table keyed by kind names or tuple of them.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from stella_conform.conformance.checks import (
    profiles,
    register_judge,
    register_profile,
    unregister_judge,
    unregister_profile,
)
from stella_conform.conformance.checks.model import Check, Context, Judgment
from stella_conform.conformance.clients.runner import Client, Observation
from stella_conform.conformance.kinds import KINDS, InputKind
from stella_conform.conformance.kinds.case import GradedCase
from stella_conform.conformance.suite import SuiteConfig, run_check
from stella_conform.generators.runs import Run
from stella_conform.schemas.vocabulary import Vocabulary

REPO = Path(__file__).resolve().parents[3]
#: The kit's own sources (the links under src/stella_conform name these folders).
SOURCES = ("conformance", "generators", "schemas", "adapters", "src/stella_conform")
#: Where the names are the kinds' own business.
KINDS_PACKAGE = REPO / "conformance" / "kinds"
KIND_NAMES = frozenset({"stream", "envelope", "scenario", "journal"})
#: An expression about an input kind.
_ABOUT_A_KIND = re.compile(r"\b(kind|kinds|input|input_kind|PROFILE_INPUT)\b")


def _is_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in KIND_NAMES


def _holds_name(node: ast.AST) -> bool:
    """A kind's name, or a tuple, list or set literal holding one."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_is_name(e) for e in node.elts)
    return _is_name(node)


def _only_names(elements: list[ast.expr | None]) -> bool:
    return len(elements) >= 2 and all(e is not None and _is_name(e) for e in elements)


def switches(source: str, filename: str = "<source>") -> Iterator[tuple[int, str]]:
    """Each place in ``source`` that switches on an input kind by its name."""
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            named = [o for o in operands if _holds_name(o)]
            others = [o for o in operands if not _holds_name(o)]
            if named and any(_ABOUT_A_KIND.search(ast.unparse(o)) for o in others):
                yield node.lineno, ast.unparse(node)
        elif isinstance(node, ast.Dict) and _only_names(node.keys):
            yield node.lineno, "a table keyed by kind names: " + ast.unparse(node)[:80]
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)) and _only_names(list(node.elts)):
            yield node.lineno, "a list of kind names: " + ast.unparse(node)[:80]
        elif isinstance(node, ast.Match) and _ABOUT_A_KIND.search(ast.unparse(node.subject)):
            for case in node.cases:
                pattern = case.pattern
                if isinstance(pattern, ast.MatchValue) and _is_name(pattern.value):
                    yield case.pattern.lineno, "match on a kind: " + ast.unparse(node.subject)


def kit_sources() -> Iterator[Path]:
    """The kit's Python files outside the kinds package, each once (not through a link)."""
    for top in SOURCES:
        for path in sorted((REPO / top).rglob("*.py")):
            if any(p.is_symlink() for p in (path, *path.parents) if REPO in p.parents):
                continue
            if KINDS_PACKAGE in path.parents:
                continue
            yield path


def test_no_string_switch_on_the_input_kind_outside_the_kinds() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}: {text}"
        for path in kit_sources()
        for line, text in switches(path.read_text(encoding="utf-8"), str(path))
    ]
    assert not found, "switch on the input kind outside conformance/kinds:\n" + "\n".join(found)


def test_the_kit_sources_are_read() -> None:
    names = {p.relative_to(REPO).as_posix() for p in kit_sources()}
    assert "conformance/checks/model.py" in names
    assert "src/stella_conform/pytest_plugin.py" in names
    assert not any(n.startswith("conformance/kinds/") for n in names)


@pytest.mark.parametrize(
    "source",
    [
        'if case.kind == "envelope":\n    pass',
        'x = check.input != "stream"',
        'x = entry["kind"] in ("stream", "journal")',
        'x = PROFILE_INPUT[p] == "stream"',
        'x = {"envelope": 1, "journal": 2}.get(check.input, 0)',
        'CACHED = ("stream", "envelope", "journal")',
        'match case.kind:\n    case "scenario":\n        pass',
    ],
)
def test_a_switch_on_the_kind_is_found(source: str) -> None:
    assert list(switches(source))


@pytest.mark.parametrize(
    "source",
    [
        'x = "stream" in doc',  # a scenario document's key
        'x = {k: v for k, v in d.items() if k not in ("stream", "stream_text")}',
        'x = check.profile == "envelope"',  # a profile, not a kind
        "x = KINDS[case.kind].cached",
        "x = graded.kind != check.input",  # two kinds compared, no name
    ],
)
def test_what_is_not_a_switch_on_the_kind(source: str) -> None:
    assert not list(switches(source))


# ---------------------------------------------------------------------- a toy kind


@dataclass(frozen=True)
class ToyCase:
    """A generated toy input: its lines."""

    words: tuple[str, ...]


class ToyKind(InputKind):
    """Lines of words, written whole; a line ``BAD`` makes the input one to reject."""

    name = "toy"
    suffix = ".toy.txt"
    fixture_folder = "toys"
    expected_keys = ("verdict", "bad_line")

    def load(
        self, path: Path, vocab: Vocabulary | None = None, data: bytes | None = None
    ) -> GradedCase | None:
        text = path.read_bytes() if data is None else data
        name = path.name.removesuffix(self.suffix)
        return GradedCase(name, text, "fixture", vocab=vocab, kind=self.name)

    def reading(self, case: GradedCase) -> dict[str, Any]:
        lines = case.stream.decode().split("\n")
        bad = next((n for n, line in enumerate(lines, 1) if line == "BAD"), None)
        return {"verdict": "accept" if bad is None else "reject", "bad_line": bad}

    def expected_verdict(self, case: GradedCase) -> str:
        return str(self.reading(case)["verdict"])

    def saved_files(self, directory: Path, name: str) -> list[Path]:
        return [directory / f"{name}{self.suffix}"]

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
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{name}{self.suffix}"
        path.write_bytes(case.stream)
        return path

    def strategy(
        self, check: Check, vocab: Vocabulary, recordings: Sequence[Run] = ()
    ) -> SearchStrategy[Any] | None:
        words = st.sampled_from(("ok", "fine", "BAD"))
        return st.lists(words, min_size=1, max_size=6).map(lambda w: ToyCase(tuple(w)))

    def owns_generated(self, case: Any) -> bool:
        return isinstance(case, ToyCase)

    def graded(
        self, case: Any, vocab: Vocabulary | None = None, reads: frozenset[str] | None = None
    ) -> GradedCase:
        text = "\n".join(case.words).encode()
        return GradedCase("generated", text, "generated", vocab=vocab, kind=self.name)


def toy_verdict(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """The toy check's judge: the client's verdict is the oracle's."""
    if obs.verdict == case.expected_verdict:
        return Judgment("pass")
    return Judgment("fail", f"expected {case.expected_verdict}, client {obs.verdict}")


TOY_CHECK = Check(
    "T1.bad-line-rejected",
    "rejects a toy input holding a BAD line",
    "T1",
    "toy-verdict",  # type: ignore[arg-type]  # a judge the kit does not know: the toy's
    fixtures=("plain", "bad_second"),
    valid_runs=True,
    profile="toy",
    why="A toy input holding a line BAD is rejected; any other is accepted.",
)

CONFORMING = """\
import sys
lines = sys.stdin.read().split("\\n")
sys.exit(1 if "BAD" in lines else 0)
"""
#: Accepts everything: the toy check fails it.
BROKEN = "import sys\nsys.stdin.read()\n"


@pytest.fixture
def toy() -> Iterator[InputKind]:
    """The toy kind, its profile and its judge registered for one test."""
    kind = KINDS.add(ToyKind())
    register_profile("toy", kind.name)
    register_judge("toy-verdict", toy_verdict)
    try:
        yield kind
    finally:
        unregister_judge("toy-verdict")
        unregister_profile("toy")
        KINDS.remove(kind.name)


def _graded(tmp_path: Path, client_source: str) -> Any:
    fixtures = tmp_path / "fixtures" / "toys"
    fixtures.mkdir(parents=True)
    (fixtures / "plain.toy.txt").write_bytes(b"ok\nfine")
    (fixtures / "bad_second.toy.txt").write_bytes(b"ok\nBAD\nfine")
    script = tmp_path / "client.py"
    script.write_text(client_source)
    config = SuiteConfig(
        client=Client(argv=(sys.executable, str(script)), mode="exit"),
        examples=8,
        failures_dir=tmp_path / "failures",
        database_dir=None,
        fixtures_dir=tmp_path / "fixtures",
    )
    return run_check(TOY_CHECK, config)


def test_a_toy_kind_registered_here_is_graded_end_to_end(toy: InputKind, tmp_path: Path) -> None:
    result = _graded(tmp_path, CONFORMING)
    assert (result.outcome, result.message) == ("pass", f"{result.cases} case(s)")
    assert result.cases > 2  # the two fixtures and generated cases


def test_the_toy_check_fails_a_client_that_breaks_it(toy: InputKind, tmp_path: Path) -> None:
    result = _graded(tmp_path, BROKEN)
    assert result.outcome == "fail", result.message
    failure = result.failures[0]
    assert failure.expected == {"verdict": "reject", "bad_line": failure.expected["bad_line"]}
    assert failure.expected["bad_line"] is not None
    saved = next(f for f in result.failures if f.source == "generated").saved
    assert saved is not None and saved.endswith(".toy.txt")
    again = KINDS.load(Path(saved))  # a saved case reads back as the toy kind's
    assert again.kind == "toy" and again.expected_verdict == "reject"


def test_a_registered_profile_is_chosen_like_the_kit_s_own(toy: InputKind) -> None:
    """Registered, the toy profile is one a client can be graded on; unregistered, the same
    choice is refused in the kit's words, and a second registration is refused."""
    from stella_conform.conformance.checks.claims import resolve_profiles
    from stella_conform.errors import SetupError

    assert profiles()[-1] == "toy"
    assert resolve_profiles(["toy"], None) == ("toy",)
    with pytest.raises(ValueError, match="registered already"):
        register_profile("toy", toy.name)
    with pytest.raises(ValueError, match="registered already"):
        register_judge("toy-verdict", toy_verdict)
    unregister_profile("toy")
    try:
        with pytest.raises(SetupError, match="unknown profile 'toy'"):
            resolve_profiles(["toy"], None)
    finally:
        register_profile("toy", toy.name)
