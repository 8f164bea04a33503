"""The proof that no check is a check that cannot fail.

Every reference client passes every check of the profiles it claims, in every mode it
can be graded in; every broken client fails exactly the checks listed for it in
adapters/broken/targets.json and passes (or cannot be graded on) every other check of
those profiles.

Each client is graded in this process as one cell of a compatibility matrix (the code
``stella-conform matrix`` runs, with the hello's claims, the saved failures and the
report ``run`` writes): no kit process to start per client, and every check's generated
cases are drawn once per test worker and replayed to each client graded on the same seed
after it (``suite.generated``'s shared cases).  A client that fails a replayed case gets its own
generation and shrinking, as in a real matrix.  The command line itself is proven in
test_cli_run.py and test_matrix.py.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from conftest import ADAPTERS, JQ_REFERENCE, NODE_REFERENCE, PY_REFERENCE, replay_args
from toolchains import missing

from stella_conform.conformance.checks import BY_ID, CATALOGUE, select
from stella_conform.conformance.clients.runner import Client, ensure_mode_supported, resolve_client
from stella_conform.conformance.matrix import ClientSpec, MatrixConfig, VocabularySpec, run_matrix
from stella_conform.conformance.suite import STRATA_FROM_EXAMPLES, SuiteConfig, run_check

sys.path.insert(0, str(ADAPTERS / "broken"))  # builds.py: how to run each broken client
TARGETS: dict[str, list[str]] = json.loads((ADAPTERS / "broken" / "targets.json").read_text())[
    "clients"
]
#: Cells graded on the same (check, seed, examples) share one generation.
SEED = 1
#: Generated cases per check of a reference client's power run.
EXAMPLES = 5
#: A broken client needs its flaw found (the fixtures find most), and every other check
#: of its profiles passed, not the full search of a power run.
BROKEN_EXAMPLES = 3
#: The same in exit and report mode, where every case is a client process (two for a
#: wrapper): one generated case per check.  A flaw only generated cases find would fail
#: the test (its target not failed), so this cannot hide a check that cannot fail.
BROKEN_EXAMPLES_PER_PROCESS = 1
#: Broken clients need a failure found and saved, not a minimal one: shrinking is tested
#: on its own (tests/generators/test_generators.py and test_hazards.py), and here every shrink step
#: of an exit- or report-mode client is a process (the wrapper clients: two).
MAX_SHRINKS = 0
#: Broken clients whose flaw only one option of a mutation shows (a NUL or U+001F in a
#: corrupt line): a run of the default size grades it in its strata every time
#: (stella_conform.generators.strata), one random example seldom does.
FOUND_BY_STRATA = frozenset(
    {
        "shell/jq_read_loop.sh",
        # the edge values and host-language names are in every run's strata only
        # (generators/edges.py), not among a check's random examples
        "text_or_delta_falsy.js",
        "empty_text_is_missing.py",
        "number_coerces_values.js",
        "int_token_counts.py",
        "dispatch_table_plain_object.js",
        "getattr_dispatch.py",
        "field_validators_in_plain_object.js",
        "hasattr_field_filter.py",
        "go/zero_value_text",
        "go/int64_counters",
        "rust/i64_counters",
        "sqlite_usage_store.py",
        # the seams (generators/seams.py): strata of the checks they concern
        "strips_lines_with_str_strip.py",
        "trims_lines_with_string_trim.js",
        "go/bom_trimmed_per_line",
        "shell/sed_strips_bom.sh",
        "dashboard_decodes_each_read.py",
        "dashboard_decodes_each_chunk.js",
        "go/dashboard_runes_per_read",
        "go/readstring_drops_last_line",
        "shell/read_loop_drops_last_line.sh",
        "dashboard_splitter_drops_tail.js",
        "dashboard_clears_preview_at_tool_call.py",
        "dashboard_commits_preview_at_tool_call.js",
        "go/dashboard_preview_per_step",
        "dashboard_overwrites_streamed_message.py",
        "dashboard_streamed_message_pointer.js",
        "go/dashboard_message_pointer",
        # a case-folded twin of a known field (generators/edges.py): a stratum only
        "go/usage_struct_any_case",
    }
)
PY = sys.executable
RECORDER = (PY, str(ADAPTERS / "python" / "recorder.py"))
DASHBOARD = (PY, str(ADAPTERS / "python" / "dashboard.py"))
ENVELOPE = (PY, str(ADAPTERS / "python" / "envelope_client.py"))
WRAPPER = (PY, str(ADAPTERS / "python" / "wrapper_client.py"))
JOURNAL = (PY, str(ADAPTERS / "python" / "journal_reader.py"))


def grade(
    tmp_path: Path,
    mode: str,
    *command: str,
    profiles: tuple[str, ...] = ("reader",),
    examples: int = EXAMPLES,
    max_shrinks: int = MAX_SHRINKS,
    line_timeout: float = 2.0,
    fixtures_per_check: int | None = None,
) -> dict:
    """The report of one client graded on exactly these profiles' checks.

    As ``run --profile P --only 'P*'`` per profile: ``--profile dashboard`` alone would
    add the reader checks too, proven for these clients elsewhere.
    """
    argv = resolve_client(command)
    timeout = 10.0
    hello = ensure_mode_supported(Client(argv, mode, timeout=timeout))  # type: ignore[arg-type]
    spec = ClientSpec(
        "client", argv, mode, profiles, timeout=timeout, line_timeout=line_timeout, hello=hello
    )
    config = MatrixConfig(
        [spec],
        [VocabularySpec("default")],
        tmp_path,
        examples=examples,
        seed=SEED,
        jobs=1,  # the test workers are the parallelism
        failures_dir=tmp_path / "failures",
        max_shrinks=max_shrinks,
        fixtures_per_check=fixtures_per_check,
    )
    report: dict = run_matrix(config)["cells"][0]["report"]
    return report


def explain(doc: dict) -> str:
    """Every check's outcome and message: what an assertion shows when it fails."""
    return "\n".join(f"{c['outcome']:5} {c['id']}: {c.get('message', '')}" for c in doc["checks"])


