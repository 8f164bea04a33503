"""Every value a user gives is checked before any client starts (conformance/inputs.py).

Each command is given one bad value and a client that writes a line to ``starts.log``
each time it is started: the command must stop with a usage error naming the value
(exit 2) and the log must stay empty.  ``fuzz`` read the claims, ``matrix`` a later
client's claims and timeouts, only after a client had run (review 2, G3); the plugin's
rows are in tests/test_pytest_plugin.py.
"""

from __future__ import annotations

import sys
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
    ("--seed-corpus", "/dev/zero", "neither a folder nor a regular file"),
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
