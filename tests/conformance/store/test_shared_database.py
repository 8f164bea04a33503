"""Fuzz workers sharing one Redis database; recordings as seeds; losing the server.

Against a real ``redis-server`` (Debian's, installed by ``.ci/run``), started here on a
free loopback port and stopped by its pid: nothing is left running.  Every session is
bounded by a number of cases (``--max-cases``) or ended by a first Ctrl-C once it has
written what the test waits for, never by how fast this machine is.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ADAPTERS, KIT, PY_REFERENCE, kit
from hypothesis.database import choices_to_bytes
from redis_server import RedisServer, need_redis_package, running_server
from toolchains import missing

from stella_conform.conformance.store.database import (
    ENTRY_CAP,
    KitDatabase,
    RedisSource,
    SafeDirectoryDatabase,
    SharedDatabase,
    example_database,
)

DEEP_R5 = (sys.executable, str(ADAPTERS / "deep" / "extra_fields_on_failed_tool.py"))
BROKEN_TORN = (sys.executable, str(ADAPTERS / "broken" / "fails_on_torn_final_line.py"))
R5 = ("--only", "R5.unknown-fields-ignored")

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _redis_package() -> None:
    need_redis_package()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    with running_server(tmp_path) as srv:
        yield srv


def _fuzz(cwd: Path, *args: str) -> subprocess.Popen[str]:
    cwd.mkdir(exist_ok=True)
    return subprocess.Popen(
        [str(KIT), "fuzz", "--for", "10m", "--json", "report.json", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out, err


def _report(cwd: Path) -> dict[str, object]:
    doc: dict[str, object] = json.loads((cwd / "report.json").read_text())
    return doc


@pytest.mark.slow
def test_a_failure_one_worker_found_is_replayed_by_a_run_in_a_third_folder(
    tmp_path: Path, server: RedisServer
) -> None:
    """Two fuzz workers (own seeds, own folders) share one Redis; a run elsewhere, with
    nothing local, replays what they found; the same run without the database does not."""
    workers = [
        _fuzz(
            tmp_path / f"worker{seed}",
            "--database",
            server.url,
            "--seed",
            str(seed),
            *R5,
            "--stop-on-first",
            "--max-cases",
            "3000",
            "--max-shrinks",
            "0",
            "--",
            *DEEP_R5,
        )
        for seed in (1, 2)
    ]
    results = [_finish(w) for w in workers]
    assert all(rc in (0, 1) for rc, _, _ in results), results
    assert any(rc == 1 for rc, _, _ in results), "neither worker found the deep bug"
    for seed in (1, 2):
        shared = _report(tmp_path / f"worker{seed}")["fuzz"]["shared"]  # type: ignore[index]
        assert shared["database"] == server.url and shared["lost"] is None
    # their reports merge: every worker's cases and failures, the worse outcome
    from conftest import kit_inline

    reports = [str(tmp_path / f"worker{seed}" / "report.json") for seed in (1, 2)]
    merged_path = tmp_path / "merged.json"
    merged = kit_inline("report", "merge", str(merged_path), *reports)
    assert merged.returncode == 1, merged.stdout + merged.stderr
    doc = json.loads(merged_path.read_text())
    each = [_report(tmp_path / f"worker{seed}")["fuzz"] for seed in (1, 2)]
    assert doc["fuzz"]["cases"] == sum(f["cases"] for f in each)  # type: ignore[index]
    assert doc["fuzz"]["workers"] == 2 and doc["seeds"] == [1, 2]
    assert len(doc["fuzz"]["failures"]) == sum(len(f["failures"]) for f in each)  # type: ignore[index]
    assert doc["checks"][0]["outcome"] in ("fail", "crash", "error")
    run_args = ("run", "--mode", "persistent", *R5, "--examples", "1", "--max-shrinks", "0")
    elsewhere = tmp_path / "pull-request"
    elsewhere.mkdir()
    without = kit(*run_args, "--", *DEEP_R5, cwd=elsewhere)
    assert without.returncode == 0, without.stdout + without.stderr
    third = tmp_path / "third"
    third.mkdir()
    replayed = kit(*run_args, "--database", server.url, "--", *DEEP_R5, cwd=third)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "reasoning lacks the fields of the failed call" in replayed.stdout


@pytest.mark.slow
def test_one_workers_corpus_is_where_the_other_starts(tmp_path: Path, server: RedisServer) -> None:
    """Worker B, started once worker A has shared inputs, keeps the ones new to it without
    running them (what A found is in their records) and mutates them (inputs reused); a
    worker whose features cannot be compared with A's (it measures no coverage) runs them
    instead; a worker on an empty database number receives none."""

    def worker(name: str, seed: str, cases: str, *more: str, url: str = server.url) -> Any:
        args = ("--database", url, "--seed", seed, "--only", "R6.*", "--max-cases", cases)
        return _fuzz(tmp_path / name, *args, *more, "--", *PY_REFERENCE)

    a = worker("a", "1", "600")
    server.wait_for_keys("*stella-fuzz.shared", a)
    b = worker("b", "2", "300")
    alone = worker("alone", "2", "300", url=server.url.replace("/0", "/1"))
    for proc in (a, b, alone):
        rc, out, err = _finish(proc)
        assert rc == 0, out + err
    rc, out, err = _finish(worker("other", "3", "100", "--no-feedback"))  # no coverage
    assert rc == 0, out + err
    sent = _report(tmp_path / "a")["fuzz"]["shared"]["sent"]  # type: ignore[index]
    shared = _report(tmp_path / "b")["fuzz"]["shared"]  # type: ignore[index]
    assert sent > 0
    assert shared["received"] > 0 and shared["adopted"] > 0
    assert shared["ran"] == 0, shared  # kept by their records: no case spent on them
    assert shared["reused"] > 0, shared  # cases mutated from A's inputs
    theirs = _report(tmp_path / "other")["fuzz"]["shared"]  # type: ignore[index]
    assert theirs["received"] > 0 and theirs["ran"] > 0, theirs
    nothing = _report(tmp_path / "alone")["fuzz"]["shared"]  # type: ignore[index]
    assert nothing["received"] == 0 and nothing["reused"] == 0
    # each worker's energy: one 24-byte record per input it mutated, naming the worker
    raw = server.client()
    records = [
        record
        for key in raw.scan_iter(match="*stella-fuzz.energy", count=1000)
        for record in raw.smembers(key)
    ]
    workers = {record[12:16].hex() for record in records}
    assert records and all(len(record) == 24 for record in records)
    names = {_report(tmp_path / w)["fuzz"]["shared"]["worker"] for w in ("a", "b", "other")}  # type: ignore[index]
    assert workers <= names


def test_a_failure_one_worker_found_reaches_the_others_at_once(
    tmp_path: Path, server: RedisServer
) -> None:
    """A bug worker A found is run by worker B at its next look at the shared database:
    B fails on it too, says whose find it is, saves it, and (--max-failures 1) stops
    hunting it instead of spending its budget finding it again."""
    bounds = ("--max-failures", "1", "--max-shrinks", "0", "--max-cases", "3000")
    a = _fuzz(tmp_path / "a", "--database", server.url, *R5, *bounds, "--", *DEEP_R5)
    rc, out, err = _finish(a)
    assert rc == 1, out + err
    found = _report(tmp_path / "a")["fuzz"]["failures"]  # type: ignore[index]
    assert found and not found[0]["from_shared_failure"]
    b = _fuzz(tmp_path / "b", "--database", server.url, "--seed", "7", *R5, *bounds, "--", *DEEP_R5)
    rc, out, err = _finish(b)
    assert rc == 1, out + err
    fuzz = _report(tmp_path / "b")["fuzz"]
    assert fuzz["shared"]["failures"] == 1 and fuzz["shared"]["ran"] >= 1, fuzz  # type: ignore[index]
    (theirs,) = fuzz["failures"]  # type: ignore[index]
    assert theirs["from_shared_failure"] and theirs["check"] == found[0]["check"]
    assert theirs["saved"] and (tmp_path / "b" / theirs["saved"]).exists()
    assert fuzz["cases"] <= 3, fuzz  # type: ignore[index]
    assert "another worker's find, failing here too" in out


@pytest.mark.slow
def test_a_second_worker_on_the_same_seed_is_warned(tmp_path: Path, server: RedisServer) -> None:
    """Two live workers with one seed and the same checks draw the same cases: the one
    that comes second says so (the seed's default, 0, makes it the easy mistake); another
    seed, or the same seed once the first worker has gone, is no warning."""

    def worker(name: str, *args: str) -> subprocess.Popen[str]:
        return _fuzz(tmp_path / name, "--database", server.url, "--only", "R6.*", *args)

    def briefly(name: str, *seed: str) -> tuple[int, str, str]:
        return _finish(worker(name, *seed, "--max-cases", "30", "--", *PY_REFERENCE))

    first = worker("first", "--max-cases", "100000", "--", *PY_REFERENCE)
    try:
        server.wait_for_keys("*stella-fuzz.workers", first)
        assert first.poll() is None
        twin, other = briefly("twin"), briefly("other", "--seed", "1")
    finally:
        first.send_signal(signal.SIGINT)  # a first Ctrl-C: finish and report
        rc, out, err = _finish(first)
    assert rc == 0, out + err
    rc, out, err = twin
    assert rc == 0, out + err
    assert "other fuzz worker(s)" in err and "give each worker its own --seed" in err, err
    assert _report(tmp_path / "twin")["fuzz"]["shared"]["same_seed_workers"] == 1  # type: ignore[index]
    assert "had this worker's seed and checks" in out
    rc, out, err = other
    assert rc == 0 and "--seed" not in err, out + err
    assert _report(tmp_path / "other")["fuzz"]["shared"]["same_seed_workers"] == 0  # type: ignore[index]
    # each worker took its name off the roll as it finished: a later one is alone
    assert not list(server.client().scan_iter(match="*stella-fuzz.workers"))
    rc, out, err = briefly("later")
    assert rc == 0 and "--seed" not in err, out + err


def test_losing_the_server_mid_fuzz_is_a_warning_and_nothing_is_lost(
    tmp_path: Path, server: RedisServer
) -> None:
    """The server stops while the worker fuzzes: the worker warns at its next look and
    goes on; what it then finds is kept locally and reported as not shared.

    Nothing here waits on time: the worker's budget of cases is one it cannot finish
    before the stop (it is ended by a first Ctrl-C once it has warned), and the warning
    is waited for as a line the worker writes, so a fast machine takes the same path as
    a slow one.
    """
    only = ("--only", "R6.torn-final-line")
    worker = tmp_path / "worker"
    args = ("--database", server.url, *only, "--max-cases", "1000000", "--", *BROKEN_TORN)
    proc = _fuzz(worker, *args)
    stderr = _Lines(proc)
    try:
        server.wait_for_keys("*stella-fuzz.shared", proc)
        assert proc.poll() is None, "the worker ended before it shared anything"
        server.stop()
        warned = stderr.wait_for("going on with the local database")
        assert proc.poll() is None  # it went on after the warning
    finally:
        proc.send_signal(signal.SIGINT)  # a first Ctrl-C: finish, grade and report
        rc, out, err = stderr.finish()
    assert warned, err
    assert rc == 1, out + err  # the bug, found and reported: not a usage or set-up error
    assert "does not answer" in err
    doc = _report(worker)
    fuzz = doc["fuzz"]
    shared = fuzz["shared"]  # type: ignore[index]
    assert fuzz["stopped"] == "interrupted", fuzz  # type: ignore[index]
    assert shared["lost"] is not None and not shared["lost"]["answered_again"]
    assert shared["not_shared"].get("failures", 0) > 0, shared
    assert "not shared (kept in the local database only)" in out
    # nothing found is lost: the local database replays the failure
    again = kit(
        "run", "--mode", "persistent", *only, "--examples", "1", "--", *BROKEN_TORN, cwd=worker
    )
    assert again.returncode == 1, again.stdout + again.stderr


class _Lines:
    """A running worker's stderr read as it comes (its stdout drained beside it), so a
    test can wait for a line it writes rather than for time."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.err: list[str] = []
        self.out: list[str] = []
        self.changed = threading.Condition()
        self.readers = [
            threading.Thread(target=self._read, args=(proc.stderr, self.err), daemon=True),
            threading.Thread(target=self._read, args=(proc.stdout, self.out), daemon=True),
        ]
        for reader in self.readers:
            reader.start()

    def _read(self, stream: Any, into: list[str]) -> None:
        for line in stream:
            with self.changed:
                into.append(line)
                self.changed.notify_all()
        with self.changed:
            into.append("")  # the end
            self.changed.notify_all()

    def wait_for(self, text: str, timeout: float = 300.0) -> bool:
        """Whether the worker wrote ``text`` on stderr before it ended (or ``timeout``,
        a guard against a hang only)."""
        with self.changed:
            return self.changed.wait_for(
                lambda: any(text in line for line in self.err) or "" in self.err, timeout
            ) and any(text in line for line in self.err)

    def finish(self) -> tuple[int, str, str]:
        try:
            self.proc.wait(timeout=600)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        for reader in self.readers:
            reader.join(timeout=60)
        return self.proc.returncode, "".join(self.out), "".join(self.err)


# ---------------------------------------------------------------------- the database parts


def test_entries_read_from_redis_are_checked_and_capped(server: RedisServer) -> None:
    db = example_database(None, shared=RedisSource.parse(server.url))
    assert isinstance(db, KitDatabase)
    good = choices_to_bytes((1, "x", b"y"))
    raw = server.client()
    for value in (good, b"\xff not a choice sequence", b"A" + b"\x00" * (ENTRY_CAP + 1)):
        raw.sadd(b"hypothesis-example:key", value)
    assert list(db.fetch(b"key")) == [good]
    assert db.refused == 2


def test_the_shared_entries_come_in_one_order_whatever_the_server_s() -> None:
    """Redis gives a set's members in its hash table's order, seeded at random as the
    server starts; a fuzz worker that took the others' inputs in that order went another
    way on every server (one lockstep trial: 122, 156, 196, 253 cases to the rule-5 bug).
    The same entries are read as the same list, in whatever order the server gives them."""
    entries = [choices_to_bytes((i, f"input {i}")) for i in range(20)]

    def read(order: list[bytes]) -> list[bytes]:
        inner = Flaky()
        inner.fetch = lambda key: list(order)  # type: ignore[method-assign]
        shared = SharedDatabase(inner, "redis://test", (ConnectionError,))  # type: ignore[arg-type]
        return KitDatabase(None, shared).fetch_shared(b"key")

    first = read(entries)
    assert sorted(first) == sorted(entries)
    assert read(entries[::-1]) == first
    assert read(entries[7:] + entries[:7]) == first


def test_a_shared_record_says_what_its_input_found_and_a_bad_one_is_refused() -> None:
    """What workers share of an input: its client, what it found, its choices; the
    database reads nothing else under that key (another machine wrote it)."""
    from stella_conform.conformance.fuzz.records import (
        _SHARED_HEAD,
        SHARED_FEATURES_CAP,
        SHARED_SUB_KEY,
        _parse_shared,
        _shared_record,
        _stable,
    )
    from stella_conform.conformance.store.database import valid_entry

    blob = choices_to_bytes((1, "x", b"y"))
    found = frozenset(
        {17, 4242, _stable(("shape", "unknown", "tool_result(call_id,output{error})"))}
    )
    record = _shared_record(b"client-1", found, blob)
    assert _parse_shared(record) == (b"client-1", found, blob)
    assert valid_entry(b"key" + SHARED_SUB_KEY, record)
    many = frozenset(range(1, 2 * SHARED_FEATURES_CAP))
    _, kept, _ = _parse_shared(_shared_record(b"client-1", many, blob)) or (b"", (), b"")
    assert len(kept) == SHARED_FEATURES_CAP and kept <= many
    head = record[: -len(blob)]
    over = _SHARED_HEAD.pack(1, b"client-1", SHARED_FEATURES_CAP + 1) + bytes(8 * 300) + blob
    for bad in (record[:5], head + b"\xff not choices", b"\x02" + record[1:], over):
        assert not valid_entry(b"key" + SHARED_SUB_KEY, bad), bad
    # a shape's feature is the same in every process (Python's own string hash is not)
    code = (
        "from stella_conform.conformance.fuzz.records import _stable; "
        "print(_stable(('shape', 'x')))"
    )
    twice = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
        for _ in range(2)
    }
    assert twice == {f"{_stable(('shape', 'x'))}\n"}


