"""The checks of a persistent run share one client process, R3.no-loud-warning too.

Every client start is CPU the client alone would not spend (45 ms for the Python reference
client, 110 ms for the Node.js one: as much as grading 40 or 100 of its cases), and a run
started three where one does.  R3.no-loud-warning counts the stderr lines a client writes
for unrecognized events against its own baseline case; in a process that earlier checks
have used, that count must see every line, not only the first 64 KiB of stderr the kit
keeps.  Counted in processes and verdicts, never in time.
"""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import ADAPTERS, PY_REFERENCE

from stella_conform.conformance.checks import BY_ID
from stella_conform.conformance.clients.runner import Client
from stella_conform.conformance.suite import SuiteConfig, run_check, run_suite, shared_sessions

#: Writes one line with its process id to a log, then runs the client it wraps; with
#: ``--chatty``, 200 KiB of stderr first (a client that logs a lot at start).
WRAPPER = """
import os, runpy, sys
with open(sys.argv[1], "a") as log:
    log.write(f"{os.getpid()}\\n")
if sys.argv[2] == "--chatty":
    for n in range(4000):
        sys.stderr.write(f"starting up, step {n:05}: " + "x" * 30 + "\\n")
    sys.stderr.flush()
sys.argv = sys.argv[3:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""

CHECKS = ("R1.valid-runs-accepted", "R3.unknown-type-inert", "R3.no-loud-warning",
          "R6.torn-final-line")  # fmt: skip


def _graded(tmp_path: Path, client: str, chatty: bool) -> tuple[dict[str, str], int]:
    wrapper = tmp_path / "wrapper.py"
    wrapper.write_text(WRAPPER)
    starts = tmp_path / "starts"
    argv = (sys.executable, str(wrapper), str(starts), "--chatty" if chatty else "-", client)
    config = SuiteConfig(
        client=Client(argv, mode="persistent", timeout=20.0),
        examples=3,
        database_dir=None,
        failures_dir=tmp_path / "failures",
    )
    results = run_suite([BY_ID[c] for c in CHECKS], config, jobs=1)
    return {r.id: r.outcome for r in results}, len(starts.read_text().split())


def test_the_checks_of_a_run_share_a_client_process(tmp_path: Path) -> None:
    """The quiet check graded first, on the run's first process, which every check after it
    shares: one start a run, not a second, fresh process for the quiet check."""
    outcomes, starts = _graded(tmp_path, PY_REFERENCE[1], chatty=True)
    assert set(outcomes.values()) == {"pass"}, outcomes
    assert starts == 1
    assert list(outcomes) == list(CHECKS)  # results in the order asked for all the same


#: The reference reader, telling its user once per process that a stream held event types
#: it does not know: the quiet check fails it alone, so it must fail it after any check.
NOTICE_ONCE = """
import os, sys
sys.path.insert(0, {python!r})
from stella_reader import Adapter, Reader, main

told = []


class Noticing(Reader):
    def on_unknown(self, line, event):
        super().on_unknown(line, event)
        if not told:
            told.append(True)
            sys.stderr.write("note: this stream has event types this reader does not know\\n")
            sys.stderr.flush()


class Once(Adapter):
    reader_class = Noticing


main(Once)
"""


def test_the_quiet_check_s_verdict_does_not_depend_on_the_checks_before_it(
    tmp_path: Path,
) -> None:
    client = tmp_path / "notice_once.py"
    client.write_text(NOTICE_ONCE.format(python=str(ADAPTERS / "python")))
    alone = SuiteConfig(
        client=Client((sys.executable, str(client)), mode="persistent", timeout=20.0),
        examples=3,
        database_dir=None,
        failures_dir=tmp_path / "failures",
    )
    [quiet] = run_suite([BY_ID["R3.no-loud-warning"]], alone, jobs=1)
    assert quiet.outcome == "fail", quiet.message
    # after R3.unknown-type-inert has made the process say it once
    outcomes, starts = _graded(tmp_path, str(client), chatty=False)
    assert outcomes["R3.no-loud-warning"] == "fail", outcomes
    assert outcomes["R3.unknown-type-inert"] == "pass" and starts == 1


def test_a_warning_after_64_kib_of_earlier_stderr_still_fails_the_quiet_check(
    tmp_path: Path,
) -> None:
    warns = str(ADAPTERS / "broken" / "warns_on_unknown_type.py")
    outcomes, starts = _graded(tmp_path, warns, chatty=True)
    assert outcomes["R3.no-loud-warning"] == "fail", outcomes
    assert outcomes["R1.valid-runs-accepted"] == "pass" and starts == 1


def test_the_quiet_check_graded_after_another_gets_a_fresh_process(tmp_path: Path) -> None:
    """The rule behind the order: in a worker that graded another check first, the quiet
    check starts a fresh process, and fails a client that warns once per process all the
    same."""
    client = tmp_path / "notice_once.py"
    client.write_text(NOTICE_ONCE.format(python=str(ADAPTERS / "python")))
    wrapper = tmp_path / "wrapper.py"
    wrapper.write_text(WRAPPER)
    starts = tmp_path / "starts"
    argv = (sys.executable, str(wrapper), str(starts), "-", str(client))
    config = SuiteConfig(
        client=Client(argv, mode="persistent", timeout=20.0),
        examples=3,
        database_dir=None,
        failures_dir=tmp_path / "failures",
    )
    with shared_sessions():
        first = run_check(BY_ID["R3.unknown-type-inert"], config)
        quiet = run_check(BY_ID["R3.no-loud-warning"], config)
    assert first.outcome == "pass", first.message
    assert quiet.outcome == "fail", quiet.message
    assert len(starts.read_text().split()) == 2
