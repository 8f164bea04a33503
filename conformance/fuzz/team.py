"""Several workers sharing one database: what each takes from the others, and gives.

Workers that fuzz through one shared database (``--database redis://...``) tell each
other, every :data:`SYNC_SECONDS`, the inputs they kept (with what each found, so a
worker on the same client keeps another's input without running it), how often they
mutated each input (its energy), and their failures (run by the others at once).  A roll
call says who is fuzzing which client's checks, so a team divides the checks as HypoFuzz
spreads tests over its workers (:mod:`schedule`).  A worker alone has a team of one and
no :class:`Sharing`.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from hypothesis.database import ExampleDatabase

from stella_conform import __version__
from stella_conform.conformance.clients.runner import Client
from stella_conform.conformance.fuzz.arms import Arm
from stella_conform.conformance.fuzz.corpus import Keeper
from stella_conform.conformance.fuzz.records import (
    ENERGY_SUB_KEY,
    SHARED_SUB_KEY,
    WORKERS_KEY,
    _digest,
    _parse_shared,
    _seed_word,
    parse_energy,
    parse_roll_call,
    roll_call_record,
)
from stella_conform.conformance.store.database import KitDatabase
from stella_conform.conformance.suite import UNSHRUNK

#: Seconds between two looks at the shared database for other workers' inputs.
SYNC_SECONDS = 2.0
#: The most of its cases a worker spends running inputs of workers that fuzz another
#: client (whose records it cannot compare with its own) between two looks.
RECEIVE_SHARE = 0.2
#: Seconds between two roll calls; a record this much older than that is a worker gone.
ROLL_CALL_SECONDS = 10.0
ROLL_CALL_STALE = 6 * ROLL_CALL_SECONDS


@dataclass
class Sharing:
    """What one worker took from the shared database, and what it gave.

    ``received`` counts other workers' inputs this worker looked at, ``adopted`` those it
    kept (they reach something new here: by what their record says they found, or, from
    a worker on another client, by running them), ``ran`` those it ran (a worker on
    another client's, and other workers' failures), ``failures`` the failures of other
    workers that failed here too; ``reused`` the cases mutated from an input with another
    worker's find among its ancestors, ``built_on`` the inputs such cases added to the
    corpus, ``sent`` the corpus inputs this worker wrote.
    """

    database: str
    worker: str
    received: int = 0
    adopted: int = 0
    ran: int = 0
    failures: int = 0
    reused: int = 0
    built_on: int = 0
    sent: int = 0
    #: When (seconds into the session) and why the shared database stopped answering.
    lost_after: float | None = None
    lost_error: str | None = None
    answered_again: bool = False
    #: Writes never made, by kind: failures, corpus inputs, energy records.
    not_shared: dict[str, int] = field(default_factory=dict)
    #: Other live workers with this worker's seed and checks (they repeat each other).
    same_seed: int = 0
    #: The live workers on this client and these checks at the last look (this one
    #: included), and this one's place among them (by seed): see :meth:`Schedule.choose`.
    team: int = 1
    place: int = 0
    #: How many checks the team divides (a place beyond them has no share: see
    #: :meth:`Schedule.fresh_share`).
    checks: int = 0

    def to_json(self) -> dict[str, Any]:
        lost = None
        if self.lost_after is not None:
            lost = {
                "after_seconds": round(self.lost_after, 2),
                "error": self.lost_error,
                "answered_again": self.answered_again,
            }
        return {
            "database": self.database,
            "worker": self.worker,
            "received": self.received,
            "adopted": self.adopted,
            "ran": self.ran,
            "failures": self.failures,
            "reused": self.reused,
            "built_on": self.built_on,
            "sent": self.sent,
            "lost": lost,
            "not_shared": dict(self.not_shared),
            "same_seed_workers": self.same_seed,
            "team": {"workers": self.team, "place": self.place},
        }

    def lines(self) -> list[str]:
        out = [
            f"shared: {self.database}: received {self.received:,} input(s) from other workers "
            f"({self.adopted:,} kept here, {self.ran:,} run), {self.reused:,} case(s) built on "
            f"them ({self.built_on:,} kept); sent {self.sent:,}"
        ]
        if self.failures:
            out.append(f"{self.failures:,} failure(s) other workers found failed here too")
        if self.lost_after is not None:
            again = "; it answered again later" if self.answered_again else ""
            out.append(
                f"shared database lost after {self.lost_after:.1f} s ({self.lost_error}){again}"
            )
        if self.team > 1 and self.place >= self.checks:
            out.append(
                f"team: worker {self.place + 1} of {self.team} on {self.checks} check(s): no "
                "share of its own, so it drew every case afresh for the others to take deep"
            )
        elif self.team > 1:
            out.append(
                f"team: worker {self.place + 1} of {self.team} on these checks (most of its "
                "cases on its share of them)"
            )
        if self.same_seed:
            out.append(
                f"{self.same_seed} other worker(s) had this worker's seed and checks: they ran "
                "the same cases (give each worker its own --seed)"
            )
        if self.not_shared:
            what = ", ".join(f"{n:,} {kind}" for kind, n in sorted(self.not_shared.items()))
            out.append(f"not shared (kept in the local database only): {what}")
        return out


def client_digest(client: Client, feedback: str, vocabulary: str) -> bytes:
    """What makes two workers' features comparable: the kit, the client (its command's
    words by their last part: machines check it out in different folders), how it is run
    and measured (``feedback``: its kind), the vocabulary (its ident).  A worker on
    another client runs what it gets."""
    words = [os.path.basename(word) for word in client.argv]
    ident = [__version__, feedback, client.mode, vocabulary, *words]
    return hashlib.sha256("\0".join(ident).encode()).digest()[:8]


class Host(Protocol):
    """What the team needs of the fuzzing loop: to run or keep another worker's input."""

    def stopping(self, deadline: float) -> bool:
        """Whether the loop is to stop taking inputs in (interrupted, or out of time)."""
        ...

    def replay(self, arm: Arm, blob: bytes, origin: str) -> bool:
        """Run an input once (unless the arm knows it); whether it was kept."""
        ...

    def adopt(self, arm: Arm, blob: bytes, features: frozenset[int]) -> None:
        """Keep another worker's input, unrun, if what it found is new here."""
        ...


