"""Coverage from a client the kit did not write, gathered without changing the client.

A fuzzer that sees which code an input reached can keep the inputs that reached
new code and build on them; one that sees only its own inputs (their shapes, see
:mod:`shapes`) and the client's verdicts searches blind.  The kit
starts the client, so it can ask the client's runtime to measure itself:

* **Python**: a ``sitecustomize`` put first on ``PYTHONPATH`` traces the client's
  own lines into a shared map file (``coverage_hooks/sitecustomize.py``).
* **Node.js**: ``NODE_V8_COVERAGE`` makes V8 write block coverage; a ``--require``
  hook in ``NODE_OPTIONS`` asks for it before each summary, so a persistent client
  yields one coverage file per case (``coverage_hooks/v8_take_coverage.js``), and
  turns V8's optimizing compilers off, whose code counts fewer blocks from a moment
  its background thread decides (a seeded session was not the same twice).

Anything else (a compiled client, a shell script) gets :class:`Blind`: the fuzzer
still runs, and says it had no coverage.  A *feature* is one hashed piece of
coverage (an edge or a block, with its hit count bucketed the way AFL does), so
"new behaviour" is "a feature no earlier case produced".  A feature names its code by
where it lies in the client (a Python file from its ``sys.path`` folder, a Node.js
script from the client's folder), never by its full path: the same client in another
checkout, or run from another working folder, reaches the same features.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import mmap
import os
import posixpath
import re
import shutil
import time
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote, urlsplit

from stella_conform import stopping
from stella_conform.conformance.clients.automode import waiting_for_input
from stella_conform.safe_files import DOCUMENT_CAP, open_regular, read_regular

if TYPE_CHECKING:
    from stella_conform.conformance.clients.process import ClientProcess
    from stella_conform.conformance.clients.runner import Client

Language = Literal["python", "node"]
HOOKS = Path(__file__).resolve().parent / "coverage_hooks"
MAP_ENV = "STELLA_CONFORM_COVERAGE_MAP"
MAP_SIZE = 1 << 16
#: The longest the kit waits, after a live Python client's answer, for the client to be
#: back waiting for its next case before it reads the map (see
#: :meth:`PythonCoverage.end_case`); a client seen within it costs a few ``/proc`` reads.
SETTLE_WAIT = 1.0
#: Waits that ran out after which a client is taken never to be seen waiting (one that
#: polls its stdin, say) and its map is read at once, as before.
SETTLE_MISSES = 3
_NONZERO = re.compile(rb"[^\x00]")


def _bucket(hits: int) -> int:
    """AFL's hit-count classes: 1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128+."""
    for bucket, upper in enumerate((1, 2, 3, 7, 15, 31, 127)):
        if hits <= upper:
            return bucket
    return 7


_BUCKETS = bytes(_bucket(h) for h in range(256))


def client_language(argv: Sequence[str]) -> Language | None:
    """Python or Node.js, from the command or the script's ``#!`` line; None if neither."""
    for word in argv[:2]:
        name = os.path.basename(word)
        if re.fullmatch(r"python[0-9.]*", name) or name.endswith(".py"):
            return "python"
        if name in ("node", "nodejs") or name.endswith((".js", ".mjs", ".cjs")):
            return "node"
    program = shutil.which(argv[0]) or argv[0]
    try:
        with open_regular(program) as fh:  # a FIFO named as the client is not waited on
            first = fh.readline(200)
    except OSError:
        return None
    if first.startswith(b"#!"):
        if b"python" in first:
            return "python"
        if b"node" in first:
            return "node"
    return None


class Blind:
    """No coverage: the fuzzer learns only from the client's answers."""

    kind = "none"
    arrived = False
    #: How many times slower the client runs with this coverage on, as fuzz scales its
    #: timeouts (:func:`traced_client`), and why (said in each timeout's message).
    slowdown = 1
    slowdown_why = ""

    def environment(self) -> dict[str, str]:
        return {}

    def start_case(self) -> None:
        return None

    def end_case(self, client: ClientProcess | None = None) -> frozenset[int]:
        """What the case reached; ``client``: the client process still running after its
        answer (a persistent session), None when it has exited."""
        return frozenset()

    def close(self) -> None:
        return None

    def describe(self) -> str:
        return "none (blind: the inputs' shapes and the client's answers guide the search)"