def test_redis_urls() -> None:
    assert RedisSource.parse("redis://:secret@db.example:6380/3").shown == (
        "redis://:***@db.example:6380/3"
    )
    for bad in (
        "http://h:1/0",
        "redis://:1/0",
        "redis://h:x/0",
        "redis://h:1/zero",
        "redis://h/0?a=1",
    ):
        with pytest.raises(ValueError):
            RedisSource.parse(bad)


def test_a_malformed_database_url_is_a_usage_error(tmp_path: Path) -> None:
    from conftest import kit_inline

    out = kit_inline("run", "--database", "redis://h:x/0", "--", "true", cwd=tmp_path)
    assert out.returncode == 2 and "--database" in out.stderr
    both = kit_inline("fuzz", "--database", "d", "--no-database", "--", "true", cwd=tmp_path)
    assert both.returncode == 2 and "contradict" in both.stderr


def test_a_fifo_in_the_directory_database_is_skipped(tmp_path: Path) -> None:
    db = SafeDirectoryDatabase(str(tmp_path / "db"))
    good = choices_to_bytes((7,))
    db.save(b"key", good)
    folder = db._key_path(b"key")
    os.mkfifo(folder / "planted")
    (folder / "zero").symlink_to("/dev/zero")
    assert list(db.fetch(b"key")) == [good]


