"""Every value a user gives is checked before any client starts (conformance/inputs.py).

Each command is given one bad value and a client that writes a line to ``starts.log``
each time it is started: the command must stop with a usage error naming the value
(exit 2) and the log must stay empty: ``fuzz``'s claims and a ``matrix``'s later
clients' claims and timeouts included, which a command could otherwise read only once a
client has run.  The plugin's rows are in tests/test_pytest_plugin.py.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import kit_inline

STARTS = """\
import pathlib, sys
with open(pathlib.Path(__file__).with_name("starts.log"), "a") as log:
    log.write("started\\n")
sys.exit(0)
"""

#: (option, value, words the message must hold)
BAD = [
    ("--reads", "bogus", "unknown reads name 'bogus'"),
    ("--computes", "bogus", "unknown computes name 'bogus'"),
    ("--profile", "bogus", "unknown profile 'bogus'"),
    ("--known-failures", "missing.toml", "missing.toml"),
    ("--vocabulary", "no-such-vocabulary", "no-such-vocabulary"),
    ("--database", "ftp://example.invalid/x", "not a redis:// URL"),
    ("--only", "NOPE.*", "matches no check id"),
    ("--timeout", "nan", "not a finite number of seconds"),
    ("--line-timeout", "inf", "not a finite number of seconds"),
    ("--seed-corpus", "no-such-recordings", "no-such-recordings: No such file"),
    ("--seed-corpus", "/dev/zero", "--seed-corpus /dev/zero: is a character device, neither"),
]


@pytest.fixture
def logged(tmp_path: Path) -> Path:
    (tmp_path / "starts.py").write_text(STARTS)
    return tmp_path


def _starts(folder: Path) -> int:
    log = folder / "starts.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.mark.parametrize("command", ["run", "fuzz"])
@pytest.mark.parametrize(("option", "value", "said"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_value_is_a_usage_error_before_the_client_starts(
    logged: Path, command: str, option: str, value: str, said: str
) -> None:
    extra = ["--for", "5s"] if command == "fuzz" else []
    out = kit_inline(command, *extra, option, value, "--", sys.executable, "starts.py", cwd=logged)
    assert out.returncode == 2, out.stdout + out.stderr
    assert said in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
    assert _starts(logged) == 0, f"{command} {option} {value}: the client was started first"


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [b for b in BAD if b[0] in ("--reads", "--computes", "--vocabulary", "--timeout")],
)
def test_replay_checks_its_values_before_the_client_starts(
    logged: Path, option: str, value: str, said: str
) -> None:
    (logged / "case.jsonl").write_text('{"type": "run_complete"}\n')
    out = kit_inline(
        "replay", option, value, "case.jsonl", "--", sys.executable, "starts.py", cwd=logged
    )
    assert out.returncode == 2, out.stdout + out.stderr
    assert said in out.stderr, out.stderr
    assert _starts(logged) == 0


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ('reads = ["bogus"]', "unknown reads name 'bogus'"),
        ('known_failures = "missing.toml"', "missing.toml"),
        ('timeout = "abc"', "timeout must be a number of seconds"),
        ("line_timeout = nan", "line_timeout must be a number of seconds"),
    ],
    ids=["claims", "known-failures", "timeout", "line-timeout"],
)
def test_a_matrix_checks_every_client_before_it_starts_any(
    logged: Path, entry: str, said: str
) -> None:
    """The first client's hello was read before the second client's entry was checked."""
    client = f'command = ["{sys.executable}", "starts.py"]'
    (logged / "matrix.toml").write_text(
        f'[[client]]\nname = "first"\n{client}\n\n[[client]]\nname = "second"\n{client}\n{entry}\n'
    )
    out = kit_inline("matrix", "matrix.toml", "--out", "out", cwd=logged)
    assert out.returncode == 2, out.stdout + out.stderr
    assert said in out.stderr and "'second'" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
    assert _starts(logged) == 0


# ------------------------------------------- a path that is no file or folder (item 2)

#: Every path a command takes, as (command line with ``P`` where the path goes, how the
#: message names it). A FIFO, a socket or a device there is refused; unchecked, it would be
#: silently unused (the example database, the case cache), replaced (a report renamed over
#: a FIFO) or waited on.
PATHS = [
    (["run", "--database", "P"], "--database"),
    (["run", "--case-cache", "P"], "--case-cache"),
    (["run", "--seed-corpus", "P"], "--seed-corpus"),
    (["run", "--json", "P"], "--json"),
    (["run", "--junit-xml", "P"], "--junit-xml"),
    (["run", "--markdown", "P"], "--markdown"),
    (["run", "--failures-dir", "P"], "--failures-dir"),
    (["run", "--known-failures", "P"], "--known-failures"),
    (["run", "--wire-schema", "P"], "--wire-schema"),
    (["fuzz", "--for", "5s", "--database", "P"], "--database"),
    (["fuzz", "--for", "5s", "--seed-corpus", "P"], "--seed-corpus"),
    (["fuzz", "--for", "5s", "--json", "P"], "--json"),
    (["fuzz", "--for", "5s", "--failures-dir", "P"], "--failures-dir"),
    (["replay", "P"], "CASE|fixture:NAME"),
    (["replay", "--cwd", "P", "case.jsonl"], "--cwd"),
    (["matrix", "P"], "CONFIG.toml"),
    (["matrix", "matrix.toml", "--out", "P"], "--out"),
    (["report", "merge", "P", "r.json"], "OUTPUT"),
    (["report", "merge", "out.json", "P"], "SHARDS"),
    (["report", "merge", "--markdown", "P", "out.json", "r.json"], "--markdown"),
    (["report", "merge", "--html", "P", "out.json", "r.json"], "--html"),
    (["report", "diff", "P", "r.json"], "OLD"),
    (["report", "diff", "r.json", "P"], "NEW"),
    (["corpus", "export", "P"], "DIRECTORY"),
    (["corpus", "check", "P"], "DIRECTORY"),
    (["corpus", "diff", "P"], "DIRECTORIES"),
    (["corpus", "diff", "--json", "P"], "--json"),
    (["corpus", "expect", "P"], "STREAMS"),
    (["init", "python", "P"], "DIRECTORY"),
    (["trace", "check", "P"], "JOURNAL"),
    # every path of every command, the values that may hold one too
    (["run", "--knows", "P"], "--knows"),
    (["fuzz", "--for", "5s", "--knows", "P"], "--knows"),
    (["fuzz", "--for", "5s", "--known-failures", "P"], "--known-failures"),
    (["fuzz", "--for", "5s", "--junit-xml", "P"], "--junit-xml"),
    (["fuzz", "--for", "5s", "--markdown", "P"], "--markdown"),
    (["fuzz", "--for", "5s", "--wire-schema", "P"], "--wire-schema"),
    (["replay", "--knows", "P", "case.jsonl"], "--knows"),
    (["replay", "--wire-schema", "P", "case.jsonl"], "--wire-schema"),
    (["replay", "--parser", "P.py:read", "case.jsonl"], "--parser"),
    (["replay", "--parser", "os:getcwd", "--reject", "P.py:Error", "case.jsonl"], "--reject"),
    (["decode", "P"], "FILE|-"),
    (["decode", "--wire-schema", "P", "case.jsonl"], "--wire-schema"),
    (["validate", "P"], "FILE|-"),
    (["validate", "--wire-schema", "P", "case.jsonl"], "--wire-schema"),
    (["corpus", "export", "--wire-schema", "P", "out"], "--wire-schema"),
    (["corpus", "check", "--wire-schema", "P", "out"], "--wire-schema"),
    (["corpus", "diff", "--oracle", "true", "--wire-schema", "P"], "--wire-schema"),
    (["corpus", "expect", "--wire-schema", "P", "case.jsonl"], "--wire-schema"),
    (["vocabulary", "--wire-schema", "P"], "--wire-schema"),
]
#: What each kind of file is called in the message.
KINDS = {"fifo": "a FIFO", "socket": "a socket", "device": "a character device"}
#: The commands that take a client after their options.
WITH_CLIENT = ("run", "fuzz", "replay")


@pytest.fixture(scope="module")
def specials() -> Iterator[dict[str, str]]:
    """A FIFO nobody writes, a listening socket's file and a device (short paths: a
    socket's must fit in 108 bytes).

    The device is a null device made in the test's own folder where the test may make
    one (root), not ``/dev/null`` itself: run against a kit without the check (to see
    the test fail without it), a report written through it is renamed over the
    path, and a machine without ``/dev/null`` breaks every process on it."""
    import shutil
    import socket
    import tempfile

    folder = tempfile.mkdtemp(prefix="sc-special-", dir="/tmp")
    os.mkfifo(f"{folder}/fifo")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(f"{folder}/sock")
    sock.listen(1)
    device = f"{folder}/null"
    try:
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (OSError, AttributeError):  # not root: the real one, only read by a fixed kit
        device = "/dev/null"
    try:
        yield {"fifo": f"{folder}/fifo", "socket": f"{folder}/sock", "device": device}
    finally:
        sock.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and sockets are POSIX's")
@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize(("argv", "named"), PATHS, ids=[" ".join(p[0]) for p in PATHS])
def test_a_path_that_is_a_fifo_a_socket_or_a_device_is_a_usage_error(
    logged: Path, specials: dict[str, str], argv: list[str], named: str, kind: str
) -> None:
    """One line naming the option and what the path is, exit 2, before anything starts
    (stat alone: a FIFO is never opened, so nothing waits for a writer)."""
    (logged / "case.jsonl").write_text('{"type": "run_complete"}\n')
    (logged / "r.json").write_text("{}")
    (logged / "matrix.toml").write_text(
        f'[[client]]\nname = "c"\ncommand = ["{sys.executable}", "starts.py"]\n'
    )
    path = specials[kind]
    if any("P.py" in a for a in argv):  # FILE.py:NAME: the file, a link to the special
        (logged / "special.py").symlink_to(path)
        path = str(logged / "special.py")
    args = [a.replace("P.py", path) if "P.py" in a else path if a == "P" else a for a in argv]
    if argv[0] in WITH_CLIENT:
        args += ["--", sys.executable, "starts.py"]
    out = kit_inline(*args, cwd=logged)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.splitlines() == [
        next(line for line in out.stderr.splitlines() if line.startswith("stella-conform: "))
    ], out.stderr  # one line
    assert f"{named} {path}: is {KINDS[kind]}, " in out.stderr, out.stderr
    assert _starts(logged) == 0


#: The options and arguments of a command that name no path of the kit's to read or
#: write, and why (every other one must be a ``KitPath`` or a ``PathIn``, and in PATHS).
NOT_PATHS = {
    "COMMAND": "the client: a program the kit starts (exec refuses a FIFO), never opens",
    "--oracle": "a command line, as COMMAND",
    "--github-artifact": "OWNER/REPO[/ARTIFACT], a name on GitHub",
    "--reject-exit-codes": "numbers",
    "--shard": "I/N",
    "--for": "a duration",
    "--check": "a check id",
    "--rule": "a rule's name",
    "--description": "words written into an expectation file",
    **{o: "names" for o in ("--profile", "--only", "--skip", "--reads", "--computes")},
}


def _commands(group: object, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, object]]:
    import click

    assert isinstance(group, click.Command)
    if isinstance(group, click.Group):
        for name, command in group.commands.items():
            yield from _commands(command, (*prefix, name))
    else:
        yield " ".join(prefix), group


def test_every_path_option_is_checked() -> None:
    """Every option and argument of every command that names a path, or may hold one, goes
    through the one check (``KitPath``, ``PathIn``: otherwise ``--knows FIFO`` would be a
    type's name, ``--parser`` through a link to a FIFO "no such file"), and has its rows
    in PATHS above; an option that names none says why in NOT_PATHS."""
    import click

    from stella_conform.cli import main
    from stella_conform.cli.params import KitPath, PathIn, option_name

    groups = {name for name, command in main.commands.items() if isinstance(command, click.Group)}
    tested = {
        (" ".join(argv[:2] if argv[0] in groups else argv[:1]), named) for argv, named in PATHS
    }
    flags_numbers_choices = (
        click.types.BoolParamType,
        click.IntRange,
        click.FloatRange,
        click.Choice,
    )
    unchecked, untested = [], []
    for name, command in _commands(main):
        assert isinstance(command, click.Command)
        for param in command.params:
            if param.type is click.INT or isinstance(param.type, flags_numbers_choices):
                continue  # a flag, a number, a choice
            label = option_name(param)
            if isinstance(param.type, (KitPath, PathIn)):
                if (name, label) not in tested:
                    untested.append(f"{name} {label}")
            elif label not in NOT_PATHS:
                unchecked.append(f"{name} {label}")
    assert unchecked == [] and untested == []


@pytest.mark.parametrize("option", ["--json", "--markdown", "--junit-xml", "--failures-dir"])
@pytest.mark.parametrize("path", ["stdout", "/dev/fd/1", "/proc/self/fd/1"])
def test_an_output_that_names_a_file_descriptor_is_a_usage_error(
    logged: Path, option: str, path: str
) -> None:
    """``--markdown /dev/stdout``: a report written to a new file beside the link and renamed
    over it would replace ``/dev/stdout`` itself with a regular file in a run as root.
    (``stdout`` here is a link of the test's own to ``/proc/self/fd/1``, as ``/dev/stdout``
    is: without the check, what is replaced is the test's link, not the machine's.)"""
    if path == "stdout":
        (logged / "stdout").symlink_to("/proc/self/fd/1")
    out = kit_inline("run", option, path, "--", sys.executable, "starts.py", cwd=logged)
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"{option} {path}: names a file descriptor" in out.stderr, out.stderr
    assert _starts(logged) == 0


def test_a_path_below_a_fifo_cannot_be_made(logged: Path, specials: dict[str, str]) -> None:
    out = kit_inline(
        "run", "--case-cache", f"{specials['fifo']}/cases", "--", sys.executable, "starts.py",
        cwd=logged,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr
    assert f"cannot be made: {specials['fifo']} is a FIFO, not a folder" in out.stderr