class Team:
    """This worker among the others sharing its database: its name, its client's digest,
    its place in its team (``position``: place and size, by seed, from the roll call), and
    when it next looks at and answers the roll call."""

    def __init__(
        self,
        database: ExampleDatabase | None,
        client: bytes,
        seed: int,
        sync_seconds: float = SYNC_SECONDS,
    ) -> None:
        self.database = database
        shared = database.shared if isinstance(database, KitDatabase) else None
        #: This worker's name in the shared database's energy records.
        self.worker = os.urandom(4)
        self.client_digest = client
        self.seed = seed
        self.sync_seconds = sync_seconds
        self.sharing = Sharing(shared.shown, self.worker.hex()) if shared is not None else None
        self.next_sync = 0.0
        #: This worker's roll-call record (None until it has written one), and when next.
        self.roll_record: bytes | None = None
        self.next_roll_call = 0.0
        #: This worker's place in its team and the team's size, and whether it has looked
        #: for its team yet (at its first case).
        self.position = (0, 1)
        self.read = False

    def keeper(self) -> Keeper:
        """The corpus keeper that writes this worker's records."""
        return Keeper(self.database, self.worker, self.client_digest)

    def receive(self, arm: Arm, deadline: float, limit: int, host: Host) -> None:
        """Take in what the other workers shared since the last look: their failures (run
        here: a bug one worker found is known to all at once), their corpus inputs (kept
        where they would reach something new here, by what their records say they found:
        no case is spent on them), and their energy (how often the others mutated each
        input, what it found)."""
        db = self.database
        if self.sharing is None or not isinstance(db, KitDatabase):
            return
        picked: Counter[bytes] = Counter()
        found: dict[bytes, int] = {}
        for record in db.fetch_shared(arm.key + ENERGY_SUB_KEY):
            digest, worker, novel, times = parse_energy(record)
            if worker != self.worker:
                picked[digest] += times
                found[digest] = max(found.get(digest, 0), novel)
        for key in (arm.key, arm.key + UNSHRUNK):  # shrunk, and as found
            for blob in db.fetch_shared(key):
                if blob in arm.known or host.stopping(deadline):
                    continue
                self.sharing.ran += 1
                host.replay(arm, blob, "failure")
        strangers = self._take_records(arm, db, host)
        # a worker on another client: its inputs are run, the most promising first (what
        # they found, less how often they were mutated), within a share of the cases
        strangers.sort(key=lambda item: (-found.get(item[0], 1), picked[item[0]], item[1]))
        for _, blob in strangers[:limit]:
            if host.stopping(deadline):
                break
            self.sharing.ran += 1
            if host.replay(arm, blob, "shared"):
                self.sharing.adopted += 1
        if picked:
            for entry in arm.corpus:
                if entry.digest in picked:
                    entry.shared_picked = picked[entry.digest]
                    entry.novel = max(entry.novel, found[entry.digest])

    def _take_records(self, arm: Arm, db: KitDatabase, host: Host) -> list[tuple[bytes, bytes]]:
        """Adopt the shared inputs of workers on this client (by their records); those of
        workers on another client, to run, by digest."""
        assert self.sharing is not None
        strangers: list[tuple[bytes, bytes]] = []
        for record in db.fetch_shared(arm.key + SHARED_SUB_KEY):
            digest = _digest(record)
            if digest in arm.looked:
                continue
            arm.looked.add(digest)
            parsed = _parse_shared(record)
            if parsed is None or parsed[2] in arm.known:
                continue
            client, features, blob = parsed
            self.sharing.received += 1
            if client == self.client_digest:
                host.adopt(arm, blob, features)
            else:
                strangers.append((_digest(blob), blob))
        return strangers

    def tell(self, arm: Arm, keeper: Keeper) -> None:
        """Write the inputs this worker kept since it last said, and its energy of the
        inputs it mutated (each time their picks have doubled: the others need the order
        of magnitude), in a round trip each."""
        db = self.database
        if self.sharing is None or not isinstance(db, KitDatabase) or db.shared is None:
            return
        if arm.outbox:
            db.shared.replace(arm.key + SHARED_SUB_KEY, [], arm.outbox)
            self.sharing.sent += len(arm.outbox)
            arm.outbox = []
        old: list[bytes] = []
        new: list[bytes] = []
        for entry in arm.corpus:
            if entry.picked == 0 or (entry.told > 0 and entry.picked < 2 * entry.told):
                continue
            if entry.told >= 0:
                old.append(keeper.energy(entry, entry.told))
            new.append(keeper.energy(entry, entry.picked))
            entry.told = entry.picked
        if new:
            db.shared.replace(arm.key + ENERGY_SUB_KEY, old, new)

    def sync(
        self,
        arms: Sequence[Arm],
        deadline: float,
        now: float,
        host: Host,
        keeper: Keeper,
        *,
        final: bool = False,
    ) -> None:
        """Every few seconds: what this worker learnt out, what the others found in."""
        if self.sharing is None:
            return
        if not final and now < self.next_sync:
            return
        self.next_sync = now + self.sync_seconds
        self.roll_call(arms)
        if not final:
            self.read_team(arms)
        for arm in arms:
            self.tell(arm, keeper)
            if not final:
                self.receive(arm, deadline, max(1, int(RECEIVE_SHARE * arm.since_sync)), host)
            arm.since_sync = 0

    def digest(self, arms: Sequence[Arm]) -> bytes:
        """What workers that divide the checks among them have in common: the client (as
        :attr:`client_digest` names it) and the checks."""
        keys = sorted(arm.key for arm in arms)
        return hashlib.sha256(b"".join([self.client_digest, *keys])).digest()[:8]

    def roll_call(self, arms: Sequence[Arm]) -> None:
        """Say in the shared database that this worker is fuzzing (its team and its seed),
        every :data:`ROLL_CALL_SECONDS`."""
        db = self.database
        if self.sharing is None or not isinstance(db, KitDatabase) or db.shared is None:
            return
        now = time.time()
        if now < self.next_roll_call:
            return
        self.next_roll_call = now + ROLL_CALL_SECONDS
        record = roll_call_record(self.worker, self.digest(arms), self.seed, now)
        db.shared.replace(WORKERS_KEY, [self.roll_record] if self.roll_record else [], [record])
        self.roll_record = record

    def read_team(self, arms: Sequence[Arm]) -> None:
        """Who else fuzzes this client's checks (the roll call): this worker's team, and
        its place in it by seed (at its first case and at every look).

        Two workers on one seed draw the same cases, and every input one shares the other
        has run already: one of them is wasted, which no report would otherwise show (the
        seed's default, 0, makes it the easy mistake): warned once.
        """
        db = self.database
        if self.sharing is None or not isinstance(db, KitDatabase) or db.shared is None:
            return
        now = time.time()
        team = self.digest(arms)
        me = (_seed_word(self.seed), self.worker)
        members = {me}
        for entry in db.fetch_shared(WORKERS_KEY):
            worker, theirs, seed, said = parse_roll_call(entry)
            if worker != self.worker and theirs == team and now - said < ROLL_CALL_STALE:
                members.add((seed, worker))
        ranked = sorted(members)
        self.position = (ranked.index(me), len(ranked))
        self.sharing.place, self.sharing.team = self.position
        self.sharing.checks = len(arms)
        twins = sum(1 for seed, _ in members if seed == me[0]) - 1
        if twins and not self.sharing.same_seed:
            self.sharing.same_seed = twins
            db.shared.warn(
                f"warning: {twins} other fuzz worker(s) on {db.shared.shown} have this "
                f"worker's seed ({self.seed}) and checks: they draw the same cases and "
                "cannot build on each other; give each worker its own --seed"
            )

    def close(self, started: float) -> None:
        """One last attempt at what the shared database missed, and what it never got
        (``started``: when the session started, on the loop's clock)."""
        db = self.database
        if self.sharing is None or not isinstance(db, KitDatabase) or db.shared is None:
            return
        shared = db.shared
        if self.roll_record is not None:
            shared.delete(WORKERS_KEY, self.roll_record)  # this worker is gone
        shared.close()
        if shared.loss is not None:
            self.sharing.lost_after = max(0.0, shared.loss.since - started)
            self.sharing.lost_error = shared.loss.error
            self.sharing.answered_again = shared.loss.back
        kinds: Counter[str] = Counter()
        for key, count in shared.unshared().items():
            if key.endswith(SHARED_SUB_KEY):
                kinds["corpus inputs"] += count
            elif key.endswith(ENERGY_SUB_KEY):
                kinds["energy records"] += count
            elif key == b"":
                kinds["writes given up"] += count
            else:
                kinds["failures"] += count
        self.sharing.not_shared = dict(kinds)
        # ``sent`` counted every input given to it: the ones it never got were not sent
        self.sharing.sent = max(0, self.sharing.sent - kinds["corpus inputs"])