def outcomes(doc: dict) -> dict[str, str]:
    return {c["id"]: c["outcome"] for c in doc["checks"]}


def test_every_mechanics_run_has_a_power_run_of_the_same_client() -> None:
    ids = {p.id: p.values for p in REFERENCES}
    assert MECHANICS <= set(ids)
    for name in MECHANICS:
        command = ids[name][1]
        assert any(
            other not in MECHANICS and values[1][:2] == command[:2] for other, values in ids.items()
        ), name


def test_one_go_and_one_cargo_build_for_templates_and_broken_clients() -> None:
    """adapters/broken/builds.py is the one place a Go or Rust client is built:
    the offline Debian registry is configured once, and tests/toolchains.py builds the
    templates through it."""
    needle = "replace-with = " + '"debian"'  # (not spelled whole here)
    spelled = [
        path.relative_to(ADAPTERS.parent).as_posix()
        for folder in ("adapters", "benchmarks", "src", "tests")
        for path in sorted((ADAPTERS.parent / folder).rglob("*.py"))
        if needle in path.read_text(errors="replace")
    ]
    assert spelled == ["adapters/broken/builds.py"]
    from builds import cargo_build, go_build
    from toolchains import _cargo_build, _go_build

    assert (_cargo_build, _go_build) == (cargo_build, go_build)


def test_the_go_and_rust_broken_clients_read_with_the_templates_rules() -> None:
    """No second copy of a template's reader: the broken Go and Rust clients
    are built with the template's own rules (what a line must be, the known bodies, the
    legacy spellings) compiled in, so a fix to a template's reading reaches them."""
    from builds import go_template_rules, rust_template_rules

    broken = ADAPTERS / "broken"
    go = "\n".join(p.read_text() for p in sorted((broken / "go").rglob("*.go")))
    rust = "\n".join(p.read_text() for p in sorted((broken / "rust").rglob("*.rs")))
    for definition in ("func misfit(", "func parseLine(", "func Parse(", "map[string]fits{"):
        assert definition not in go, definition
    for definition in ("TextDelta {", "enum Scope", "struct Stamp", "fn base64_decode("):
        assert definition not in rust, definition
    go_template = (ADAPTERS / "templates" / "go" / "stella_adapter.go").read_text()
    assert go_template.split("package main", 1)[1] in go_template_rules()
    assert "map[string]fits{" in go_template_rules() and "enum Scope" in rust_template_rules()
    for rs in sorted((broken / "rust" / "src" / "bin").glob("*.rs")):
        assert 'include!("../template.rs");' in rs.read_text(), rs.name


