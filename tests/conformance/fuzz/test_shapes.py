"""What the fuzzer sees of its own inputs: line kinds, pairs of them, and a case's parts."""

from __future__ import annotations

import json
import random
from collections import Counter

from hypothesis.control import BuildContext
from hypothesis.internal.conjecture.data import ConjectureData

from stella_conform.conformance.checks import BY_ID
from stella_conform.conformance.fuzz.shapes import line_kind, shape_features
from stella_conform.conformance.suite import check_strategy
from stella_conform.generators.engine import choices
from stella_conform.schemas.vocabulary import Vocabulary

VOCAB = Vocabulary.default()


def kind(event: object) -> str:
    return line_kind(json.dumps(event).encode(), VOCAB)


def test_a_line_kind_is_its_type_and_the_fields_it_carries() -> None:
    failed = {"type": "tool_result", "call_id": "c", "duration_ms": 1, "output": {"error": {}}}
    ok = {**failed, "output": {"ok": {"content": ""}}}
    assert kind(failed) != kind(ok)
    assert kind({"type": "text", "text": "a"}) != kind({"type": "text", "delta": "a"})
    # when, random extra names and the values themselves say nothing about the shape
    assert kind({"type": "text", "text": "a", "ts": 5}) == kind({"type": "text", "text": "b"})
    assert kind({"type": "text", "text": "a", "x_1": 1}) == kind(
        {"type": "text", "text": "a", "y": 2}
    )
    assert kind({"type": "x_new", "text": "a"}) == kind({"type": "x_other"}) == "unknown"
    assert line_kind(b"{not json", VOCAB) == "not-json"
    assert line_kind(b"[1]", VOCAB) == "not-object"


def test_shape_features_are_kinds_and_neighbouring_pairs() -> None:
    a = b'{"type":"text","text":"a"}\n'
    b = b'{"type":"x_new"}\n'
    ab = shape_features(a + b, VOCAB)
    ba = shape_features(b + a, VOCAB)
    assert {f for f in ab if len(f) == 2} == {f for f in ba if len(f) == 2}  # the same kinds
    assert ab != ba  # in another order
    assert shape_features(a + b"\n  \n" + b, VOCAB) == ab  # blank lines are not a kind


def test_the_parts_of_a_generated_stream_are_its_run_then_its_mutations() -> None:
    """Cutting at the first part keeps the valid run and draws its mutations afresh."""
    strategy = check_strategy(BY_ID["R4.legacy-spelling-fits"], VOCAB)
    data = ConjectureData(random=random.Random(7))
    with BuildContext(data, is_final=False, wrapped_test=lambda: None):
        case = data.draw(strategy)
    data.freeze()
    parts, _ = choices.parts(data)
    assert parts and parts == tuple(sorted(parts)) and 0 < parts[0] < len(data.choices)
    again = ConjectureData(random=random.Random(8), prefix=data.choices[: parts[0]])
    with BuildContext(again, is_final=False, wrapped_test=lambda: None):
        other = again.draw(strategy)
    assert other.run is not None and case.run is not None
    assert other.run.events == case.run.events


def test_dropping_a_piece_of_the_mutation_list_drops_that_mutation() -> None:
    """The structure-aware 'drop one piece': of a case with two mutations, one of its
    pieces is one of them, and replaying the case without it keeps the other."""
    strategy = check_strategy(BY_ID["R4.legacy-spelling-fits"], VOCAB)
    rnd = random.Random(0)
    for _ in range(200):
        data = ConjectureData(random=rnd)
        with BuildContext(data, is_final=False, wrapped_test=lambda: None):
            case = data.draw(strategy)
        data.freeze()
        if len(case.mutations) == 2:
            break
    else:
        raise AssertionError("no case with two mutations in 200 draws")
    _, pieces = choices.parts(data)
    seen = set()
    for start, end in pieces:
        prefix = (*data.choices[:start], *data.choices[end:])
        again = ConjectureData(random=random.Random(1), prefix=prefix)
        with BuildContext(again, is_final=False, wrapped_test=lambda: None):
            other = again.draw(strategy)
        seen.add(other.mutations)
        if len(other.mutations) == 1:
            assert other.run is not None and case.run is not None
            assert other.run.events == case.run.events  # the run is untouched
    assert any(len(m) == 1 for m in seen), seen


def test_an_input_whose_rare_thing_no_mutant_reaches_again_stops_drawing_picks() -> None:
    """The client's start-up code is reached by its first case only: that input must not
    keep most of the picks for ever."""
    from stella_conform.conformance.fuzz import Arm, Entry
    from stella_conform.conformance.fuzz.corpus import _weight

    arm = Arm.__new__(Arm)
    arm.hits = Counter({"start-up": 1, "common": 500, "rare": 20})
    first = Entry((), (), 1, reached=frozenset({"start-up", "common"}))
    lead = Entry((), (), 1, reached=frozenset({"rare", "common"}))
    assert _weight(arm, first) > _weight(arm, lead)  # new: worth a look
    first.picked, lead.picked = 100, 5
    assert _weight(arm, first) < _weight(arm, lead)  # a hundred mutants, never again


def test_inputs_that_start_from_a_recording_get_one_pick_in_eight() -> None:
    """With --seed-corpus, mutants of real recordings find new shapes at every turn; picked
    by their number they become most of the corpus (45 of 60 inputs, 77 of 129 picks by
    case 408 on the rule-3 deep client) and starve the generator's own structures (turns
    after the first, which no short recording has).  However many of the corpus they are,
    the inputs that start from a recording get the share of the picks that fresh runs
    give them."""
    from stella_conform.conformance.fuzz import Arm, Entry
    from stella_conform.conformance.fuzz.corpus import pick
    from stella_conform.conformance.store.recordings import (
        RECORDED_ONE_IN,
        drawing_recorded,
        load,
        recording_prefix,
    )
    from stella_conform.oracle.corpus import bundled_fixtures_dir

    recordings = load([bundled_fixtures_dir()], VOCAB).recordings
    strategy = check_strategy(BY_ID["R3.unknown-type-inert"], VOCAB, recordings)
    assert strategy is not None
    seen = []
    for prefix in (recording_prefix(0), (0,)):  # a recording's case, a generated one
        data = ConjectureData(random=random.Random(0), prefix=prefix)
        drawing_recorded(reset=True)
        with BuildContext(data, is_final=False, wrapped_test=lambda: None):
            data.draw(strategy)
        seen.append(drawing_recorded(reset=True))
    assert seen == [True, False]

    arm = Arm.__new__(Arm)
    arm.hits, arm.cases, arm.weighed_at = Counter({"x": 1}), 0, 0
    arm.corpus = [Entry((i,), (), 1, reached=frozenset({"x"})) for i in range(60)]
    for entry in arm.corpus[:45]:
        entry.recorded = True
    arm.weights = [1.0] * 60
    rnd = random.Random(1)
    picks = Counter(pick(arm, rnd, bool(recordings)).recorded for _ in range(4000))
    assert abs(picks[True] / 4000 - 1 / RECORDED_ONE_IN) < 0.03, picks
