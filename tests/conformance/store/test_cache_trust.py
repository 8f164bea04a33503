"""Whoever can write the case-cache folder but lacks the secret can delete cases, never
choose them: a file the run's secret does not authenticate is not graded from.

The attack is the one a restored CI cache makes possible: a file rewritten to keep only
the small cases (each case's SHA-256 and the index recomputed, the format unchanged) made
a client that crashes on any stream over 1,500 bytes pass a check it fails.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import KIT, PY_REFERENCE

from stella_conform.conformance.checks import BY_ID
from stella_conform.conformance.clients.runner import Client
from stella_conform.conformance.report.compare import check_shape
from stella_conform.conformance.report.json_report import report_document
from stella_conform.conformance.report.model import Report
from stella_conform.conformance.store import cachekey, casecache
from stella_conform.conformance.suite import SuiteConfig, run_suite
from stella_conform.errors import SetupError

CHECK = "R3.unknown-type-inert"
#: Crashes on any stream over 1,500 bytes; reads like the reference client otherwise.
LARGE_CRASH = """
import runpy, sys
data = sys.stdin.buffer.read()
if len(data) > 1500:
    raise SystemExit("Traceback (most recent call last):\\nMemoryError: a big stream")
sys.stdin = __import__("io").TextIOWrapper(__import__("io").BytesIO(data))
sys.argv = [sys.argv[1]]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def _config(tmp_path: Path, argv: tuple[str, ...]) -> SuiteConfig:
    return SuiteConfig(
        client=Client(argv, mode="exit", timeout=30.0),
        examples=10,
        failures_dir=tmp_path / "failures",
        database_dir=None,
        case_cache=tmp_path / "cases",
    )


def _run(tmp_path: Path, argv: tuple[str, ...]) -> dict[str, Any]:
    config = _config(tmp_path, argv)
    results = run_suite([BY_ID[CHECK]], config)
    return report_document(Report(config, results, config.vocabulary().ident, {}))


def _keep_small_cases(path: Path, secret: bytes | None) -> int:
    """The attack: only the cases of 1,500 bytes or less kept, the index rewritten to
    match them (sizes, digests, offset); signed with ``secret`` when given (else the MAC
    is left as it was: the attacker does not hold the secret).  Returns the cases kept."""
    data = path.read_bytes()
    footer = casecache._FOOTER
    magic, offset, length, mac = footer.unpack(data[-footer.size :])
    index = json.loads(data[offset : offset + length])
    kept, body, at = [], b"", 0
    for entry in index["cases"]:
        case = data[at : at + entry["size"]]
        at += entry["size"]
        if len(case) <= 1500:
            entry["sha256"] = hashlib.sha256(case).hexdigest()
            kept.append(entry)
            body += case
    index["cases"], index["strata"] = kept, 0
    raw = json.dumps(index).encode()
    if secret is not None:
        mac = cachekey.sign(secret, index["key"], raw)
    path.write_bytes(body + raw + footer.pack(magic, len(body), len(raw), mac))
    return len(kept)


def test_a_cache_rewritten_without_the_secret_cannot_make_a_broken_client_pass(
    tmp_path: Path,
) -> None:
    client = tmp_path / "large_crash.py"
    client.write_text(LARGE_CRASH)
    broken = (sys.executable, str(client), PY_REFERENCE[1])
    assert _run(tmp_path, PY_REFERENCE)["checks"][0]["outcome"] == "pass"  # the cache written
    (path,) = (tmp_path / "cases").glob("*.cases")
    assert 0 < _keep_small_cases(path, secret=None) < 10
    doc = _run(tmp_path, broken)
    assert doc["checks"][0]["outcome"] in ("crash", "fail"), doc["checks"][0]["message"]
    assert doc["case_cache"]["read"] == 0 and doc["case_cache"]["refused"] == 1
    assert "not authenticated" in doc["case_cache"]["why_refused"]
    check_shape(doc, "Report", tmp_path / "report.json")  # the schema types what it says
    broken_shape = {**doc, "case_cache": {**doc["case_cache"], "read": "3"}}
    with pytest.raises(SetupError, match="case_cache/read"):
        check_shape(broken_shape, "Report", tmp_path / "report.json")


def test_the_same_rewrite_signed_with_the_secret_would_have_been_graded(
    tmp_path: Path,
) -> None:
    """The control: what the HMAC stops is what decides the verdict.  Signed with the
    run's secret, the rewritten file is graded from, and the broken client passes."""
    client = tmp_path / "large_crash.py"
    client.write_text(LARGE_CRASH)
    broken = (sys.executable, str(client), PY_REFERENCE[1])
    _run(tmp_path, PY_REFERENCE)
    (path,) = (tmp_path / "cases").glob("*.cases")
    secret, _ = cachekey.cache_secret()
    assert secret is not None
    _keep_small_cases(path, secret)
    doc = _run(tmp_path, broken)
    assert doc["case_cache"]["read"] == 1
    assert doc["checks"][0]["outcome"] == "pass"


def test_the_secret_comes_from_the_environment_then_the_user_s_key_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(cachekey.ENV, raising=False)
    secret, source = cachekey.cache_secret()
    key_file = tmp_path / "config" / "stella-conform" / "cache.key"
    assert secret is not None and source == str(key_file)
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert cachekey.cache_secret()[0] == secret  # made once, then read
    monkeypatch.setenv(cachekey.ENV, "a CI secret")
    assert cachekey.cache_secret() == (hashlib.sha256(b"a CI secret").digest(), cachekey.ENV)
    monkeypatch.setenv(cachekey.ENV, "")  # a fork's job: the secret is not given to it
    assert cachekey.cache_secret()[0] == secret


@pytest.mark.parametrize("how", ["open to others", "a link", "short"])
def test_a_key_file_others_could_write_or_read_turns_the_cache_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(cachekey.ENV, raising=False)
    key_file = cachekey.key_file()
    key_file.parent.mkdir(parents=True)
    if how == "a link":
        (tmp_path / "planted").write_bytes(b"k" * 32)
        os.chmod(tmp_path / "planted", 0o600)
        key_file.symlink_to(tmp_path / "planted")
    else:
        key_file.write_bytes(b"k" * (32 if how == "open to others" else 5))
        os.chmod(key_file, 0o644 if how == "open to others" else 0o600)
    secret, why = cachekey.cache_secret()
    assert secret is None and str(key_file) in why
    doc = _run(tmp_path, PY_REFERENCE)
    assert doc["checks"][0]["outcome"] == "pass"
    assert str(key_file) in doc["case_cache"]["off"]
    assert not list((tmp_path / "cases").glob("*.cases"))  # nothing written unsigned


def test_the_secret_never_reaches_the_client(tmp_path: Path) -> None:
    """A client has no use for the key, and one that read it could sign what later runs
    grade: the kit removes it from every client's environment."""
    seen = tmp_path / "seen"
    client = tmp_path / "env_client.py"
    client.write_text(
        "import os, sys\n"
        f"open({str(seen)!r}, 'a').write(repr(os.environ.get({cachekey.ENV!r})) + '\\n')\n"
        "sys.stdin.buffer.read()\n"
    )
    env = {**os.environ, cachekey.ENV: "a CI secret"}
    done = subprocess.run(
        [str(KIT), "run", "--mode", "exit", "--examples", "1", "--only", "R1.*",
         "--", sys.executable, str(client)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert set(seen.read_text().split()) == {"None"}