@pytest.mark.skipif(not shutil.which("jq"), reason="no jq")
def test_the_jq_client_reads_a_character_its_read_blocks_split(tmp_path: Path) -> None:
    """jq 1.6 turns a four-byte character that its 4 KiB read blocks split into U+FFFD, which
    a client taking U+FFFD for invalid UTF-8 would reject in this valid stream (a
    ``unicode-edges`` case): the client checks each line's bytes before jq sees them."""
    import subprocess

    head = b'{"type":"text","text":"'
    split = head + b"x" * (4096 - len(head) - 2) + "\U0001f642".encode() + b'"}\n'
    stream = tmp_path / "split.jsonl"
    stream.write_bytes(split + b'{"type":"run_complete","model":"m","cost_usd":0.5}\n')
    done = subprocess.run([*JQ_REFERENCE, str(stream)], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(not shutil.which("jq"), reason="no jq")
@pytest.mark.parametrize("control", [b"\x1f", b"\x00", b"\x01"], ids=["US", "NUL", "SOH"])
@pytest.mark.parametrize("how", ["stdin", "file"])
def test_the_jq_client_rejects_a_raw_control_character(
    tmp_path: Path, control: bytes, how: str
) -> None:
    """jq 1.6's lexer takes a raw U+001F in a string and an ``IFS= read -r`` loop drops a
    NUL, so a jq client built on that loop accepts both corrupt streams; the kit's jq client
    refuses them, and the broken client adapters/broken/shell/jq_read_loop.sh keeps that
    loop and accepts them."""
    import subprocess

    data = b'{"type":"text","text":"a' + control + b'b"}\n'
    data += b'{"type":"run_complete","model":"m","cost_usd":0.5}\n'
    stream = tmp_path / "control.jsonl"
    stream.write_bytes(data)
    args, given = ([str(stream)], None) if how == "file" else ([], data)
    done = subprocess.run([*JQ_REFERENCE, *args], input=given, capture_output=True, timeout=60)
    assert done.returncode == 1, done.stderr
    if control != b"\x01":
        loop = ["sh", str(ADAPTERS / "broken" / "shell" / "jq_read_loop.sh")]
        assert subprocess.run(loop, input=data, capture_output=True, timeout=60).returncode == 0


def test_every_check_is_targeted_by_some_broken_client() -> None:
    targeted = {t for targets in TARGETS.values() for t in targets}
    assert targeted == {c.id for c in CATALOGUE}


def test_every_check_but_one_is_some_client_s_only_target() -> None:
    """A client may fail two checks for one flaw; each check is still proven on its own."""
    alone = {targets[0] for targets in TARGETS.values() if len(targets) == 1}
    shared = {c.id for c in CATALOGUE} - alone
    for check_id in shared:
        assert any(check_id in t for t in TARGETS.values()), check_id
    assert shared <= {
        "R3.no-guessing",
        "R3.unknown-counted",
        "R1.object-per-line",
        "R4.bad-body-rejected",
        "R6.corrupt-line-not-last",
        "W.exit-codes-mapped",
    }


def _node() -> pytest.MarkDecorator:
    return pytest.mark.skipif(not shutil.which("node"), reason="no node")


REFERENCES = [
    pytest.param("report", PY_REFERENCE, ("reader", "dashboard"), id="python-report"),
    pytest.param("persistent", PY_REFERENCE, ("reader", "dashboard"), id="python-persistent"),
    pytest.param("exit", PY_REFERENCE, ("reader",), id="python-exit"),
    pytest.param("report", NODE_REFERENCE, ("reader",), id="node-report", marks=_node()),
    pytest.param("persistent", NODE_REFERENCE, ("reader",), id="node-persistent", marks=_node()),
    pytest.param("exit", NODE_REFERENCE, ("reader",), id="node-exit", marks=_node()),
    pytest.param(
        "exit",
        JQ_REFERENCE,
        ("reader",),
        id="jq-exit",
        marks=pytest.mark.skipif(not shutil.which("jq"), reason="no jq"),
    ),
    pytest.param("persistent", DASHBOARD, ("reader", "dashboard"), id="dashboard-persistent"),
    # the reading clients, each taking the non-default side at one point
    # (their seeds: test_reading_clients.py beside this file), and a client of two stellas'
    # types
    pytest.param(
        "persistent",
        (PY, str(ADAPTERS / "python" / "validating_ts_client.py")),
        ("reader", "dashboard"),
        id="validating-ts-persistent",
    ),
    pytest.param(
        "persistent",
        (PY, str(ADAPTERS / "python" / "counts_type_names_client.py")),
        ("reader", "dashboard"),
        id="counts-type-names-persistent",
    ),
    pytest.param(
        "persistent",
        (PY, str(ADAPTERS / "python" / "unknown_tokens_envelope_client.py")),
        ("envelope",),
        id="unknown-tokens-envelope-persistent",
    ),
    pytest.param(
        "persistent",
        (PY, str(ADAPTERS / "python" / "both_versions_client.py")),
        ("reader", "dashboard"),
        id="both-versions-persistent",
    ),
    pytest.param("exit", RECORDER, ("reader", "recorder"), id="recorder-exit"),
    pytest.param("exit", (*RECORDER, "--out", "{record}"), ("recorder",), id="recorder-exit-file"),
    pytest.param("exit", ENVELOPE, ("envelope",), id="envelope-exit"),
    pytest.param("report", ENVELOPE, ("envelope",), id="envelope-report"),
    pytest.param("persistent", ENVELOPE, ("envelope",), id="envelope-persistent"),
    pytest.param("exit", JOURNAL, ("trace",), id="journal-exit"),
    pytest.param("report", JOURNAL, ("trace",), id="journal-report"),
    pytest.param("persistent", JOURNAL, ("trace",), id="journal-persistent"),
    pytest.param("exit", WRAPPER, ("wrapper",), id="wrapper-exit"),
    pytest.param("report", WRAPPER, ("wrapper",), id="wrapper-report"),
    pytest.param(
        "report", (*WRAPPER, "--format", "stream-json"), ("wrapper",), id="wrapper-stream-json"
    ),
]


#: Runs that prove a mode's mechanics (exit codes, lockstep, a {record} file) for a client
#: whose power is proven by the full examples and every fixture in another of its runs
#: (persistent mode, or the wrapper's report mode): every check is still graded in the
#: mode, on one generated case and its first fixture (``fixtures_per_check``).  The first
#: fixtures include accepted and rejected streams (R1.valid-runs-accepted's minimal run,
#: R1.object-per-line's, R4's and R6's rejections), a torn line, lockstep in report mode
#: and each recorder check's record file.  A wrapper's fixtures are the exit codes and
#: signals it maps, its exit mode's own rule: all of them run there.
MECHANICS = {
    "python-report", "python-exit", "node-report", "node-exit", "recorder-exit-file",
    "envelope-exit", "envelope-report", "journal-exit", "journal-report", "wrapper-exit",
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "command", "profiles"), REFERENCES)
def test_reference_client_is_conformant(
    tmp_path: Path,
    request: pytest.FixtureRequest,
    mode: str,
    command: tuple[str, ...],
    profiles: tuple[str, ...],
) -> None:
    mechanics = request.node.callspec.id in MECHANICS
    sampled = mechanics and "wrapper" not in profiles
    doc = grade(
        tmp_path, mode, *command, profiles=profiles, examples=1 if mechanics else EXAMPLES,
        fixtures_per_check=1 if sampled else None,
    )  # fmt: skip
    got = outcomes(doc)
    assert doc["exit_code"] == 0, explain(doc)
    assert doc.get("fixtures_per_check") == (1 if sampled else None)  # the report says so
    if sampled:  # one fixture and one generated case at most
        assert max(c["cases"] for c in doc["checks"]) <= 2, explain(doc)
    for check in select(profiles):
        expected = "pass" if check.grades_in(mode) else "skip"
        if check.id == "W.stopped-reason-read" and "stream-json" in command:
            expected = "skip"  # the reason is in the json envelope; this client reads the stream
        assert got[check.id] == expected, (check.id, explain(doc))


