"""Strata (generators/strata.py): the cases every run of the default size grades for each
mutation of a check, besides its random examples.  They must hold every rare production of
the grammar audit in every run, and must leave the random examples exactly as they were."""

from __future__ import annotations

import shutil
import sys
from typing import Any

import pytest

from stella_conform.conformance.checks import BY_ID, select
from stella_conform.conformance.clients.runner import Client
from stella_conform.conformance.reach import _drawn
from stella_conform.conformance.suite import (
    SuiteConfig,
    check_strata,
    check_strategy,
    random_examples,
)
from stella_conform.generators.grammar import PRODUCTIONS
from stella_conform.generators.mutations import CORRUPT_FAMILIES
from stella_conform.schemas.vocabulary import Vocabulary

#: Per profile, the productions its strata need not hold: ones nearly every generated case
#: holds (a literal, an empty object: the random examples reach them on every seed, the
#: table in docs/generators.md shows it), or, for journals, each variant's simplest case
#: only.  Every other bold cell of the audit is in the strata, so in every default run.
LEFT_TO_THE_DRAWS: dict[str, set[str]] = {
    "reader": {"lit.true-false", "nest.empty-object", "frame.blank-whitespace", "frame.blank-cr"},
    "dashboard": {"lit.true-false", "lit.null", "nest.empty-object", "nest.empty-array"},
    "recorder": {"lit.true-false", "nest.empty-object", "nest.empty-array"},
    "envelope": {
        "str.empty", "num.negative", "num.exponent", "num.exponent-upper", "num.exponent-plus",
        "obj.key-order",
    },
    "trace": {
        "ws.tab-between", "ws.cr-between", "ws.inside-brackets", "ws.before-value",
        "ws.after-value", "str.escape-solidus", "str.escape-u-ascii", "str.escaped-key",
        "str.escaped-type", "num.fraction", "lit.true-false", "obj.key-order", "frame.crlf",
        "frame.blank-empty", "frame.blank-whitespace",
    },
}  # fmt: skip


def _strata_productions(profile: str) -> set[str]:
    vocab = Vocabulary.default()
    found: set[str] = set()
    for check in select((profile,)):
        if check.profile == profile:
            for case in check_strata(check, vocab):
                found |= _drawn(check, case).productions
    return found


@pytest.mark.parametrize("profile", sorted(LEFT_TO_THE_DRAWS))
def test_the_strata_hold_every_rare_production_of_the_profile(profile: str) -> None:
    """The cells some seeds' random examples missed (num.negative-zero-float in recorder
    runs: 5 of 20) are in every run's strata."""
    needed = {p.id for p in PRODUCTIONS if profile in p.profiles}
    missing = needed - _strata_productions(profile) - LEFT_TO_THE_DRAWS[profile]
    assert not missing, sorted(missing)


def test_the_strata_hold_every_raw_control_character_the_corrupt_lines_have() -> None:
    """U+001F (jq 1.6 takes it) and NUL (a shell's `read` drops it) are in
    every run's R6.corrupt-line-not-last cases."""
    raw = next(f for f in CORRUPT_FAMILIES if b'"a\tb"' in f[0])
    assert {b"\x1f", b"\x00"} <= {line[-4:-3] for line in raw}
    streams = [c.stream for c in check_strata(BY_ID["R6.corrupt-line-not-last"], _vocab())]
    for line in raw:
        assert any(line + b"\n" in s for s in streams), line


def _vocab() -> Vocabulary:
    return Vocabulary.default()


