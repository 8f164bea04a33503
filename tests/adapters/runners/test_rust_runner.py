"""The Rust runner (adapters/runners/rust): `cargo test` in its example lists one test per
check as libtest does, green for the reference client, red with the kit's failure text for
a broken one, one failing test (never a list of passes) when the kit cannot grade the
client; `cargo test -- NAME` narrows the listing as libtest's filters do.

The example builds offline against Debian's crates (``.ci/run`` installs them), into the
target folder every Rust build of the tests shares, so serde_json is compiled once.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from native_runners import (
    BROKEN_CLIENT,
    MISSING_KIT_SAID,
    NO_CLIENT,
    REFERENCE_CLIENT,
    SETUP_ERROR_SAID,
    copy_runner,
    environment,
    kit_report,
    must_fail,
    one_failing_kit_test,
    outcomes,
    run,
    said_in_order,
)
from toolchains import CARGO_TARGET, OFFLINE_CONFIG, debian_crates, missing

#: A test's line in libtest's output: its name and how it ended.
ENDED = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)")
STATUS = {"ok": "pass", "FAILED": "fail", "ignored": "skip"}
TEST = ["cargo", "test", "--test", "conformance"]


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example crate, built once for the module's tests (offline where Debian's
    crates are installed)."""
    if shutil.which("cargo") is None:
        missing("no cargo")
    folder = copy_runner("rust", tmp_path_factory.mktemp("rust"))
    if debian_crates():  # beside the crate, where its example finds it too
        (folder.parent / ".cargo").mkdir()
        (folder.parent / ".cargo" / "config.toml").write_text(OFFLINE_CONFIG)
    elif os.environ.get("STELLA_CONFORM_REQUIRE_TOOLCHAINS"):
        missing("no serde crates under /usr/share/cargo/registry")
    built = run(["cargo", "test", "--no-run"], folder, cargo_env())
    if built.returncode != 0:
        if not debian_crates():
            missing(f"cargo could not build without Debian's crates: {built.stdout[-2000:]}")
        raise AssertionError(built.stdout)
    return folder


def cargo_env(client: tuple[str, ...] | None = None, **more: str) -> dict[str, str]:
    return environment(client, CARGO_TARGET_DIR=str(CARGO_TARGET), CARGO_TERM_COLOR="never", **more)


def listed(output: str) -> dict[str, str]:
    return {m.group(1): STATUS[m.group(2)] for m in map(ENDED.match, output.splitlines()) if m}


def test_cargo_test_lists_every_check_green_for_the_reference_client(example: Path) -> None:
    out = run(TEST, example, cargo_env())
    assert out.returncode == 0, out.stdout
    graded = outcomes(kit_report(REFERENCE_CLIENT))
    assert listed(out.stdout) == {c: ("skip" if o == "skip" else "pass") for c, o in graded.items()}
    assert f"test result: ok. {sum(o != 'skip' for o in graded.values())} passed; 0 failed" in (
        out.stdout
    )


def test_a_broken_client_fails_its_checks_with_the_kit_s_failure_text(example: Path) -> None:
    out = run(TEST, example, cargo_env(BROKEN_CLIENT))
    assert out.returncode != 0, out.stdout
    tests = listed(out.stdout)
    report = kit_report(BROKEN_CLIENT)
    assert set(tests) == set(outcomes(report))
    assert {name for name, status in tests.items() if status == "fail"} == must_fail()
    for check in report["checks"]:
        if check["id"] in must_fail():
            said_in_order(check["explanation"], out.stdout)
    assert "test result: FAILED." in out.stdout


def test_a_name_filter_lists_only_the_checks_it_names(example: Path) -> None:
    out = run([*TEST, "--", "--exact", "R6.torn-final-line"], example, cargo_env(BROKEN_CLIENT))
    assert out.returncode != 0, out.stdout
    assert listed(out.stdout) == {"R6.torn-final-line": "fail"}
    others = len(outcomes(kit_report(BROKEN_CLIENT))) - 1
    assert f"{others} filtered out" in out.stdout


def test_a_client_the_kit_cannot_grade_is_one_failing_test(example: Path) -> None:
    out = run(TEST, example, cargo_env(NO_CLIENT))
    one_failing_kit_test(out, listed(out.stdout), SETUP_ERROR_SAID)


def test_a_missing_kit_is_one_failing_test_that_says_how_to_name_it(example: Path) -> None:
    out = run(TEST, example, cargo_env(STELLA_CONFORM_KIT=str(example / "no-such-kit")))
    one_failing_kit_test(out, listed(out.stdout), MISSING_KIT_SAID)


def test_the_crate_s_own_tests_of_every_way_the_kit_ends(example: Path) -> None:
    """Exit 0 and 1 list the checks (known failures ignored, warnings passing); 2, 3, a
    stop, a missing or foreign report and a kit outliving its timeout are one failing
    test."""
    out = run(["cargo", "test", "--test", "plan"], example.parent, cargo_env())
    assert out.returncode == 0, out.stdout
    assert "test result: ok. 6 passed" in out.stdout, out.stdout