def broken_command(client: str) -> tuple[str, ...]:
    """How to run a broken client: Python, Node.js, or a Go or Rust program built once per
    checkout and toolchain (adapters/broken/builds.py; a test session reuses the build)."""
    from builds import Unavailable, command

    try:
        return tuple(command(client))
    except Unavailable as exc:
        missing(str(exc))
        raise


def _mode_for(targets: set[str], client: str) -> str:
    profiles = {BY_ID[t].profile for t in targets}
    if "recorder" in profiles or client.startswith("shell/"):  # sh + jq: exit codes only
        return "exit"
    if "wrapper" in profiles or "R1.line-by-line" in targets:
        return "report"  # lockstep and W.stopped-reason-read are only observable there
    return "persistent"


@pytest.mark.slow
@pytest.mark.parametrize("client", sorted(TARGETS))
def test_broken_client_fails_exactly_its_targets(tmp_path: Path, client: str) -> None:
    targets = set(TARGETS[client])
    profiles = tuple(sorted({BY_ID[t].profile for t in targets}))
    mode = _mode_for(targets, client)
    line_timeout = 0.2 if "R1.line-by-line" in targets else 2.0
    command = broken_command(client)
    doc = grade(
        tmp_path, mode, *command, profiles=profiles,
        examples=STRATA_FROM_EXAMPLES if client in FOUND_BY_STRATA
        else BROKEN_EXAMPLES if mode == "persistent" else BROKEN_EXAMPLES_PER_PROCESS,
        line_timeout=line_timeout,
    )  # fmt: skip
    got = outcomes(doc)
    failing = {cid for cid, outcome in got.items() if outcome in ("fail", "warn")}
    assert failing == targets, explain(doc)
    assert not [cid for cid, outcome in got.items() if outcome in ("crash", "error")], explain(doc)
    must_fail = any(BY_ID[t].tier == "MUST" for t in targets)
    assert doc["exit_code"] == (1 if must_fail else 0), explain(doc)
    for check_id in targets:
        entry = next(c for c in doc["checks"] if c["id"] == check_id)
        assert entry["failures"], check_id
        failure = entry["failures"][0]
        assert failure["replay"] and replay_args(failure["replay"])[1] == failure["saved"]
        saved = failure["saved"]
        assert saved.startswith("fixture:") or Path(tmp_path, saved).exists(), saved