class Flaky:
    """A stand-in for the Redis database whose server is up or down."""

    def __init__(self) -> None:
        self.up = True
        self.values: dict[bytes, set[bytes]] = {}

    def _check(self) -> None:
        if not self.up:
            raise ConnectionError("server gone")

    def fetch(self, key: bytes) -> list[bytes]:
        self._check()
        return sorted(self.values.get(key, set()))

    def save(self, key: bytes, value: bytes) -> None:
        self._check()
        self.values.setdefault(key, set()).add(value)

    def delete(self, key: bytes, value: bytes) -> None:
        self._check()
        self.values.get(key, set()).discard(value)


def test_writes_a_lost_server_missed_are_made_when_it_answers_again() -> None:
    now = [0.0]
    said: list[str] = []
    inner = Flaky()
    shared = SharedDatabase(
        inner,  # type: ignore[arg-type]
        "redis://test",
        (ConnectionError,),
        clock=lambda: now[0],
        warn=said.append,
    )
    shared.save(b"k", b"one")
    inner.up = False
    shared.save(b"k", b"two")
    assert list(shared.fetch(b"k")) == []  # lost: nothing read, no error
    assert shared.unshared() == {b"k": 1} and len(said) == 1
    inner.up = True
    now[0] += 1.0
    assert shared.unshared() == {b"k": 1}  # not retried before its time
    now[0] += 60.0
    assert list(shared.fetch(b"k")) == [b"one", b"two"]
    assert shared.unshared() == {} and "answers again" in said[-1]


