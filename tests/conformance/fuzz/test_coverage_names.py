"""Coverage features name a client's code by where it lies in the client, not on the disk.

The same client in two checkouts, run from two working folders, reaches the same
features: a seeded fuzz session keys the same coverage on CI as on a laptop, and the
corpus and database it keeps with them are the same.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from conftest import ADAPTERS

from stella_conform.conformance.checks import BY_ID
from stella_conform.conformance.clients.runner import Client, run_once
from stella_conform.conformance.fuzz import FuzzConfig, Fuzzer
from stella_conform.conformance.fuzz.feedback import NodeCoverage, PythonCoverage, script_name
from stella_conform.conformance.suite import SuiteConfig

MINIMAL = (ADAPTERS.parent / "fixtures" / "minimal_run.jsonl").read_bytes()
CASE = MINIMAL + b'{"type":"x_new"}\n'

#: A client whose code lies in the three places a name can come from: beside it (its
#: folder is sys.path[0]), in a folder of the checkout it puts on sys.path itself, and
#: in a file it loads by its path (under no sys.path folder).
CLIENT = """
import importlib.util, os, sys
here = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, os.path.join(here, "..", "lib"))
spec = importlib.util.spec_from_file_location("plugin", os.path.join(here, "..", "plugin.py"))
plugin = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plugin)
import beside, helper
data = sys.stdin.buffer.read()
sys.exit(beside.check(data) + helper.check(data) + plugin.check(data))
"""
CHECK = """
def check(data):
    for line in data.splitlines():
        if b"x_new" in line:
            return 0
    return 0