READINGS: dict[str, dict[str, list[str]]] = json.loads(
    (ADAPTERS / "python" / "readings.json").read_text()
)["clients"]
READING_CASES = [
    pytest.param(client, mode, id=f"{client.removesuffix('.py')}-{mode}")
    for client in sorted(READINGS)
    for mode in ("exit", "report", "persistent")
]


@pytest.mark.parametrize(
    "command", [PY_REFERENCE, pytest.param(NODE_REFERENCE, marks=_node())], ids=["python", "node"]
)
def test_lockstep_on_every_fixture_where_the_report_run_is_sampled(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    """R1.line-by-line grades in report mode only, and these clients' report runs are
    mechanics runs on a sample of the fixtures: no other run of theirs proves lockstep on
    every fixture, so this one does (a process per case, a handful of cases)."""
    check = BY_ID["R1.line-by-line"]
    client = Client(resolve_client(command), "report", timeout=10.0, line_timeout=2.0)
    config = SuiteConfig(
        client, examples=1, seed=SEED, failures_dir=tmp_path / "failures", database_dir=None
    )
    result = run_check(check, config)
    assert result.outcome == "pass", result.message
    assert result.cases == len(check.fixtures) + 1


@pytest.mark.slow
@pytest.mark.parametrize(("client", "mode"), READING_CASES)
def test_readings_clients_fail_only_what_no_reading_allows(
    tmp_path: Path, client: str, mode: str
) -> None:
    """Opposite readings everywhere both pass; stella's reader fails only for its two bugs.

    Fixtures only (plus a few generated cases for the reading-B client in persistent mode,
    and one per check in exit mode):
    the point is which reading each fixture allows, and generated cases add cost, not
    coverage, here.  The generated cases of a check are the same in every mode (one seed,
    shared generation), so the persistent run grades the ones an exit or report run would
    send again, there one process each.
    """
    expected = set(READINGS[client][mode])
    profiles = ("reader", "dashboard") if mode != "exit" else ("reader",)
    command = (PY, str(ADAPTERS / "python" / client))
    # exit mode judges the verdict alone against each reading (no summary): its own path,
    # so one generated case per check there too
    examples = (3 if mode == "persistent" else 1 if mode == "exit" else 0) if not expected else 0
    doc = grade(tmp_path, mode, *command, profiles=profiles, examples=examples)
    got = outcomes(doc)
    failing = {cid for cid, o in got.items() if o in ("fail", "crash", "warn", "error")}
    assert failing == expected, explain(doc)
    for check in select(profiles):
        if check.id not in expected and check.grades_in(mode):
            assert got[check.id] == "pass", (check.id, explain(doc))
    if client == "reading_b_client.py" and mode != "exit":
        taken = {r for c in doc["checks"] for r in c["readings"]}
        assert any(r.endswith("=B") for r in taken) and not any(r.endswith("=A") for r in taken)