class _Ini:
    """Just enough of a pytest config for the plugin's option lookup."""

    def __init__(self, root: Path, **ini: str) -> None:
        self.rootpath = root
        self.ini = ini

    def getoption(self, name: str, default: object = None) -> object:
        return default

    def getini(self, name: str) -> object:
        return self.ini.get(name, "")


def test_the_plugin_reads_stella_database(tmp_path: Path) -> None:
    from hypothesis import settings

    from stella_conform.pytest_plugin import _database

    assert _database(_Ini(tmp_path)) == settings().database  # unset: Hypothesis's own
    db = _database(_Ini(tmp_path, stella_database="redis://127.0.0.1:1/2 db"))
    assert isinstance(db, KitDatabase) and db.shared is not None
    assert db.shared.shown == "redis://127.0.0.1:1/2"
    assert db.local == SafeDirectoryDatabase(str(tmp_path / "db"))  # relative to the root
    beside = _database(_Ini(tmp_path, stella_database="redis://127.0.0.1:1/2"))
    assert beside.local == settings().database  # a Redis beside Hypothesis's configured one
    with pytest.raises(pytest.UsageError, match="stella_database"):
        _database(_Ini(tmp_path, stella_database="redis://h:port/0"))


def _in(folder: Path) -> list[int]:
    """The processes working in ``folder`` (or below it)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            where = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if where.startswith(str(folder)):
            found.append(int(entry))
    return found


def test_the_sharing_benchmark_stopped_leaves_no_folder_or_worker(tmp_path: Path) -> None:
    """benchmarks/shared_fuzz.py stopped by SIGTERM kills its workers and its redis-server
    and removes their folders (a stopped run left w0, w1 in the temporary folder)."""
    if shutil.which("redis-server") is None:
        missing("redis-server is not installed")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    bench = ADAPTERS.parent / "benchmarks" / "shared_fuzz.py"
    argv = [sys.executable, str(bench), "--part", "lockstep", "--workers", "2a", "--seeds", "1"]
    argv += ["--client", "retry_note_after_unknown.py", "--results", str(tmp_path / "r")]
    proc = subprocess.Popen(
        argv, env={**os.environ, "TMPDIR": str(scratch)}, stdout=subprocess.DEVNULL
    )
    try:
        while not list(scratch.glob("*/w1")) and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None, "the benchmark ended before its workers started"
        assert _in(scratch)  # its workers are at work there
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == 143
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert list(scratch.iterdir()) == []
    assert _in(scratch) == []


def _team_worker(db: KitDatabase, seed: int, client: bytes, checks: int) -> Any:
    """A fuzzer with just what the roll call and the choice of a check use."""
    from collections import deque
    from random import Random
    from types import SimpleNamespace

    from stella_conform.conformance.fuzz import Arm, Fuzzer
    from stella_conform.conformance.fuzz.schedule import Schedule
    from stella_conform.conformance.fuzz.team import Team

    fuzzer = Fuzzer.__new__(Fuzzer)
    fuzzer.suite = SimpleNamespace(seed=seed)  # type: ignore[assignment]
    fuzzer.team = Team(db, client, seed)
    fuzzer.random, fuzzer.cases = Random(seed), 0
    fuzzer.schedule = Schedule(SimpleNamespace(), [], fuzzer.random, fuzzer.team)  # type: ignore[arg-type]
    fuzzer.arms = []
    for i in range(checks):
        arm = Arm.__new__(Arm)
        arm.check = SimpleNamespace(id=f"C{i}")  # type: ignore[assignment]
        arm.key, arm.retired, arm.cases, arm.recent = b"key %d" % i, False, 0, deque()
        fuzzer.arms.append(arm)
    return fuzzer


def test_a_seed_of_any_size_takes_its_place_in_the_roll_call() -> None:
    """``--seed`` takes any integer and the roll call packs it in 64 bits: a seed of 2**63
    takes its place (packed as given, it would be a ``struct.error``, exit 3); seeds equal
    in those bits are twins."""
    inner = Flaky()
    db = KitDatabase(None, SharedDatabase(inner, "redis://test", (ConnectionError,)))  # type: ignore[arg-type]
    huge, negative, small = (_team_worker(db, s, b"client A", 4) for s in (2**63, -1, 5))
    for worker in (huge, negative, small):
        worker.team.roll_call(worker.arms)
    for worker in (huge, negative, small):
        worker.team.read_team(worker.arms)
    assert (small.team.position, huge.team.position, negative.team.position) == (
        (0, 3),
        (1, 3),
        (2, 3),
    )
    twin = _team_worker(db, 2**64 + 5, b"client A", 4)  # the same 64 bits as seed 5
    twin.team.roll_call(twin.arms)
    twin.team.read_team(twin.arms)
    assert twin.sharing.same_seed == 1


def test_workers_on_one_client_s_checks_divide_them() -> None:
    """Workers sharing a database that fuzz one client's checks divide them (as HypoFuzz
    spreads tests over its workers): two workers spreading every case over five checks
    found the rule-3 deep bug after 327 cases (median, seeds 0-4), divided after 142."""
    from random import Random

    from stella_conform.conformance.fuzz.records import _WORKER, WORKERS_KEY

    inner = Flaky()
    db = KitDatabase(None, SharedDatabase(inner, "redis://test", (ConnectionError,)))  # type: ignore[arg-type]
    first, second = (_team_worker(db, seed, b"client A", 5) for seed in (7, 3))
    stranger = _team_worker(db, 1, b"client B", 5)  # another client: not of the team
    for worker in (first, second, stranger):
        worker.team.roll_call(worker.arms)
    gone = _team_worker(db, 0, b"client A", 5)  # said so a minute and more ago
    inner.values[WORKERS_KEY].add(
        _WORKER.pack(gone.team.worker, gone.team.digest(gone.arms), 0, time.time() - 3600)
    )
    for worker in (first, second, stranger):
        worker.team.read_team(worker.arms)
    assert (second.team.position, first.team.position, stranger.team.position) == (
        (0, 2),
        (1, 2),
        (0, 1),
    )
    assert first.sharing.to_json()["team"] == {"workers": 2, "place": 1}

    for worker, mine in ((second, {"C0", "C2", "C4"}), (first, {"C1", "C3"})):
        chosen = Counter(
            worker.schedule.choose(worker.arms, worker.cases).check.id for _ in range(4000)
        )
        share = sum(chosen[c] for c in mine) / 4000
        assert 0.82 < share < 0.95, chosen  # 3 of 4 on its own, the rest over every check
        assert set(chosen) == {f"C{i}" for i in range(5)}  # none left to the other alone
    # alone, its share is every check: the choice as before (no draw for the division)
    alone = Random()
    alone.setstate(stranger.random.getstate())
    assert stranger.schedule.own(stranger.arms, stranger.arms) == []
    assert stranger.schedule.choose(stranger.arms, stranger.cases) is alone.choice(
        stranger.arms
    )  # every score ties at first
    assert stranger.random.getstate() == alone.getstate()
    one = _team_worker(db, 5, b"client C", 1)  # one check: nothing to divide
    one.team.position = (0, 2)
    assert one.schedule.own(one.arms, one.arms) == []


def test_a_worker_a_team_leaves_without_checks_of_its_own_draws_afresh() -> None:
    """Two workers on one check, four on three: the roll call leaves a worker without a
    share of the checks, and it draws every case afresh instead of mutating the corpus
    the others take deep: a second search of the same corpus adds little where a fresh
    case finds a bug as often as a mutant does (the rule-5 deep bug, docs/fuzzing.md).  A
    worker with a share, and a worker alone, draw a quarter afresh, the same random draws
    as ever."""
    from random import Random

    from stella_conform.conformance.fuzz import FRESH_SHARE, Entry

    inner = Flaky()
    db = KitDatabase(None, SharedDatabase(inner, "redis://test", (ConnectionError,)))  # type: ignore[arg-type]

    def team(client: bytes, checks: int, *seeds: int) -> list[Any]:
        workers = [_team_worker(db, seed, client, checks) for seed in seeds]
        for worker in workers:
            worker.suite.recordings = ()
            for arm in worker.arms:
                arm.corpus = [Entry((0,) * 10, (("integer", {}),) * 10, 1)]
                arm.weights, arm.weighed_at, arm.hits = [], -1000, Counter()
            worker.team.roll_call(worker.arms)
        for worker in workers:
            worker.team.read_team(worker.arms)
        return workers

    def fresh(worker: Any, draws: int = 4000) -> float:
        arms = worker.arms
        return sum(worker._mutant(arms[i % len(arms)]) is None for i in range(draws)) / draws

    owner, other = team(b"client A", 1, 3, 7)
    assert (owner.team.position, other.team.position) == ((0, 2), (1, 2))
    assert abs(fresh(owner) - FRESH_SHARE) < 0.03
    assert fresh(other) == 1.0
    assert "no share of its own" in "\n".join(other.sharing.lines())
    assert "no share of its own" not in "\n".join(owner.sharing.lines())

    four = team(b"client B", 3, 1, 2, 3, 4)
    assert [w.team.position for w in four] == [(0, 4), (1, 4), (2, 4), (3, 4)]
    assert [fresh(w) == 1.0 for w in four] == [False, False, False, True]
    assert all(abs(fresh(w) - FRESH_SHARE) < 0.03 for w in four[:3])

    # five checks and two workers: each has a share, and draws as a worker alone does
    assert all(abs(fresh(w) - FRESH_SHARE) < 0.03 for w in team(b"client C", 5, 1, 2))

    # alone: the share of fresh draws, and the random draws themselves, as before
    (alone,) = team(b"client D", 1, 5)
    assert alone.team.position == (0, 1)
    twin = Random()
    twin.setstate(alone.random.getstate())
    for _ in range(50):
        started_fresh = twin.random() < FRESH_SHARE
        assert (alone._mutant(alone.arms[0]) is None) == started_fresh
        twin.setstate(alone.random.getstate())


def test_a_run_on_a_shared_redis_replays_a_budget_of_what_it_holds_and_reads_its_cache(
    tmp_path: Path, server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a real Redis: other workers' clients still fail what a fixed client passes and
    save it again, so each of its runs meets entries there.  Each run replays a budget of
    them (max(2, ⌈25 / 10⌉) = 3, the shrunk one first, after the strata) and, from the
    second on, grades its own cases from the case cache, not generated again, rather than
    replaying all six every run and never reading the cache while any is held."""
    from held_cases import (
        BUDGET,
        CHECK,
        failed_run_left,
        graded_streams,
        held_entries,
        no_generation,
        own_cases,
        reader_config,
        reference_reader,
    )

    from stella_conform.conformance.suite import run_check

    key, left = failed_run_left(tmp_path, "worker")
    held = left[b""] | left[b".secondary"]
    assert len(held) > BUDGET
    shared = RedisSource(server.url).database()
    database = KitDatabase(SafeDirectoryDatabase(str(tmp_path / "local")), shared)

    def the_others_save_theirs_again() -> None:
        for sub, values in left.items():
            for value in values:
                shared.save(key + sub, value)

    fixed = reader_config(reference_reader(), database=database, case_cache=tmp_path / "cases")
    strata, own = own_cases(fixed)
    graded = graded_streams(monkeypatch)
    for _ in range(3):
        the_others_save_theirs_again()
        graded.clear()
        result = run_check(CHECK, fixed)
        assert result.outcome == "pass", result.message
        assert len(graded) == result.cases == len(strata) + len(own) + BUDGET
        # the strata, a budget of the entries, the random examples: drawn, then cached
        assert graded[: len(strata)] == strata and graded[len(strata) + BUDGET :] == own
        no_generation(monkeypatch)
        still = held_entries(shared, key)
        assert len(held - still[b""] - still[b".secondary"]) == BUDGET  # dropped as they passed
    shared.close()