class PythonCoverage(Blind):
    """Line-edge coverage traced inside a Python client, through a shared map file."""

    kind = "python"

    def __init__(self) -> None:
        self.directory = stopping.temp_dir("stella-conform-coverage-")
        self.path = os.path.join(self.directory, "map")
        with open(self.path, "wb") as fh:
            fh.write(bytes(MAP_SIZE))
        self._file = open(self.path, "r+b")  # noqa: SIM115 - closed in close()
        self._map = mmap.mmap(self._file.fileno(), MAP_SIZE)
        self._zero = bytes(MAP_SIZE)
        self.arrived = False
        self.misses = 0

    def environment(self) -> dict[str, str]:
        inherited = os.environ.get("PYTHONPATH")
        path = str(HOOKS) + (os.pathsep + inherited if inherited else "")
        return {"PYTHONPATH": path, MAP_ENV: self.path}

    def start_case(self) -> None:
        self._map[:] = self._zero

    def end_case(self, client: ClientProcess | None = None) -> frozenset[int]:
        """The map's edges, read once a live client is back waiting for its next case.

        A persistent client runs lines after its answer too (its loop back to reading
        stdin).  Read at once, the map held those lines in this case, in the next one, or
        in neither, as the two processes happened to be scheduled, and a seeded session
        took another path at the first case where it mattered (the rule-3 deep bug after
        1,176, 1,335 and more than 1,494 cases in three runs of one ``--seed``).  Blocked
        on its stdin, the client runs nothing until the kit writes the next case: every
        line it ran for this one is in the map, and no line of the next."""
        if client is not None and self.misses < SETTLE_MISSES:
            self.misses = 0 if _settle(client) is not False else self.misses + 1
        data = self._map[:]
        features = frozenset(
            m.start() * 8 + _BUCKETS[data[m.start()]] for m in _NONZERO.finditer(data)
        )
        self.arrived = self.arrived or bool(features)
        return features

    def close(self) -> None:
        self._map.close()
        self._file.close()
        stopping.remove_dir(self.directory)

    def describe(self) -> str:
        if not self.arrived:
            return "python (asked for, but no coverage arrived: blind)"
        return "python (line edges traced in the client process)"


def _settle(client: ClientProcess) -> bool | None:
    """Wait (at most :data:`SETTLE_WAIT`) until the client waits for input: True when it
    does, False when the wait ran out, None when it cannot be told or the client ended."""
    deadline = time.monotonic() + SETTLE_WAIT
    pause = 0.0001
    while True:
        if client.proc.poll() is not None:
            return None
        waiting = waiting_for_input(client)
        if waiting is not False:
            return waiting
        if time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(2 * pause, 0.002)


#: The file the coverage hook writes the client's folder to, in the coverage folder.
#: The hook's file of each node process's folder: ``client-folder-PID.txt``, beside the
#: ``coverage-PID-TIME-N.json`` files V8 writes for the same process.
CLIENT_FOLDER = re.compile(r"client-folder-([0-9]+)\.txt")
_COVERAGE_PID = re.compile(r"coverage-([0-9]+)-")


def script_name(url: str, folder: str | None) -> str:
    """A covered script's name that is the same wherever the client's checkout lies.

    A ``file:`` script relative to ``folder``, the client's folder (that of the script
    node runs, written by the hook): ``reference_client.js``, ``../node/x.js``; one
    under a ``node_modules`` folder from the first ``node_modules/`` on, as a package
    manager lays it out wherever the project is (``node_modules/pkg/index.js``).  An
    internal script (``node:…``, which :func:`_v8_features` does not count), or any
    script when the client's folder is not known, as it is.  The full
    path named the checkout: one client fuzzed from two checkouts keyed different
    features, and a seeded session's corpus and database with them."""
    if not url.startswith("file:"):
        return url
    path = unquote(urlsplit(url).path)
    at = path.find("/node_modules/")
    if at >= 0:
        return path[at + 1 :]
    if folder is None:
        return url
    return posixpath.relpath(path, folder)


