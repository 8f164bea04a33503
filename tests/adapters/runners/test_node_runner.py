"""The npm runner (adapters/runners/node): `npm test` in its example lists one node:test
and one vitest test per check, green for the reference client, red with the kit's failure
text for a broken one, and one failing test (never a list of passes) when the kit cannot
grade the client.

vitest comes from npm into ``.ci/.toolchains/vitest`` (``.ci/run``); the runner package
is copied into the example's ``node_modules``, as ``npm install`` of the package gives it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import REPO
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

VITEST = Path(
    os.environ.get("STELLA_CONFORM_VITEST_TOOLCHAIN", REPO / ".ci" / ".toolchains" / "vitest")
)
#: Where .ci/run installs TypeScript and the Node.js types.
TS = Path(os.environ.get("STELLA_CONFORM_TS_TOOLCHAIN", REPO / ".ci" / ".toolchains" / "ts"))
#: A TypeScript user's test files, checked against the package's declarations.
TYPED = """\
import { conformance } from 'stella-conform-runner/node-test';
import { conformance as inVitest, type Options } from 'stella-conform-runner/vitest';
import { grade, type Graded } from 'stella-conform-runner';

const options: Options = { client: ['node', 'dist/cli.js'], examples: 5, mode: 'persistent' };
const graded: Graded = await conformance(options);
const names: string[] = graded.tests.map((t) => `${t.name}: ${t.status}`);
await inVitest({ client: 'node dist/cli.js', args: ['--profile', 'dashboard'], timeout: 60 });
void grade;
void names;
"""
#: A top-level node:test test in the spec reporter: mark, name, its time.
NODE_LINE = re.compile(r"^(✔|✖|﹣) (\S+) \(")
#: A test in vitest's verbose reporter: mark, file > name.
VITEST_LINE = re.compile(r"^ (✓|×|↓) \S+ > (\S+)")
STATUS = {"✔": "pass", "✖": "fail", "﹣": "skip", "✓": "pass", "×": "fail", "↓": "skip"}


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """The example project with the runner installed in it (and vitest beside it)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        missing("no node or npm")
    if not (VITEST / "node_modules" / "vitest").is_dir():
        missing(f"no vitest at {VITEST}")
    folder = copy_runner("node", tmp_path)
    installed = folder / "node_modules" / "stella-conform-runner"
    installed.mkdir(parents=True)
    package = json.loads((folder.parent / "package.json").read_text())
    for name in ["package.json", *package["files"]]:  # what npm packs and installs
        shutil.copy2(folder.parent / name, installed / name)
    (folder / "node_modules" / "vitest").symlink_to(VITEST / "node_modules" / "vitest")
    bin_dir = folder / "node_modules" / ".bin"
    bin_dir.mkdir()
    (bin_dir / "vitest").symlink_to(VITEST / "node_modules" / "vitest" / "vitest.mjs")
    return folder


def listed(output: str) -> tuple[dict[str, str], dict[str, str]]:
    """The tests each runner listed, by name: node:test's, then vitest's."""
    node: dict[str, str] = {}
    vitest: dict[str, str] = {}
    for line in output.splitlines():
        if line.startswith("ℹ tests"):  # node's summary; its failures are listed again after it
            node = {**node, "": "end"}
        if (m := NODE_LINE.match(line)) and "" not in node:
            node[m.group(2)] = STATUS[m.group(1)]
        if m := VITEST_LINE.match(line):
            vitest[m.group(2)] = STATUS[m.group(1)]
    node.pop("", None)
    return node, vitest


def test_npm_test_lists_every_check_green_for_the_reference_client(example: Path) -> None:
    out = run(["npm", "test"], example, environment())
    assert out.returncode == 0, out.stdout
    node, vitest = listed(out.stdout)
    graded = outcomes(kit_report(REFERENCE_CLIENT))
    expected = {c: ("skip" if o == "skip" else "pass") for c, o in graded.items()}
    assert node == expected
    assert vitest == expected


@pytest.mark.parametrize("script", ["test:node", "test:vitest"])
def test_a_broken_client_fails_its_checks_with_the_kit_s_failure_text(
    example: Path, script: str
) -> None:
    out = run(["npm", "run", script], example, environment(BROKEN_CLIENT))
    assert out.returncode != 0, out.stdout
    node, vitest = listed(out.stdout)
    tests = node if script == "test:node" else vitest
    report = kit_report(BROKEN_CLIENT)
    assert set(tests) == set(outcomes(report))
    assert {name for name, status in tests.items() if status == "fail"} == must_fail()
    for check in report["checks"]:
        if check["id"] in must_fail():
            said_in_order(check["explanation"], out.stdout)


@pytest.mark.parametrize("script", ["test:node", "test:vitest"])
def test_a_client_the_kit_cannot_grade_is_one_failing_test(example: Path, script: str) -> None:
    out = run(["npm", "run", script], example, environment(NO_CLIENT))
    node, vitest = listed(out.stdout)
    one_failing_kit_test(out, node if script == "test:node" else vitest, SETUP_ERROR_SAID)


def test_a_missing_kit_is_one_failing_test_that_says_how_to_name_it(example: Path) -> None:
    env = environment(STELLA_CONFORM_KIT=str(example / "no-such-kit"))
    out = run(["npm", "run", "test:node"], example, env)
    one_failing_kit_test(out, listed(out.stdout)[0], MISSING_KIT_SAID)


def test_the_package_s_own_tests_of_every_way_the_kit_ends(example: Path) -> None:
    """Exit 0 and 1 list the checks (known failures todo, warnings passing); 2, 3, a stop,
    a missing or foreign report and a kit outliving its timeout are one failing test."""
    out = run(["node", "--test", "test/plan.test.js"], example.parent, environment())
    assert out.returncode == 0, out.stdout


def test_a_typescript_project_type_checks_against_the_package(example: Path) -> None:
    """The declarations the package ships: its three entry points resolve (the exports
    map's ``types``), and the options and results are typed."""
    if not (TS / "node_modules" / "typescript").is_dir():
        missing(f"no TypeScript toolchain at {TS}")
    (example / "node_modules" / "@types").symlink_to(TS / "node_modules" / "@types")
    (example / "typed.mts").write_text(TYPED)
    tsc = ["node", str(TS / "node_modules" / "typescript" / "bin" / "tsc")]
    flags = ["--noEmit", "--strict", "--module", "node16", "--target", "es2022"]
    (example / "wrong.mts").write_text(TYPED.replace("examples: 5", "examples: '5'"))
    out = run([*tsc, *flags, "--types", "node", "typed.mts", "wrong.mts"], example, environment())
    errors = [line for line in out.stdout.splitlines() if "error TS" in line]
    assert len(errors) == 1 and errors[0].startswith("wrong.mts(5,"), out.stdout  # one: '5'
