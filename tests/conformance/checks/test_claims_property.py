"""No true claim makes a conforming client fail, crash or abort, in any mode, under any
bundled vocabulary.

Random claims (any stella's type names and two no stella writes, envelope parts, summary
fields, summary-only) and a random mode and vocabulary, made by a conforming reference
client they are true of: the Python reader narrowed to exactly the types claimed
(``claimed/narrowed_client.py`` beside this file), or the Node.js reference client or the
Python envelope reader, which know today's types (so they claim them, or nothing under today's
vocabulary).  A few random checks of its profiles are graded, in process, on one fixture
and one generated case each.  Every one passes or skips, except a check the claims
themselves fail (:meth:`Claims.unmet`: a field named in ``computes`` whose event types the
client does not know, in a mode that reports a summary); and that check says so first.
``--mode exit --knows tool_start,tool_result`` on R4.legacy-spelling-fits is one of its
examples: knows without computes claims no field computed.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path
from unittest import mock

from conftest import ADAPTERS, NODE_REFERENCE
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from stella_conform.conformance.checks import BY_ID, CATALOGUE, Check
from stella_conform.conformance.checks.claims import COMPUTES, READS, Claims, claims_from
from stella_conform.conformance.clients.runner import Client, resolve_client
from stella_conform.conformance.suite import SuiteConfig, generated, run_check, shared_sessions
from stella_conform.schemas.vocabulary import Vocabulary, bundled_names, bundled_types

#: How a failure for a field computed without its event types begins (Claims.unmet).
UNMET = re.compile(r"the client computes (\w+) but does not know ([\w ]+?), which")
NARROWED = Path(__file__).parent / "claimed" / "narrowed_client.py"
VOCABULARIES = tuple(bundled_names())
MODES = ("exit", "report", "persistent")
#: Every type some stella writes, and two names none does (a typo is only a warning).
NAMES = sorted(bundled_types() | {"txt", "quantum_reticulation"})
#: The checks of each reference client's profiles (the Node.js one is a reader only).
PYTHON_CHECKS = tuple(c for c in CATALOGUE if c.profile in ("reader", "dashboard"))
NODE_CHECKS = tuple(c for c in PYTHON_CHECKS if c.profile == "reader")
#: The envelope reader, with what it claims to read drawn (parts, events' types).
ENVELOPE_REFERENCE = (sys.executable, str(ADAPTERS / "python" / "envelope_client.py"))
ENVELOPE_CHECKS = tuple(c for c in CATALOGUE if c.profile == "envelope")


def _some(names: tuple[str, ...] | list[str]) -> st.SearchStrategy[list[str] | None]:
    return st.none() | st.lists(st.sampled_from(names), min_size=1, unique=True)


@st.composite
def honest_runs(draw: st.DrawFn) -> tuple[tuple[str, ...], str, str, Claims, list[Check]]:
    """A client's command, a mode, a stella (a bundled name), claims true of the client,
    and a few checks of its profiles."""
    name = draw(st.sampled_from(VOCABULARIES))
    stella = Vocabulary.bundled(name)
    clients = ["python", "envelope", *(["node"] if shutil.which("node") else [])]
    client = draw(st.sampled_from(clients))
    if client == "python":
        knows = draw(_some(NAMES))
        # claiming nothing is knowing the column's types: it is narrowed to those then
        # (not to both stellas' types: an older column's client never saw turn_complete)
        narrowed = knows if knows is not None else sorted(stella.written)
        argv = (sys.executable, str(NARROWED), "--knows", ",".join(narrowed))
    else:  # it knows today's types: it says so, or nothing where that is the column's
        today = sorted(Vocabulary.default().written)
        typos = draw(st.lists(st.sampled_from(["txt", "quantum_reticulation"]), unique=True))
        default = stella.ident == Vocabulary.default().ident
        knows = draw(st.sampled_from([None, today + typos] if default else [today + typos]))
        argv = NODE_REFERENCE if client == "node" else ENVELOPE_REFERENCE
    whole = client == "python" and draw(st.booleans())  # (the others report every line)
    argv += ("--summary-only",) if whole else ()
    reads = draw(_some(READS))
    if client == "envelope" and reads is not None:
        # the envelope reader takes its tokens from the events array and its paths from
        # the files_touched payload of every shape it reads: a claim without those parts
        # is not true of it (it reports tokens it said it does not read: E.usage-read
        # rightly fails it, 'input_tokens: expected null, client 0'); which shapes it
        # claims (run, pipeline, query) stays random
        reads = sorted({*reads, "events", "files_touched"})
    claims = claims_from(
        knows=knows,
        reads=reads,
        computes=draw(_some(COMPUTES)),
        summary_only=whole,
        vocab=stella,
        where="command line",
    )
    pool = {"python": PYTHON_CHECKS, "node": NODE_CHECKS, "envelope": ENVELOPE_CHECKS}[client]
    typed = [c for c in pool if c.types] or list(pool)  # where claims decide most: one in two
    checks = draw(st.lists(st.sampled_from(typed) | st.sampled_from(pool), min_size=1, max_size=3))
    checks = list(dict.fromkeys(checks))
    return argv, draw(st.sampled_from(MODES)), name, claims, checks


def _graded(argv: tuple[str, ...], mode: str, name: str, claims: Claims,
            checks: list[Check], seed: int) -> None:  # fmt: skip
    # one example a check, and the strata too (a default run grades them first, under the
    # same claims): a stratum that ignored a claim would fail an honest client here
    strata_at_any_size = mock.patch.object(generated, "STRATA_FROM_EXAMPLES", 1)
    with tempfile.TemporaryDirectory() as tmp, shared_sessions(), strata_at_any_size:
        config = SuiteConfig(
            Client(resolve_client(argv), mode, timeout=10.0),  # type: ignore[arg-type]
            examples=1,
            seed=seed,
            wire_schema=name,
            database_dir=None,
            failures_dir=Path(tmp),
            shrink_budget=0,
            fixtures_per_check=1,
        ).with_claims(claims)
        for check in checks:
            result = run_check(check, config)
            where = (check.id, mode, name, claims.to_json(), result.message)
            if result.outcome != check.failing_outcome:
                assert result.outcome in ("pass", "skip"), where
                continue
            # a failure only of what the client said it computes, in a mode it reports it
            assert mode != "exit" and claims.computes is not None, where
            said = UNMET.findall(result.message)
            assert said, where
            for computed, unknown in said:
                assert computed in claims.computes, where
                assert not set(unknown.split(" or ")) & (claims.knows or set()), where


def _narrowed(knows: str, mode: str, check_id: str) -> tuple[object, ...]:
    claims = claims_from(
        knows=knows, reads=None, computes=None, summary_only=None,
        vocab=Vocabulary.default(), where="command line",
    )  # fmt: skip
    argv = (sys.executable, str(NARROWED), "--knows", knows)
    return (argv, mode, "stella-default", claims, [BY_ID[check_id]])


def _claiming_nothing(name: str, mode: str, check_id: str) -> tuple[object, ...]:
    written = ",".join(sorted(Vocabulary.bundled(name).written))
    argv = (sys.executable, str(NARROWED), "--knows", written)
    return (argv, mode, name, Claims(), [BY_ID[check_id]])


def _envelope_reading(reads: list[str], name: str, check_id: str) -> tuple[object, ...]:
    claims = claims_from(
        knows=sorted(Vocabulary.default().written), reads=reads, computes=None,
        summary_only=False, vocab=Vocabulary.bundled(name), where="command line",
    )  # fmt: skip
    return (ENVELOPE_REFERENCE, "report", name, claims, [BY_ID[check_id]])


@settings(max_examples=10, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(honest_runs(), st.integers(0, 2**16))
# knows without computes, in exit mode and with a hello's three types
@example(_narrowed("tool_start,tool_result", "exit", "R4.legacy-spelling-fits"), 0)
@example(_narrowed("error,run_complete,text", "persistent", "D.stages-per-scope"), 0)
# a client claiming nothing in the older stella's column (speed, coord 21:07)
@example(_claiming_nothing("stella-older", "report", "D.turns-counted"), 0)
@example(_claiming_nothing("stella-default", "report", "R3.unknown-counted"), 0)
# the envelope reader claiming run envelopes (and the parts inside them it reads), in the
# older stella's column (scale, coord 03:08: drawn once without 'events', a false claim)
@example(_envelope_reading(["run", "events", "files_touched"], "stella-older", "E.usage-read"), 0)
def test_true_claims_never_fail_a_conforming_client(
    run: tuple[tuple[str, ...], str, str, Claims, list[Check]], seed: int
) -> None:
    _graded(*run, seed)
