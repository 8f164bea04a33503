"""What the trace checks remember of a whole journal: the same answers in memory and on
disk, the largest tables moved first, and a folder that cannot take them said plainly."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stella_conform.conformance.checks.trace_keys import MEMORY, Keys, KeysUnavailable

#: Keys as a journal may hold them: any code point, lone surrogates included.
KEY = st.text(st.characters(categories=["Cs", "Ll", "Lo", "Nd", "Zs", "Cc"]), max_size=4)
VALUE = st.tuples(
    st.one_of(st.none(), st.integers(0, 2**64 - 1)), st.one_of(st.none(), st.text(max_size=8))
)
OP = st.one_of(
    st.tuples(st.just("put"), KEY, VALUE),
    st.tuples(st.just("discard"), KEY),
    st.tuples(st.just("get"), KEY),
    st.tuples(st.just("put_many"), st.lists(st.tuples(KEY, VALUE), max_size=6)),
    st.tuples(st.just("get_many"), st.lists(KEY, max_size=6)),
    st.tuples(st.just("first"), st.integers(0, 6)),
    st.tuples(st.just("clear")),
)


def _play(memory: int, ops: list[tuple[Any, ...]]) -> list[Any]:
    """What each operation answers on a table of ``Keys(memory)``, and at the end the
    smallest keys of a second table filled beside it."""
    answers: list[Any] = []
    with Keys(memory) as keys:
        table, other = keys.table(), keys.table()
        for op in ops:
            if op[0] == "put":
                _, key, value = op
                (table.add if table.get(key) is None else table.replace)(key, value)
                other.add(str(len(answers)), value)
            elif op[0] == "put_many":
                new = {key: value for key, value in op[1] if table.get(key) is None}
                table.add_many(list(new.items()))
            elif op[0] == "discard":
                table.discard(op[1])
            elif op[0] == "get":
                answers.append(table.get(op[1]))
            elif op[0] == "get_many":
                answers.append(table.get_many(op[1]))
            elif op[0] == "first":
                answers.append(table.first(op[1]))
            else:
                table.clear()
            answers.append(len(table))
        answers.append(other.first(3))
    return answers


def _model(ops: list[tuple[Any, ...]]) -> list[Any]:
    """The same answers from a dict (for the first table)."""
    answers: list[Any] = []
    rows: dict[str, Any] = {}
    for op in ops:
        if op[0] == "put":
            rows[op[1]] = op[2]
        elif op[0] == "put_many":
            new = {key: value for key, value in op[1] if key not in rows}
            rows.update(new)
        elif op[0] == "discard":
            rows.pop(op[1], None)
        elif op[0] == "get":
            answers.append(rows.get(op[1]))
        elif op[0] == "get_many":
            answers.append({key: rows[key] for key in op[1] if key in rows})
        elif op[0] == "first":
            answers.append(sorted(rows)[: op[1]])
        else:
            rows.clear()
        answers.append(len(rows))
    return answers


@settings(max_examples=150)
@given(st.lists(OP, max_size=40))
def test_a_table_answers_alike_in_memory_and_on_disk(ops: list[tuple[Any, ...]]) -> None:
    in_memory = _play(MEMORY, ops)
    assert _play(0, ops) == in_memory
    assert in_memory[:-1] == _model(ops)


def test_past_the_budget_the_largest_table_moves_to_disk_first() -> None:
    with Keys(50_000) as keys:
        small, large = keys.table(), keys.table()
        small.add("open", (1,))
        for n in range(400):
            large.add(f"id-{n}", (n, None))
        assert large.rows is None and small.rows is not None  # only the large one moved
        assert keys.folder is not None and Path(keys.folder).is_dir()
        assert large.get("id-7") == (7, None) and len(large) == 400
        folder = keys.folder
    assert not Path(folder).exists()  # removed with the tables


def test_a_temporary_folder_that_cannot_be_made_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "no-such-folder"
    monkeypatch.setattr(tempfile, "tempdir", str(missing))
    with Keys(0) as keys, pytest.raises(KeysUnavailable) as raised:
        keys.table().add("a", (1,))
    assert raised.value.where == str(missing)
    assert raised.value.cause == "No such file or directory"