def _launcher(folder: str) -> bool:
    """Whether a node process's folder is in a ``node_modules/`` folder (npm's, npx's,
    yarn's, an installed tool's)."""
    return "/node_modules/" in folder + "/"


def _v8_features(doc: Any, hook_url: str, folder: str | None = None) -> set[int]:
    """The covered blocks of one V8 coverage file (``NODE_V8_COVERAGE``), as features,
    each script named by :func:`script_name` from the client's ``folder``."""
    features: set[int] = set()
    for script in doc.get("result", ()):
        url = script.get("url", "")
        if not url.startswith("file:") or url == hook_url:
            continue
        name = script_name(url, folder)
        for function in script.get("functions", ()):
            for block in function.get("ranges", ()):
                count = block.get("count", 0)
                if count > 0:
                    ident = f"{name}:{block['startOffset']}:{block['endOffset']}"
                    key = zlib.crc32(ident.encode())
                    features.add(key * 8 + _bucket(min(count, 255)))
    return features


class NodeCoverage(Blind):
    """V8 block coverage of a Node.js client, one file per case."""

    kind = "node"
    #: The hook turns V8's optimizing compilers off, so the client's own hot code runs
    #: in the interpreter (and Sparkplug): a client is several times slower under it, a
    #: tight loop up to about seven times (docs/fuzzing.md, "The cost", gives the figures
    #: and how to measure them).  Ten times leaves a margin over the worst, so a client
    #: that passes ``run`` is not timed out by the kit's own instrumentation; a hung case
    #: waits ten times as long.
    slowdown = 10
    slowdown_why = "Node.js coverage runs without V8's optimizer"

    def __init__(self) -> None:
        self.directory = stopping.temp_dir("stella-conform-v8-")
        self.hook = HOOKS / "v8_take_coverage.js"
        self.arrived = False
        #: Each node process's folder as its hook wrote it, by pid: a client started by
        #: ``npm run`` (npx, yarn) is npm's process first, then the client's own.
        self.folders: dict[int, str] = {}
        #: Whether a node process whose script lies outside any ``node_modules/`` folder
        #: has been seen: from then on, a process whose script lies in one is the
        #: client's launcher (npm, npx, yarn), whose coverage is not the client's and
        #: moved with the checkout's depth (npm looks for its config up the folders).
        self.own_seen = False

    def environment(self) -> dict[str, str]:
        options = os.environ.get("NODE_OPTIONS", "")
        require = f'--require "{self.hook}"'
        return {
            "NODE_V8_COVERAGE": self.directory,
            "NODE_OPTIONS": f"{options} {require}".strip(),
        }

    def _files(self) -> list[str]:
        try:
            names = os.listdir(self.directory)
        except OSError:
            return []
        return [os.path.join(self.directory, n) for n in names if n.endswith(".json")]

    def start_case(self) -> None:
        for path in self._files():
            with contextlib.suppress(OSError):
                os.unlink(path)

    def end_case(self, client: ClientProcess | None = None) -> frozenset[int]:
        features: set[int] = set()
        hook_url = self.hook.as_uri()
        self._read_folders()
        for path in self._files():
            pid = _COVERAGE_PID.match(os.path.basename(path))
            folder = self.folders.get(int(pid.group(1))) if pid else None
            if folder is not None and self.own_seen and _launcher(folder):
                with contextlib.suppress(OSError):
                    os.unlink(path)
                continue
            try:
                # the client's runtime wrote it, so the client could have put a FIFO or a
                # link there: a regular file of at most a document's size, or nothing
                data = read_regular(path, DOCUMENT_CAP, follow=False)
                os.unlink(path)
                doc = json.loads(data)
            except (OSError, ValueError, RecursionError):
                with contextlib.suppress(OSError):
                    os.unlink(path)
                continue
            with contextlib.suppress(AttributeError, TypeError, KeyError):  # not V8's shape
                features |= _v8_features(doc, hook_url, folder)
        self.arrived = self.arrived or bool(features)
        return frozenset(features)

    def _read_folders(self) -> None:
        """Take the hook's folder files into :attr:`folders` (a file read is removed: an
        exit-mode client leaves one a case); a folder that is not an absolute path is
        none.  A process's file comes before its coverage: the hook writes it first."""
        try:
            names = os.listdir(self.directory)
        except OSError:
            return
        for name in names:
            match = CLIENT_FOLDER.fullmatch(name)
            if match is None:
                continue
            path = os.path.join(self.directory, name)
            try:
                data = read_regular(path, 4096, follow=False)
            except OSError:
                data = b""
            with contextlib.suppress(OSError):
                os.unlink(path)
            folder = data.decode("utf-8", "replace")
            pid = int(match.group(1))
            if posixpath.isabs(folder):
                self.folders[pid] = folder
                self.own_seen = self.own_seen or not _launcher(folder)
            else:
                self.folders.pop(pid, None)

    def close(self) -> None:
        stopping.remove_dir(self.directory)

    def describe(self) -> str:
        if not self.arrived:
            return "node (asked for, but no V8 coverage arrived: blind)"
        return "node (V8 block coverage, NODE_V8_COVERAGE)"