"""


def _checkout(root: Path) -> Path:
    """A copy of the client's tree at ``root``; its script's path."""
    (root / "bin").mkdir(parents=True)
    (root / "lib").mkdir()
    (root / "bin" / "client.py").write_text(CLIENT)
    for module in ("bin/beside.py", "lib/helper.py", "plugin.py"):
        (root / module).write_text(CHECK)
    return root / "bin" / "client.py"


def _python_features(argv: tuple[str, ...], cwd: Path) -> frozenset[int]:
    feedback = PythonCoverage()
    try:
        client = Client(argv=argv, mode="exit", env=feedback.environment(), cwd=str(cwd))
        feedback.start_case()
        assert run_once(client, CASE).verdict == "accept"
        return feedback.end_case()
    finally:
        feedback.close()


def test_a_client_s_coverage_is_the_same_from_any_checkout_and_working_folder(
    tmp_path: Path,
) -> None:
    """Two checkouts at other depths, run from the checkout, from the script's folder and
    from a folder outside both: one set of features.  Named from the working folder, each
    file had a relative name in one run and its full path in another."""
    one = _checkout(tmp_path / "one")
    other = _checkout(tmp_path / "a" / "b" / "other")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "links").mkdir()
    link = tmp_path / "links" / "client"
    link.symlink_to(one)
    runs = [
        _python_features((sys.executable, "bin/client.py"), tmp_path / "one"),
        _python_features((sys.executable, "client.py"), one.parent),
        _python_features((sys.executable, str(other)), elsewhere),
        # started through a link (an installed ~/bin/client): a file it loads by its path
        # is named from the script's own folder ('../plugin.py'), not from the link's
        # ('../one/plugin.py')
        _python_features((sys.executable, str(link)), elsewhere),
    ]
    assert runs[0] and runs[0] == runs[1] == runs[2] == runs[3]
    # the client's own code is in them: a change of one line of one module shows
    (tmp_path / "a" / "b" / "other" / "plugin.py").write_text("\n" + CHECK)
    assert _python_features((sys.executable, str(other)), elsewhere) != runs[0]


def test_a_seeded_session_keys_the_same_coverage_from_any_checkout(tmp_path: Path) -> None:
    """A fuzz session of one seed on the reference client copied into two checkouts,
    started from two other working folders: the same coverage seen, the same corpus kept."""
    sessions = []
    for where, cwd in (("one", "one"), ("a/b/other", "elsewhere")):
        python = tmp_path / where / "adapters" / "python"
        shutil.copytree(ADAPTERS / "python", python)
        (tmp_path / cwd).mkdir(parents=True, exist_ok=True)
        argv = (sys.executable, str(python / "reference_client.py"))
        client = Client(argv=argv, mode="persistent", cwd=str(tmp_path / cwd))
        suite = SuiteConfig(
            client, examples=1, seed=5, database_dir=None, failures_dir=tmp_path / where / "f"
        )
        config = FuzzConfig(suite, 600.0, max_cases=40)
        feedback = PythonCoverage()
        try:
            fuzzer = Fuzzer([BY_ID["R1.valid-runs-accepted"]], config, feedback)
            outcome = fuzzer.run()
        finally:
            feedback.close()
        assert feedback.arrived and outcome.cases == 40
        corpus = [[entry.choices for entry in arm.corpus] for arm in fuzzer.arms]
        sessions.append((frozenset(fuzzer.seen), corpus))
    assert sessions[0][0] and sessions[0] == sessions[1]


NODE_CLIENT = """
const dep = require("dep");
const { main } = require("../adapters/node/reference_client.js");
dep.ready();
main();
"""


def _node_checkout(root: Path) -> Path:
    """A checkout of a Node.js client with a package in node_modules/; its script."""
    shutil.copytree(ADAPTERS / "node", root / "adapters" / "node")
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "index.js").write_text(
        "exports.ready = function ready() { return 1; };\n"
    )
    (root / "bin").mkdir()
    (root / "bin" / "client.js").write_text(NODE_CLIENT)
    return root / "bin" / "client.js"


def _node_features(script: Path, cwd: Path) -> frozenset[int]:
    feedback = NodeCoverage()
    try:
        argv = ("node", str(script))
        client = Client(argv=argv, mode="exit", env=feedback.environment(), cwd=str(cwd))
        feedback.start_case()
        assert run_once(client, CASE).verdict == "accept"
        features = feedback.end_case()
        assert list(feedback.folders.values()) == [str(script.parent)]  # as the hook wrote it
        return features
    finally:
        feedback.close()


def test_a_node_script_is_named_from_the_client_s_folder(tmp_path: Path) -> None:
    """A script relative to the folder of the script node runs, a package from
    ``node_modules/`` on, an internal script as it is; a client in two checkouts, one
    run from a folder outside it, gives one set of features."""
    folder = "/home/me/project/bin"
    assert script_name(f"file://{folder}/cli.js", folder) == "cli.js"
    assert script_name("file:///home/me/project/lib/a%20b.js", folder) == "../lib/a b.js"
    dep = "file:///home/me/project/node_modules/dep/node_modules/x/i.js"
    assert script_name(dep, folder) == "node_modules/dep/node_modules/x/i.js"
    assert script_name("node:internal/main", folder) == "node:internal/main"

    scripts = []
    for where in ("one", "a/b/other"):
        scripts.append(_node_checkout(tmp_path / where))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    first = _node_features(scripts[0], tmp_path / "one")
    assert first and first == _node_features(scripts[1], elsewhere)


def test_a_node_client_started_by_npm_run_is_named_from_its_own_folder(tmp_path: Path) -> None:
    """``npm run`` (a package.json script) from two checkouts gives one set of features:
    each node process's coverage file is named from its own folder.  Named from one
    folder, the first node process's, which is npm's, the client's scripts would be
    ``../../../../tmp/…/one/bin/client.js``, different in every checkout."""
    if shutil.which("npm") is None:
        pytest.skip("no npm")
    found = []
    for where in ("one", "a/b/other"):
        root = tmp_path / where
        _node_checkout(root)
        scripts = {"c": "node bin/client.js"}
        (root / "package.json").write_text(
            json.dumps({"name": "c", "version": "1.0.0", "scripts": scripts})
        )
        feedback = NodeCoverage()
        try:
            env = {**feedback.environment(), "npm_config_update_notifier": "false"}
            client = Client(
                argv=("npm", "run", "--silent", "c"), mode="exit", env=env, cwd=str(root)
            )
            feedback.start_case()
            assert run_once(client, CASE).verdict == "accept"
            features = feedback.end_case()
        finally:
            feedback.close()
        assert str(root / "bin") in feedback.folders.values()  # the client's own process
        assert any("/node_modules/" in f for f in feedback.folders.values())  # and npm's
        found.append(features)
    assert found[0] and found[0] == found[1]