def test_the_strata_leave_the_random_examples_as_they_were() -> None:
    """A run grades the strata first, then the very cases the seed draws without them
    (the property holds no strata: they are graded in a loop of their own)."""
    import stella_conform.conformance.suite as suite
    from stella_conform.conformance.checks import Judgment
    from stella_conform.conformance.suite import generated, grading

    check = BY_ID["R4.rejection-names-line"]
    strata = [case.stream for case in check_strata(check, _vocab())]
    assert len(strata) > 5
    config = SuiteConfig(client=Client(argv=("t",), mode="persistent"), database_dir=None)
    strategy = check_strategy(check, config.vocabulary())
    assert strategy is not None
    # the random examples as the kit draws them (generators/engine/examples.py), strata or not
    alone = [case for case, _ in random_examples(check, config, strategy)]
    graded: list[bytes] = []

    class Recording:
        def __init__(self, config: Any, check: Any) -> None:
            pass

        def run(self, case: Any) -> Any:
            graded.append(case.stream)
            return "observed"

        def close(self) -> None:
            pass

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grading, "CaseRunner", Recording)
        for room in (grading, generated):
            mp.setattr(room, "judge", lambda *a: Judgment("pass", ""))
        mp.setattr(suite.Pace, "stop_message", lambda self, obs: None)
        suite.run_check(check, config)
    generated = graded[-len(strata) - len(alone) :]
    assert generated == strata + [case.stream for case in alone]


def test_a_stratum_is_the_same_case_every_time() -> None:
    check = BY_ID["R1.valid-runs-accepted"]
    first = [c.stream for c in check_strata(check, _vocab())]
    assert first == [c.stream for c in check_strata(check, _vocab())]