Feedback = Blind


def feedback_for(argv: Sequence[str], wanted: bool) -> Blind:
    """The coverage source for this client, or :class:`Blind` when none (or not wanted)."""
    if not wanted:
        return Blind()
    language = client_language(argv)
    if language == "python":
        return PythonCoverage()
    if language == "node":
        return NodeCoverage()
    return Blind()


def traced_client(client: Client, feedback: Blind, seed: int | None = None) -> Client:
    """The client as fuzz runs it to gather coverage: with the feedback's environment
    (:func:`with_environment`), and its per-case and per-line timeouts (the default's
    and a user's ``--timeout`` alike) multiplied by the coverage's slowdown, which every
    timeout's message then names (``100 s: 10 s × 10, Node.js coverage runs without V8's
    optimizer``): a case the client answers in time without the coverage is not timed
    out because of it."""
    env = with_environment(client.env, feedback, seed)
    factor = feedback.slowdown
    if factor == 1:
        return dataclasses.replace(client, env=env)
    return dataclasses.replace(
        client,
        env=env,
        timeout=client.timeout * factor,
        line_timeout=client.line_timeout * factor,
        timeout_why=f"{client.timeout:g} s × {factor:g}, {feedback.slowdown_why}",
    )


def timeout_note(client: Client, feedback: Blind) -> str:
    """What fuzz says of its case timeout: empty when the coverage does not scale it."""
    if feedback.slowdown == 1:
        return ""
    scaled = traced_client(client, feedback)
    return f"case timeout {scaled.timeout_text}"


def hash_seed(env: Mapping[str, str], feedback: Blind, seed: int | None) -> dict[str, str]:
    """A client's extra environment with the ``PYTHONHASHSEED`` a fuzz session gives it.

    With a ``seed``, a traced Python client gets ``PYTHONHASHSEED`` from it, unless the
    user set one: Python salts the hash of a string per process, so the order of a set of
    strings, and the lines a loop over one runs, differed each time a session started its
    client (a persistent client is started again after a crash, and for the quiet check),
    and a seeded session's coverage with it.  From the seed, each seed's session is the
    same every time and different seeds still see different orders.  The session's final
    pass and the replay lines it prints run the client with it too, so a failure that
    depends on the hash order replays with the salt it was found under."""
    if (
        seed is not None
        and feedback.kind == "python"
        and "PYTHONHASHSEED" not in env
        and "PYTHONHASHSEED" not in os.environ
    ):
        return {**env, "PYTHONHASHSEED": str(seed % (1 << 32))}
    return dict(env)


def with_environment(
    env: Mapping[str, str], feedback: Blind, seed: int | None = None
) -> dict[str, str]:
    """A client's extra environment with the feedback's settings added (and the hash seed
    of :func:`hash_seed`)."""
    return {**hash_seed(env, feedback, seed), **feedback.environment()}
