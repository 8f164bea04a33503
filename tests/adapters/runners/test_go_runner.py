"""The Go runner (adapters/runners/go): `go test -v ./...` in its example lists one subtest
per check, green for the reference client, red with the kit's failure text for a broken
one, one failing subtest (never a list of passes) when the kit cannot grade the client,
and a result go test does not cache (the client may have changed since).

Standard library only: the example reaches the module through a ``replace`` directive.
"""

from __future__ import annotations

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
from toolchains import missing

#: A subtest's end in ``go test -v``: its outcome and its name.
ENDED = re.compile(r"^\s*--- (PASS|FAIL|SKIP): TestConformance/(\S+) \(")
TEST = ["go", "test", "-v", "./..."]


@pytest.fixture
def example(tmp_path: Path) -> Path:
    if shutil.which("go") is None:
        missing("no go")
    return copy_runner("go", tmp_path)


def go_env(client: tuple[str, ...] | None = None, **more: str) -> dict[str, str]:
    return environment(client, GOFLAGS="-mod=mod", **more)


def listed(output: str) -> dict[str, str]:
    return {m.group(2): m.group(1).lower() for m in map(ENDED.match, output.splitlines()) if m}


def test_go_test_lists_every_check_green_for_the_reference_client(example: Path) -> None:
    out = run(TEST, example, go_env())
    assert out.returncode == 0, out.stdout
    graded = outcomes(kit_report(REFERENCE_CLIENT))
    assert listed(out.stdout) == {c: ("skip" if o == "skip" else "pass") for c, o in graded.items()}
    again = run(["go", "test", "./..."], example, go_env())
    assert again.returncode == 0 and "(cached)" not in again.stdout, again.stdout


def test_a_broken_client_fails_its_checks_with_the_kit_s_failure_text(example: Path) -> None:
    out = run(TEST, example, go_env(BROKEN_CLIENT))
    assert out.returncode != 0, out.stdout
    tests = listed(out.stdout)
    report = kit_report(BROKEN_CLIENT)
    assert set(tests) == set(outcomes(report))
    assert {name for name, status in tests.items() if status == "fail"} == must_fail()
    for check in report["checks"]:
        if check["id"] in must_fail():
            said_in_order(check["explanation"], out.stdout)


def test_a_client_the_kit_cannot_grade_is_one_failing_subtest(example: Path) -> None:
    out = run(TEST, example, go_env(NO_CLIENT))
    one_failing_kit_test(out, listed(out.stdout), SETUP_ERROR_SAID)


def test_a_missing_kit_is_one_failing_subtest_that_says_how_to_name_it(example: Path) -> None:
    out = run(TEST, example, go_env(STELLA_CONFORM_KIT=str(example / "no-such-kit")))
    one_failing_kit_test(out, listed(out.stdout), MISSING_KIT_SAID)


def test_the_module_s_own_tests_of_every_way_the_kit_ends(example: Path) -> None:
    """Exit 0 and 1 list the checks (known failures skipped, warnings passing); 2, 3, a
    stop, a missing or foreign report and a kit outliving its timeout are one failing
    subtest."""
    out = run(["go", "test", "./..."], example.parent, go_env())
    assert out.returncode == 0, out.stdout
