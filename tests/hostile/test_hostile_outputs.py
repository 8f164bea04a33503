"""Every output of every command, fed the same hostile text: nothing in it acts.

A client controls its rejection reasons, its stderr, its first line and its hello; a
config controls a client's name; the user's disk controls file and folder names.  Each
test here runs a command on small hostile clients (Python scripts written to the test's
folder) whose every word is :data:`EVIL`, and reads every output the command has:
stdout and stderr (colour off), and each report file.  None may carry

- a raw control or invisible character (an escape sequence retitles the window or writes
  the clipboard, a NUL or CR rewrites what the reader sees, U+202E reorders a line), other
  than the output's own newlines and tabs;
- a line that GitHub Actions would run as a workflow command (``::error::``);
- live HTML, links or @mentions in a Markdown or HTML file.

The escaping itself is :mod:`stella_conform.safe_text`, one function per kind of output;
``tests/test_safe_text.py`` checks those rules character by character.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hostile_kit import (  # noqa: F401 (no_leaks: autouse, the leak check)
    kit,
    no_leaks,
)

from stella_conform.oracle.corpus import bundled_fixtures_dir

#: What a hostile client says, whatever it says: OSC 0 (window title) and OSC 52 (the
#: clipboard), BEL, NUL, CR, a newline that starts a workflow command, U+202E, a C1 CSI,
#: HTML that runs script, a Markdown link and an @mention, a screen clear.
EVIL = (
    "\x1b]0;pwned-title\x07\x1b]52;c;cHduZWQ=\x07\x07\x00\r\n::error::pwned"
    " \u202eevil <img src=x onerror=alert(1)> [link](http://x) @mention \x1b[2J\x9b31m"
)

#: The same, as a file or folder name (no slash, no NUL: a name the disk can hold).
EVIL_NAME = (
    "n\x1b]0;pwned-title\x07\x1b]52;c;cHduZWQ=\x07\r\n::error::pwned"
    " \u202e<img src=x onerror=alert(1)> [link](http:x) @mention"
)

#: What acts on a terminal, or reorders or hides text: C0 (but newline and tab), DEL,
#: C1, bidirectional controls, zero-width and invisible format characters, separators.
ACTING = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb]"
)

#: How the kit defuses a workflow command: a zero-width space between its two colons.
DEFUSED = ":\u200b:"


def assert_inert(where: str, text: str) -> None:
    """No acting character and no workflow command in ``text`` (one output)."""
    acting = [
        repr(text[max(0, m.start() - 24) : m.end() + 8])
        for m in ACTING.finditer(text)
        if text[max(0, m.start() - 1) : m.end() + 1] != DEFUSED
    ]
    assert not acting, f"{where}: raw control characters at {acting[:3]}"
    commands = [line for line in text.split("\n") if line.lstrip().startswith("::")]
    assert not commands, f"{where}: workflow command lines {commands[:3]}"


def assert_inert_markdown(where: str, text: str) -> None:
    """:func:`assert_inert`, and outside code spans no HTML, link or @mention is left."""
    assert_inert(where, text)
    fence = None
    for line in text.splitlines():
        if fence is None and (opened := re.match(r"(`{3,})", line)):
            fence = opened.group(1)  # a code block: literal to its closing fence
            continue
        if fence is not None:
            fence = None if line == fence else fence
            continue
        outside = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", line)  # text outside code spans
        outside = re.sub(r"<br>", "", outside)
        outside = re.sub(r"<code>[^<]*</code>", "", outside)  # names: no < inside them
        live = [c for c in ("<", "](", "http:") if c in outside] + re.findall(r"@\w+", outside)
        assert not live, f"{where}: live Markdown {live} in {line!r}"


def assert_inert_html(where: str, text: str) -> None:
    """:func:`assert_inert`, and only the page's own elements, none with a handler."""
    assert_inert(where, text)
    seen: list[tuple[str, list[tuple[str, str | None]]]] = []

    class Parser(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            seen.append((tag, attrs))

    Parser().feed(text)
    assert not [t for t, _ in seen if t in ("img", "script", "a", "iframe")], where
    assert not [a for _, attrs in seen for a, _ in attrs if a.startswith("on")], where


def assert_inert_file(path: Path) -> None:
    """One report file, as its kind is read: valid, and inert."""
    text = path.read_text(encoding="utf-8")
    where = path.name.encode("unicode_escape").decode()
    if path.suffix == ".json":
        json.loads(text)
        assert_inert(where, text)
    elif path.suffix == ".xml":
        ET.fromstring(text.encode("utf-8"))
        assert_inert(where, text)
    elif path.suffix == ".md":
        assert_inert_markdown(where, text)
    elif path.suffix == ".html":
        assert_inert_html(where, text)
    else:
        raise AssertionError(f"no reader for {path}")


def assert_inert_run(done: object, command: str) -> None:
    """A command's stdout and stderr (a CompletedProcess)."""
    assert_inert(f"{command} stdout", done.stdout)  # type: ignore[attr-defined]
    assert_inert(f"{command} stderr", done.stderr)  # type: ignore[attr-defined]


_CLIENT_HEAD = f"""\
import json, sys
EVIL = {EVIL!r}
def out(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()
"""

#: Report mode: a hello naming it EVIL, every stream rejected at line 1 with EVIL as
#: the reason, EVIL on stderr.
REJECTER = (
    _CLIENT_HEAD
    + """
out({"kind": "hello", "protocol": 1, "client": {"name": EVIL}, "profiles": ["reader"],
     "modes": ["report"]})
line = sys.stdin.readline()
sys.stderr.write(EVIL + "\\n" + EVIL + "\\n")
if line:
    out({"kind": "line", "line": 1, "outcome": "reject", "reason": EVIL})
    out({"kind": "summary", "verdict": "reject", "rejected_line": 1})
    sys.exit(1)
out({"kind": "summary", "verdict": "accept"})
"""
)

#: Any mode: EVIL as its first line of stdout (not a hello, so ``--mode auto`` says it
#: in its reason); the first stream it is given (the kit's first contact) accepted, every
#: later one a crash: a Python traceback ending in EVIL on stderr, exit 1.
CRASHER = (
    _CLIENT_HEAD
    + """
import os
print(EVIL, flush=True)
given = sys.stdin.buffer.read()
first = __file__ + ".answered"
if given and not os.path.exists(first) and "unstartable" not in __file__:
    open(first, "w").close()
    sys.exit(0)
sys.stderr.write("Traceback (most recent call last):\\n  File \\"x.py\\", line 1, in <module>\\n")
sys.stderr.write("KeyError: " + EVIL + "\\n")
sys.exit(1)
"""
)

#: Every client, and what ``run`` exits with for it: a rejection (fail), a crash, and a
#: client that crashes on first contact (not graded: the reports say why).
CLIENTS = {"rejecter": (REJECTER, 1), "crasher": (CRASHER, 1), "unstartable": (CRASHER, 2)}


def write_client(tmp_path: Path, name: str, source: str) -> list[str]:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return [sys.executable, str(path)]


def hostile_folder(tmp_path: Path) -> Path:
    folder = tmp_path / EVIL_NAME
    folder.mkdir()
    return folder


def report_options(folder: Path) -> list[str]:
    return [
        "--json", str(folder / "r.json"), "--junit-xml", str(folder / "r.xml"),
        "--markdown", str(folder / "r.md"), "--failures-dir", str(folder / "failures"),
    ]  # fmt: skip


ONLY = ("--only", "R1.valid-runs-accepted")


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_run_prints_and_writes_no_hostile_text(tmp_path: Path, client: str) -> None:
    """``run``: its progress, its report, report.json, JUnit, Markdown, saved in a folder
    with a hostile name; then ``replay`` of the saved case, at that path."""
    source, status = CLIENTS[client]
    argv = write_client(tmp_path, client, source)
    folder = hostile_folder(tmp_path)
    done = kit(
        "run", "--mode", "auto", "--examples", "1", "--no-database", "--no-case-cache",
        "-j", "1", "--color", "never", "--max-shrinks", "0", *ONLY, *report_options(folder),
        "--", *argv, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == status, done.stderr
    assert_inert_run(done, "run")
    for name in ("r.json", "r.xml", "r.md"):
        assert_inert_file(folder / name)
    assert "pwned" in done.stdout + done.stderr  # the client's words are there, as text
    if client != "rejecter":
        return
    saved = sorted((folder / "failures").rglob("*.jsonl"))
    assert saved, "run saved no failing case"
    # (options first: the leak check logs the command's first two words, one line each)
    done = kit("replay", "--mode", "report", str(saved[0]), "--", *argv, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert_inert_run(done, "replay")


def test_replay_of_a_fixture_prints_no_hostile_text(tmp_path: Path) -> None:
    argv = write_client(tmp_path, "rejecter", REJECTER)
    done = kit("replay", "fixture:minimal_run", "--mode", "report", "--", *argv, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert_inert_run(done, "replay")
    assert "pwned" in done.stdout


def test_fuzz_prints_and_writes_no_hostile_text(tmp_path: Path) -> None:
    """``fuzz``: its "found after" line and its section of every report carry the reason
    escaped, as ``run``'s table does."""
    argv = write_client(tmp_path, "rejecter", REJECTER)
    folder = hostile_folder(tmp_path)
    done = kit(
        "fuzz", "--mode", "report", "--max-cases", "3", "--no-database", "--color", "never",
        "--max-shrinks", "0", *ONLY, *report_options(folder), "--", *argv, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "found after" in done.stdout
    assert_inert_run(done, "fuzz")
    for name in ("r.json", "r.xml", "r.md"):
        assert_inert_file(folder / name)
    found = [line for line in (folder / "r.md").read_text().splitlines() if "found after" in line]
    assert found and "pwned" in found[0]


def _matrix_config(tmp_path: Path, argv: list[str], *more: list[str]) -> Path:
    """A matrix of clients named EVIL (then EVIL 2, ...) and a vocabulary named EVIL v."""
    clients = "".join(
        f"[[client]]\nname = {json.dumps(EVIL + (f' {n}' if n else ''))}\n"
        f'command = {json.dumps(command)}\nmode = "report"\n\n'
        for n, command in enumerate([argv, *more])
    )
    config = tmp_path / "m.toml"
    config.write_text(
        f"[matrix]\nexamples = 0\njobs = 1\n\n{clients}"
        f'[[vocabulary]]\nname = {json.dumps(EVIL + " v")}\nvocabulary = "stella-default"\n'
    )
    return config


def test_matrix_prints_and_writes_no_hostile_text(tmp_path: Path) -> None:
    """``matrix``: clients and a vocabulary named with EVIL, a client that rejects with it
    and one that cannot be graded (its cell says why): the progress, the summary,
    matrix.json, matrix.md and matrix.html."""
    argv = write_client(tmp_path, "rejecter", REJECTER)
    unstartable = write_client(tmp_path, "unstartable", CRASHER)
    config = _matrix_config(tmp_path, argv, unstartable)
    out = hostile_folder(tmp_path)
    done = kit("matrix", str(config), "--out", str(out), "-v", cwd=tmp_path)
    assert done.returncode == 2, done.stderr  # a client could not be graded
    assert_inert_run(done, "matrix")
    assert "pwned" in done.stdout  # the row's name, escaped
    for name in ("matrix.json", "matrix.md", "matrix.html"):
        assert_inert_file(out / name)
    assert "not graded" in (out / "matrix.html").read_text()


def test_matrix_markdown_writes_no_name_raw(tmp_path: Path) -> None:
    """A client named with HTML, a mention and table syntax: matrix.md holds none of it raw
    (it kept ``<script>`` inside a code span, for any renderer that is not CommonMark's)."""
    from stella_conform.conformance import matrix as m
    from stella_conform.conformance.matrix.document import matrix_document
    from stella_conform.conformance.matrix.run import cell_suite_config
    from stella_conform.conformance.suite import CheckResult

    name = "<script>alert(1)</script> @octocat | [x](https://evil.invalid) *b*"
    (tmp_path / "m.toml").write_text(
        f'[matrix]\nexamples = 0\n\n[[client]]\nname = {json.dumps(name)}\ncommand = ["true"]\n'
        'mode = "exit"\n\n[[vocabulary]]\nname = "<img src=x>"\nvocabulary = "stella-default"\n'
    )
    config = m.load_config(tmp_path / "m.toml")
    tasks = config.tasks()
    suites = [cell_suite_config(config, c, v) for c, v in config.cells()]
    cell, check = tasks[0]
    failed = CheckResult(check.id, check.name, check.rule, check.tier, "fail", "wrong")
    text = m.to_markdown(matrix_document(config, tasks, suites, {(cell, check.id): failed}, None))
    for raw in ("<script", "<img", "@octocat", "](", "*b*", "| [x"):
        assert raw not in text, raw
    assert "&#60;script&#62;alert&#40;1&#41;&#60;/script&#62; &#64;octocat" in text


def test_report_merge_prints_and_writes_no_hostile_text(tmp_path: Path) -> None:
    """``report merge`` of a shard report and of a matrix shard, from a hostile folder."""
    argv = write_client(tmp_path, "rejecter", REJECTER)
    folder = hostile_folder(tmp_path)
    shard = folder / "shard.json"
    done = kit(
        "run", "--mode", "report", "--examples", "0", "--no-database", "-j", "1",
        "--color", "never", "--shard", "1/1", *ONLY, "--json", str(shard),
        "--failures-dir", str(folder / "failures"), "--", *argv, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    done = kit("report", "merge", str(tmp_path / "merged.json"), str(shard), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert_inert_run(done, "report merge")
    assert_inert_file(tmp_path / "merged.json")
    config = _matrix_config(tmp_path, argv)
    done = kit("matrix", str(config), "--out", str(folder / "m"), "--shard", "1/1", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    merged = [str(tmp_path / n) for n in ("mm.json", "mm.md", "mm.html")]
    args = ["report", "merge", "--markdown", merged[1], "--html", merged[2], merged[0]]
    done = kit(*args, str(folder / "m" / "matrix.json"), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert_inert_run(done, "report merge (matrix)")
    for path in merged:
        assert_inert_file(Path(path))


def test_report_merge_names_a_hostile_output_path_escaped(tmp_path: Path) -> None:
    from conftest import kit_inline
    from test_hostile_reports import poisoned_matrix

    shard = tmp_path / "shard.json"
    shard.write_text(json.dumps(poisoned_matrix("1/1")))
    done = kit_inline("report", "merge", str(hostile_folder(tmp_path) / "m.json"), str(shard))
    assert done.returncode == 0, done.stderr
    assert_inert_run(done, "report merge")


def test_init_prints_no_hostile_folder_name(tmp_path: Path) -> None:
    folder = tmp_path / EVIL_NAME
    done = kit("init", "python", str(folder), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert_inert_run(done, "init")
    assert (folder / "stella_adapter.py").is_file()
    cd = next(line for line in done.stdout.splitlines() if line.lstrip().startswith("cd "))
    went = subprocess.run(
        ["bash", "-c", f"{cd} && pwd -P"], cwd=tmp_path, capture_output=True, timeout=60
    )  # the step it prints is one a shell runs as it is
    assert went.stdout.decode().rstrip("\n") == str(folder.resolve()), went
    done = kit("init", "python", str(folder), cwd=tmp_path)  # exists: the error names it
    assert done.returncode == 2
    assert_inert_run(done, "init (exists)")


def _hostile_stream(tmp_path: Path) -> Path:
    """A stream whose names, types and texts are EVIL, and a corrupt line of it raw."""
    lines = [
        json.dumps({"type": "stage", "name": EVIL, "scope": "turn"}),
        json.dumps({"type": EVIL, "text": EVIL}),
        json.dumps({"type": "text", "text": EVIL}),
        EVIL.replace("\n", " "),
        json.dumps({"type": "run_complete", "model": EVIL, "cost_usd": 0.1}),
    ]
    path = hostile_folder(tmp_path) / f"{EVIL_NAME}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    "command",
    [
        ("decode", "--vocabulary", "stella-default"),
        ("decode", "--json"),
        ("validate", "--vocabulary", "stella-default"),
    ],
)
def test_decode_and_validate_print_no_hostile_text(tmp_path: Path, command: tuple[str]) -> None:
    stream = _hostile_stream(tmp_path)
    done = kit(*command, str(stream), cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    assert_inert_run(done, " ".join(command))


def test_report_diff_writes_no_hostile_markdown(tmp_path: Path) -> None:
    """``report diff``: a Markdown table for a pull-request comment, from two reports that
    anyone may have edited."""
    argv = write_client(tmp_path, "rejecter", REJECTER)
    new = tmp_path / "new.json"
    done = kit(
        "run", "--mode", "report", "--examples", "0", "--no-database", "-j", "1",
        "--color", "never", *ONLY, "--json", str(new), "--", *argv, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    old = json.loads(new.read_text())
    for check in old["checks"]:
        check.update(outcome="pass", message=EVIL, failures=[])
    (tmp_path / "old.json").write_text(json.dumps(old))
    for options in ((), ("--json",)):
        done = kit("report", "diff", "old.json", "new.json", *options, cwd=tmp_path)
        assert done.returncode == 1, done.stderr
        assert_inert_run(done, "report diff")
        if not options:
            assert_inert_markdown("report diff", done.stdout)


def test_smoke_prints_no_hostile_text(tmp_path: Path) -> None:
    argv = write_client(tmp_path, "rejecter", REJECTER)
    done = kit("smoke", "--mode", "report", "--", *argv, cwd=tmp_path)
    assert_inert_run(done, "smoke")


def test_trace_check_prints_no_hostile_text(tmp_path: Path) -> None:
    fixture = bundled_fixtures_dir() / "trace" / "resume_lost_work.jsonl"
    journal = tmp_path / "journal.jsonl"
    journal.write_text(fixture.read_text().replace("context_compacted", json.dumps(EVIL)[1:-1]))
    for options in ((), ("--json",)):
        done = kit("trace", "check", *options, str(journal), cwd=tmp_path)
        assert done.returncode == 1, done.stderr
        assert_inert_run(done, "trace check")


#: The kit's own colours (conformance/report/terminal.py): the only escape sequences an
#: output with colour on may hold; the progress line's rewrite on a terminal is not used
#: when stderr is a pipe.
KIT_COLOURS = re.compile(r"\x1b\[(?:32|1;31|33|1;35|2|0)m")


@pytest.mark.slow
@pytest.mark.parametrize("command", ["run", "fuzz"])
def test_with_colour_and_every_case_shown_only_the_kit_colours_act(
    tmp_path: Path, command: str
) -> None:
    """``--color always -v`` and a known-failures file whose reason is EVIL: every failing
    case shown, a known failure among them; no escape sequence but the kit's colours."""
    argv = write_client(tmp_path, "rejecter", REJECTER)
    known = tmp_path / "known.toml"
    known.write_text(f'[known-failures]\n"R1.line-by-line" = {json.dumps(EVIL)}\n')
    folder = hostile_folder(tmp_path)
    bound = ("--examples", "3", "-j", "2") if command == "run" else ("--max-cases", "20")
    done = kit(
        command, "--mode", "report", *bound, "--no-database", "--color", "always", "-v",
        "--only", "R1.*", "--known-failures", str(known), *report_options(folder),
        "--", *argv, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert KIT_COLOURS.search(done.stdout), "no colour: the sweep tests nothing"
    assert_inert(f"{command} stdout", KIT_COLOURS.sub("", done.stdout))
    assert_inert(f"{command} stderr", KIT_COLOURS.sub("", done.stderr))
    for name in ("r.json", "r.xml", "r.md"):
        assert_inert_file(folder / name)


def test_the_pytest_plugin_reports_no_hostile_text(tmp_path: Path) -> None:
    """The plugin's failure, skip and warning texts, in pytest's own report: a parser that
    rejects every stream with EVIL as its reason, graded by ``conformance_tests``."""
    (tmp_path / "test_evil.py").write_text(
        textwrap.dedent(
            f"""
            from stella_conform.pytest_plugin import conformance_tests
            EVIL = {EVIL!r}
            def parse(lines):
                raise ValueError(EVIL)
            test_evil = conformance_tests(parse, examples=0, only=["R1.*", "R3.*"])
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", "test_evil.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr  # the checks fail
    assert "FAILED" in done.stdout
    assert_inert_run(done, "pytest with the plugin")
