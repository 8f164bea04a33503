"""Shared test fixtures: paths to the repository, the shared upstream inputs, clients."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parent.parent

# Hypothesis's default deadline (200 ms an example) is a wall-clock assertion, which the
# suite makes nowhere: on a loaded machine an example of test_claims_versions' mutations
# can take longer, which would make a test red for the machine's load alone.
# Tests that want another profile (test_fuzz's "wiring") build it on this one.
settings.register_profile("stella-conform-tests", deadline=None)
settings.load_profile("stella-conform-tests")

#: The configuration folder of every kit the tests run (in-process or as a command): the
#: case cache's per-user key (conformance/store/cachekey.py) is made there, never in the
#: user's own. One folder for the session, so kits in xdist workers share the key.
CONFIG_HOME = Path(tempfile.gettempdir()) / f"stella-conform-tests-{os.getuid()}" / "config"
CONFIG_HOME.mkdir(mode=0o700, parents=True, exist_ok=True)
os.environ["XDG_CONFIG_HOME"] = str(CONFIG_HOME)
os.environ.pop("STELLA_CONFORM_CACHE_KEY", None)  # the tests that want one set it


def pytest_configure(config: pytest.Config) -> None:
    """Byte-compile the clients the tests start, and the kit, once before any test.

    The suite starts thousands of Python client processes (the adapters' reference and
    broken clients, each importing ``stella_reader``) and hundreds of kit processes.  With
    ``PYTHONDONTWRITEBYTECODE`` set (as on the shared development machine) none of them
    can save its bytecode, so each start compiled the same modules again: a third of a
    client start's CPU, and most of an editable kit's start.  Reading bytecode is still
    allowed, so the cache written here serves every later process; where the variable is
    not set this only does early what the first process would have done.
    """
    if hasattr(config, "workerinput"):
        return  # the xdist controller compiled before starting the workers
    import compileall
    import importlib.util

    folders = [REPO / "adapters", REPO / "tests" / "hostile", REPO / "tests" / "crashing"]
    spec = importlib.util.find_spec("stella_conform")
    if spec is not None and spec.origin is not None:
        package = Path(spec.origin).parent
        # an editable install's package links to the top-level folders: compile those too
        folders += [package, *(p.resolve() for p in package.iterdir() if p.is_symlink())]
    for folder in folders:
        if folder.is_dir() and os.access(folder, os.W_OK):
            # (init's templates are copied, never run from here)
            compileall.compile_dir(folder, quiet=2, rx=re.compile(r"[/\\]templates[/\\]"))
    _cache_rewritten_plugins()


def _cache_rewritten_plugins() -> None:
    """Let one pytest process save the assertion-rewritten plugin modules for the others.

    pytest rewrites the asserts of every module of every distribution that registers a
    pytest plugin (all of Hypothesis, xdist, ...: about a hundred modules) in every pytest
    process, and saves the result only where bytecode may be written.  With
    ``PYTHONDONTWRITEBYTECODE`` set, that rewrite is most of the CPU time of each pytest
    the suite starts (the plugin's pytester runs, xdist workers).  A cached rewrite is still
    read, so one collection-only pytest run without the variable serves every later one.
    """
    import tempfile

    import hypothesis

    if not sys.dont_write_bytecode:
        return  # every pytest process saves what it rewrites
    source = Path(hypothesis.__file__).with_name("core.py")
    tag = f"{sys.implementation.cache_tag}-pytest-{pytest.__version__}.pyc"
    cache = source.parent / "__pycache__"
    if (cache / f"core.{tag}").exists():
        return  # saved by an earlier session
    if not os.access(cache if cache.is_dir() else source.parent, os.W_OK):
        return  # a read-only install: nothing could be saved, every session would retry
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    try:
        with tempfile.TemporaryDirectory() as empty:
            subprocess.run(
                [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                cwd=empty, env=env, capture_output=True, timeout=120, check=False,
            )  # fmt: skip
    except (subprocess.TimeoutExpired, OSError):
        pass  # only a saving: the session runs as it would have without it


def _upstream_dir() -> Path:
    env = os.environ.get("STELLA_CONFORM_UPSTREAM")
    return Path(env) if env else REPO.parent / "shared" / "upstream"


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def upstream_dir() -> Path:
    path = _upstream_dir()
    if not (path / "agentevent.schema.json").is_file():
        pytest.skip(f"upstream reference inputs not present at {path}")
    return path


@pytest.fixture(scope="session")
def wire_schema(upstream_dir: Path) -> Path:
    return upstream_dir / "agentevent.schema.json"


KIT = Path(sys.executable).parent / "stella-conform"
ADAPTERS = REPO / "adapters"
PY_REFERENCE = (sys.executable, str(ADAPTERS / "python" / "reference_client.py"))
NODE_REFERENCE = ("node", str(ADAPTERS / "node" / "reference_client.js"))
JQ_REFERENCE = ("sh", str(ADAPTERS / "shell" / "jq_client.sh"))


def kit(
    *args: str, cwd: Path | None = None, timeout: float = 600, stdin: bytes | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the installed stella-conform console script."""
    return subprocess.run(
        [str(KIT), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        input=stdin.decode() if stdin is not None else None,
    )


def replay_args(line: str) -> list[str]:
    """A report's replay line as ``kit()`` arguments: what starts the kit (``stella-conform``,
    or ``python3 -m stella_conform`` where no script is on PATH) left off."""
    import shlex

    argv = shlex.split(line)
    return argv[argv.index("replay") :]


def kit_inline(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``kit(ARGS)`` in this process, for a command that stops at a usage error or only
    reads and writes files (``report merge``, ``report diff``).

    The command line's own code (option parsing, the checks of its input, exit 2 and one
    line on stderr) without starting an interpreter and importing the kit, which is most
    of such a call's CPU.  Never for a command that starts a client (a client's process
    group would be this test process's to kill): the test fails if one was started. The
    command's stop handlers are this process's for the call only (``stopping.command``),
    and the test fails if any is left changed.
    """
    import signal

    from click.testing import CliRunner

    from stella_conform import stopping
    from stella_conform.cli import main

    stops = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
    handlers = {s: signal.getsignal(s) for s in stops}
    here = os.getcwd()
    started: list[int] = []
    track = stopping.track_group
    try:
        if cwd is not None:
            os.chdir(cwd)
        stopping.track_group = started.append  # type: ignore[assignment]
        result = CliRunner().invoke(main, list(args), prog_name="stella-conform")
    finally:
        stopping.track_group = track  # type: ignore[assignment]
        os.chdir(here)
        changed = [s for s in stops if signal.getsignal(s) != handlers[s]]
        for s in stops:
            signal.signal(s, handlers[s])
    assert not started, f"stella-conform {' '.join(args)} got past its input checks"
    assert not changed, f"stella-conform {' '.join(args)} left its stop handlers here"
    stderr = result.stderr
    if result.exc_info is not None and not isinstance(result.exception, SystemExit):
        # a process would print its traceback: so does this, for the tests that look for one
        import traceback

        stderr += "".join(traceback.format_exception(*result.exc_info))
    return subprocess.CompletedProcess([str(KIT), *args], result.exit_code, result.stdout, stderr)