def _engine_first_example(strategy: Any) -> Any:
    """What the first example of a ``@given`` run is: the engine's own simplest draw
    (``strata.simplest`` draws it without a run around each)."""
    from hypothesis import HealthCheck, Phase, given, settings

    found: list[Any] = []

    @settings(
        max_examples=1,
        phases=[Phase.generate],
        database=None,
        derandomize=True,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def take(value: Any) -> None:
        found.append(value)

    take()
    return found[0] if found else None


@pytest.mark.parametrize(
    "check_id", ["R4.rejection-names-line", "R1.line-by-line", "E.unknown-keys-ignored"]
)
def test_a_stratum_is_the_engine_s_first_example(check_id: str) -> None:
    from stella_conform.generators import strata
    from stella_conform.generators.cases import cases
    from stella_conform.generators.engine import picks
    from stella_conform.generators.envelopes import envelope_cases

    vocab = Vocabulary.default()
    check = BY_ID[check_id]
    for mutation in check.mutations:
        strategy = (
            envelope_cases(vocab, variants=(mutation,))
            if check.input == "envelope"
            else cases(vocab, always=(mutation,), max_mutations=0)
        )
        table = strata.ENVELOPE_STRATA if check.input == "envelope" else strata.STRATA
        for sites in ({}, *table.get(mutation, ())):
            with picks.forcing(sites):
                ours = strata.simplest(strategy)
                engines = _engine_first_example(strategy)
            assert (ours is None) == (engines is None)
            if ours is not None:
                assert (getattr(ours, "stream", None), getattr(ours, "data", None)) == (
                    getattr(engines, "stream", None),
                    getattr(engines, "data", None),
                ), (check_id, mutation, sites)


def _escape_kind(escape: bytes) -> str:
    """What kind of spelling a string escape is: JSON's own (must), ``\\/``, or a ``\\u``
    escape of ASCII, of non-ASCII in lower or upper case hex."""
    if escape == b"\\/":
        return "solidus"
    if not escape.startswith(b"\\u"):
        return "must"
    code = int(escape[2:], 16)
    if code < 0x20:
        return "must"
    if code < 0x80:
        return "u-ascii"
    hexes = escape[2:]
    if hexes.isdigit():
        return "u-digits"  # \u2603: the same in either case
    return "u-upper" if hexes != hexes.lower() else "u-lower"


@pytest.mark.parametrize("check_id", ["R1.valid-runs-accepted", "E.unknown-keys-ignored"])
def test_a_client_failing_one_spelling_is_shown_that_spelling_alone(check_id: str) -> None:
    """A failing stratum is shown whole (Hypothesis does not shrink an explicit example),
    so a text stratum holding every kind of escape at once would show a client refusing
    ``\\/`` a dozen spellings.  The first stratum holding a kind of escape (the one such a
    client fails on) holds that kind alone."""
    import re

    strata = check_strata(BY_ID[check_id], _vocab())
    datas = [getattr(c, "stream", None) or c.data for c in strata]
    kinds = [
        {_escape_kind(e) for e in re.findall(rb"\\(?:u[0-9a-fA-F]{4}|[^u])", d)} for d in datas
    ]
    for kind in ("must", "solidus", "u-ascii", "u-lower", "u-upper"):
        first = next((k for k in kinds if kind in k), None)
        assert first is None or first - {"u-digits"} == {kind}, (kind, first)
    assert sum(any(kind in k for k in kinds) for kind in ("must", "solidus", "u-upper")) == 3


#: A hand-written string lexer that knows JSON's escapes but ``\/`` (the solidus, which
#: JSON allows and hardly any writer uses): the text strata with \/ are what catch it.
NO_SOLIDUS_CLIENT = """\
import re, sys
sys.path.insert(0, %r)
from stella_reader import Adapter, Reader, main

class Lexer(Reader):
    def parse(self, content):
        if re.search(rb'(?<!\\\\)(?:\\\\\\\\)*\\\\/', content):
            raise ValueError("unknown escape")
        return super().parse(content)

class Broken(Adapter):
    reader_class = Lexer

main(Broken)
"""


def _solidus_client(folder: Any) -> list[str]:
    from conftest import ADAPTERS

    (folder / "lexer.py").write_text(NO_SOLIDUS_CLIENT % str(ADAPTERS / "python"))
    return [sys.executable, "lexer.py"]


def test_a_failing_stratum_is_shrunk_and_its_replay_works_from_a_copied_folder(
    tmp_path: Any,
) -> None:
    """A case a stratum finds is shrunk, not shown as drawn: its choices are handed to
    Hypothesis's shrinker (suite.shrink_drawn), so the case shown first is smaller than
    the stratum, still has the flaw, and replays from a copy of the folder; the stratum
    as drawn is listed after it."""
    import json
    import re
    import shutil

    from conftest import kit, replay_args

    ci = tmp_path / "ci"
    ci.mkdir()
    client = _solidus_client(ci)
    args = ["run", "--only", "R1.valid-runs-accepted", "--mode", "persistent", "-j", "1"]
    # seed 2: none of its 24 random examples spells \/ (seeds 0, 1 and 3 have one or two)
    args += ["--seed", "2", "--no-case-cache", "--no-database", "--json", "report.json"]
    quick = kit(*args, "--examples", "24", "--", *client, cwd=ci)
    assert quick.returncode == 0, quick.stdout + quick.stderr  # no stratum: not caught
    done = kit(*args, "--", *client, cwd=ci)
    assert done.returncode == 1, done.stdout + done.stderr
    (check,) = json.loads((ci / "report.json").read_text())["checks"]
    solidus = re.compile(rb"(?<!\\)(?:\\\\)*\\/")
    drawn = [
        c.stream
        for c in check_strata(BY_ID["R1.valid-runs-accepted"], _vocab())
        if solidus.search(c.stream)
    ]
    assert drawn, "no stratum spells \\/"
    shown, stream = check["failures"][0], (ci / check["failures"][0]["saved"]).read_bytes()
    assert solidus.search(stream), stream
    assert len(stream) < min(len(s) for s in drawn), (stream, drawn)
    # the stratum it was shrunk from is that flaw again: counted with it, not listed
    assert shown["alike"] == len(drawn) and len(check["failures"]) == 1, check["failures"]
    assert "(and 1 more stratum alike)" in done.stdout, done.stdout
    elsewhere = tmp_path / "laptop"
    shutil.copytree(ci, elsewhere)
    shutil.rmtree(ci)
    again = kit(*replay_args(shown["replay"]), cwd=elsewhere)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "unknown escape" in again.stdout, again.stdout


@pytest.mark.skipif(not shutil.which("jq"), reason="no jq")
def test_every_failing_stratum_of_a_check_is_listed(tmp_path: Any) -> None:
    """jq_read_loop.sh fails two strata of R6.corrupt-line-not-last for two
    flaws (jq 1.6 takes a raw U+001F; the shell's `read` drops the NUL).  Hypothesis stops
    at the first failing explicit example, which would leave the NUL unnamed: each flaw the
    strata show is listed, told apart by the character the reason names."""
    from conftest import ADAPTERS

    from stella_conform.conformance.suite import run_check

    client = Client(("sh", str(ADAPTERS / "broken" / "shell" / "jq_read_loop.sh")), mode="exit")
    config = SuiteConfig(client=client, database_dir=None, failures_dir=tmp_path / "failures")
    result = run_check(BY_ID["R6.corrupt-line-not-last"], config)
    assert result.outcome == "fail", result.message
    streams = [f.stream or b"" for f in result.failures]
    for raw in (b'{"type":"text","text":"a\x1fb"}\n', b'{"type":"text","text":"a\x00b"}\n'):
        assert any(s.startswith(raw) for s in streams), (raw, streams)
    assert result.failed_cases == len(result.failures) >= 2
    reasons = "\n".join(f.message for f in result.failures)
    assert "U+001F" in reasons and "U+0000" in reasons, reasons


#: A hand-written parser with two flaws: it refuses whitespace between tokens, and nesting
#: deeper than 8 (its recursion limit).
TWO_FLAWS_CLIENT = """\
import re, sys
sys.path.insert(0, %r)
from stella_reader import Adapter, Reader, main

class Lexer(Reader):
    def parse(self, content):
        bare = re.sub(rb'"(?:[^"\\\\]|\\\\.)*"', b'""', content)
        if re.search(rb'[ \\t]', bare.strip()):
            raise ValueError("unexpected whitespace")
        depth = most = 0
        for byte in bare:
            depth += (byte in b'{[') - (byte in b'}]')
            most = max(most, depth)
        if most > 8:
            raise ValueError("nesting too deep")
        return super().parse(content)

class Broken(Adapter):
    reader_class = Lexer

main(Broken)
"""


def test_each_flaw_the_strata_show_is_listed_once_with_a_count(tmp_path: Any) -> None:
    """A flaw (message and mutations) is listed once, with the strata alike counted on
    its line, so ten lines of one flaw (whitespace) cannot hide a second (nesting) behind
    '… and 2 more'."""
    import json

    from conftest import ADAPTERS, kit

    (tmp_path / "two.py").write_text(TWO_FLAWS_CLIENT % str(ADAPTERS / "python"))
    args = ["run", "--only", "R1.valid-runs-accepted", "--mode", "persistent", "-j", "1"]
    args += ["--no-case-cache", "--no-database", "--json", "r.json"]
    done = kit(*args, "--", sys.executable, "two.py", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    (check,) = json.loads((tmp_path / "r.json").read_text())["checks"]
    flaws = [(f["message"], tuple(f["mutations"])) for f in check["failures"]]
    generated = [
        k for k, f in zip(flaws, check["failures"], strict=True) if f["source"] == "generated"
    ]
    assert len(set(generated)) == len(generated), generated  # each flaw once
    assert any(f["alike"] for f in check["failures"]), check["failures"]
    listing = done.stdout.split("more failing case")[-1]
    assert "nesting too deep" in listing and "unexpected whitespace" in listing, done.stdout
    assert "strata alike)" in listing and "… and" not in listing, done.stdout


def test_a_stratum_that_times_out_ends_the_strata(tmp_path: Any) -> None:
    """A timeout ends the strata, as it ends shrinking: grading the rest would cost a
    --timeout for each stratum holding the same spelling (twice: a timeout is run again),
    five for a lexer that hangs on a \\u00 escape."""
    from conftest import ADAPTERS

    from stella_conform.conformance.suite import run_check

    (tmp_path / "hang.py").write_text(HANGS_CLIENT % str(ADAPTERS / "python"))
    client = Client((sys.executable, str(tmp_path / "hang.py")), mode="persistent", timeout=1)
    config = SuiteConfig(client=client, database_dir=None, failures_dir=tmp_path / "f")
    result = run_check(BY_ID["R1.valid-runs-accepted"], config)
    timed_out = [f for f in result.failures if "timeout" in f.message]
    assert timed_out and len(timed_out) <= 1 and result.failed_cases <= 2, [
        f.message for f in result.failures
    ]


#: A lexer that does not advance past a \u00XX escape (it loops forever there).
HANGS_CLIENT = """\
import sys
sys.path.insert(0, %r)
from stella_reader import Adapter, Reader, main

class Lexer(Reader):
    def parse(self, content):
        while b'\\\\u00' in content:
            pass
        return super().parse(content)

class Broken(Adapter):
    reader_class = Lexer

main(Broken)
"""


def _integral_floats_decide(vocab: Vocabulary, obj: Any) -> bool:
    """Whether reading ``1.0`` as the integer 1 changes whether a known object fits."""

    def ints(o: Any) -> Any:
        if isinstance(o, float) and o.is_integer():
            return int(o)
        if isinstance(o, dict):
            return {k: ints(x) for k, x in o.items()}
        return [ints(x) for x in o] if isinstance(o, list) else o

    tag = obj.get("type")
    if not isinstance(tag, str) or tag not in vocab.known:
        return False
    return vocab.fits(tag, vocab.normalize(tag, obj)) != vocab.fits(
        tag, vocab.normalize(tag, ints(obj))
    )


def test_no_case_holds_an_integral_float_where_an_integer_is_due() -> None:
    """``1.0`` in an integer field: JSON Schema (the wire schema's 2020-12) counts it an
    integer, serde_json (stella's reader) and Python's json a float, and the kit's fit
    (schemas/fit.py) a float.  The register holds it (``integral-float``: the fixture
    ``integral_float_count``), so a client taking either view passes wherever it meets one;
    the generated cases still hold none, so no other check's verdict turns on it (a case
    that did would grade the point, not the check's own rule).  The values mutations write
    where an integer is due are not integral floats, and no stratum holds one (nor,
    measured, 4,533 drawn cases of seeds 0-2, 91,721 known objects)."""
    import json

    from stella_conform.generators.mutations import TS_OUT_OF_RANGE, WRONG_VALUES

    for value in (*WRONG_VALUES["integer"], *TS_OUT_OF_RANGE):
        assert not (isinstance(value, float) and value.is_integer()), value
    line = json.loads(b'{"type":"step_usage","step":0,"model":"m","input_tokens":1.0,'
                      b'"output_tokens":2,"cached_input_tokens":0,"cost_usd":0.0,'
                      b'"duration_ms":5,"retries":0,"tool_calls":0}')  # fmt: skip
    vocab = _vocab()
    assert _integral_floats_decide(vocab, line)  # what the scan looks for, it finds

    def objects(value: Any) -> Any:
        if isinstance(value, dict):
            yield value
            for inner in value.values():
                yield from objects(inner)
        elif isinstance(value, list):
            for inner in value:
                yield from objects(inner)

    for check in BY_ID.values():
        for case in check_strata(check, vocab):
            data = getattr(case, "stream", None) or case.data
            for raw in data.split(b"\n") if b"\n" in data.strip() else [data]:
                try:
                    value = json.loads(raw)
                except ValueError:
                    continue
                for obj in objects(value):
                    assert not _integral_floats_decide(vocab, obj), (check.id, raw[:200])
