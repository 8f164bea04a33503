"""Console blocks in the docs, re-run: shown output is real output, checked or rewritten.

A fenced block in README.md or docs/*.md whose lines start with ``$ `` is a console
session: each ``$ `` line (with its ``\\``-continued lines) is a command, the lines after
it are what it printed (stdout and stderr together, as a terminal shows them).  Every
block that shows output is re-run, from a scratch folder where the repository's
top-level entries are linked (so relative paths work and nothing is written into the
checkout), with the checkout's ``.venv/bin`` first on ``PATH``.

Variable parts are written as ``…``: inside a line it matches any text, and a line that
is only ``…`` matches any number of lines.  Durations and dates are made ``…`` in what
is written back, so they never count as drift.

An HTML comment on the line before the fence adjusts a block:
``<!-- console: cwd=tests/crashing -->`` runs it from that folder;
``<!-- console: setup=COMMAND -->`` runs a hidden command first, from the top of the
scratch folder (``;`` separates settings); ``<!-- console: needs=go,cargo -->`` names the
toolchains it needs (a program on PATH, or ``typescript``: the compiler ``.ci/run`` puts in
``.ci/.toolchains/ts``; ``vitest``: the one it puts in ``.ci/.toolchains/vitest``;
``serde``: Debian's Rust crates), and a block whose toolchains are
missing is skipped (failed under ``.ci/run``); ``<!-- console: not run: REASON -->`` exempts
it, and the reason is shown where the block is.  A block of commands without output
shows nothing to check.

A code block of any other kind preceded by ``<!-- console: file=NAME -->`` is a file: the
console blocks after it in the same document run with it written, as ``NAME``, in the
folder they run in (so a program the docs show in full is the program they run).

Per-check progress lines (``[3/17] PASS ...``, printed without a terminal) are left out,
as a terminal rewrites them in place; ``progress=keep`` shows them, sorted, their
position and time ``…``, since workers finish in any order.

``tests/test_docs.py`` checks every block; ``scripts/regen-docs`` rewrites the output of
the blocks that drifted (it keeps a block whose ``…`` still match).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCS = ("README.md", "docs")
WILD = "…"
FENCE = re.compile(r"^```(\w*)\s*$")
DIRECTIVE = re.compile(r"^<!--\s*console:\s*(.*?)\s*-->\s*$")
#: Output that differs from run to run, whatever the code does.
VOLATILE = (
    (re.compile(r"\b\d+(\.\d+)?s\b(?=[ )=]|$)"), f"{WILD}s"),  # durations: 4.26s, in 1s
    (re.compile(r"\(\d+:\d\d:\d\d\)"), f"({WILD})"),  # pytest's (0:01:10)
    (re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\+00:00|Z)?"), WILD),  # dates
    (re.compile(r"\(\d+(\.\d+)? s\)"), f"({WILD} s)"),  # a check's time: (4.1 s)
    (re.compile(r"with \d+ worker\(s\)"), f"with {WILD} worker(s)"),  # -j defaults to the CPUs
    # where the kit is installed: the checkout's src/, or site-packages of a wheel
    (re.compile(r"[^\s'\"]*/stella_conform/"), f"{WILD}/stella_conform/"),
)
#: Lines whose order depends on scheduling (a run's per-check progress on stderr).
UNORDERED = re.compile(r"^\[\d+/\d+\] ")
TIMEOUT = 600
MARK = "@@stella-conform-docs-command-end@@"


@dataclass
class Command:
    text: str
    expected: list[str] = field(default_factory=list)


@dataclass
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    end: int  # 1-based line of the closing fence
    commands: list[Command]
    settings: dict[str, str]
    #: The files shown before it in the same document (``file=NAME`` blocks), by name.
    files: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"

    @property
    def shows_output(self) -> bool:
        return any(c.expected for c in self.commands)


def doc_files() -> list[Path]:
    files = [REPO / "README.md"]
    files += sorted((REPO / "docs").glob("*.md"))
    return files


def _settings(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    if text.startswith("not run:"):
        return {"not run": text.removeprefix("not run:").strip()}
    for part in re.split(r";\s*(?=(?:cwd|setup|progress|needs|file)=)", text):  # setup may hold ;
        key, _, value = part.strip().partition("=")
        if key:
            out[key.strip()] = value.strip()
    return out


def blocks(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    files: dict[str, str] = {}
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        close = index + 1
        while close < len(lines) and not lines[close].startswith("```"):
            close += 1
        body = lines[index + 1 : close]
        before = DIRECTIVE.match(lines[index - 1]) if index > 0 else None
        settings = _settings(before.group(1)) if before else {}
        if "file" in settings:
            files[settings["file"]] = "\n".join(body) + "\n"
        elif opening.group(1) in ("", "console") and any(b.startswith("$ ") for b in body):
            block = Block(path, index + 1, close + 1, _commands(body), settings, dict(files))
            found.append(block)
        index = close + 1
    return found


def _commands(body: list[str]) -> list[Command]:
    commands: list[Command] = []
    continuing = False
    for line in body:
        if continuing:
            commands[-1].text += "\n" + line
            continuing = line.endswith("\\")
        elif line.startswith("$ "):
            commands.append(Command(line[2:]))
            continuing = line.endswith("\\")
        elif commands:
            commands[-1].expected.append(line)
    return commands


def all_blocks() -> list[Block]:
    return [b for path in doc_files() for b in blocks(path)]


#: ``needs=`` names that are not programs on PATH: what says they are installed.
TOOLCHAINS = {
    "typescript": lambda: (
        REPO / ".ci" / ".toolchains" / "ts" / "node_modules" / "typescript"
    ).is_dir(),
    "serde": lambda: any(Path("/usr/share/cargo/registry").glob("serde_json-*")),
    "vitest": lambda: (
        REPO / ".ci" / ".toolchains" / "vitest" / "node_modules" / "vitest"
    ).is_dir(),
}


def missing_toolchains(block: Block) -> list[str]:
    """The toolchains a block needs (``needs=``) that this machine lacks."""
    wanted = [n.strip() for n in block.settings.get("needs", "").split(",") if n.strip()]
    return [n for n in wanted if not (TOOLCHAINS[n]() if n in TOOLCHAINS else shutil.which(n))]


# ---------------------------------------------------------------------- running


def _sandbox() -> Path:
    """A scratch folder that looks like the checkout: its top-level entries, linked."""
    scratch = Path(tempfile.mkdtemp(prefix="stella-conform-docs-"))
    for entry in REPO.iterdir():
        if entry.name in (".git", ".stella-conform", ".hypothesis", "matrix-report"):
            continue
        (scratch / entry.name).symlink_to(entry)
    return scratch


def _unlinked(scratch: Path, relative: str) -> Path:
    """``scratch/relative`` as real folders whose entries are links to the checkout's.

    Run inside a linked folder, a block's commands would write into the checkout itself
    (the kit's ``.stella-conform/``, pytest's cache); a real folder keeps them in the scratch.
    """
    here = scratch
    for part in Path(relative).parts:
        if part in (".", ""):
            continue
        here = here / part
        if here.is_symlink() and here.is_dir():
            target = here.resolve()
            here.unlink()
            here.mkdir()
            for entry in target.iterdir():
                (here / entry.name).symlink_to(entry)
    return here


def _environment(scratch: Path) -> dict[str, str]:
    env = dict(os.environ)
    venv = REPO / ".venv" / "bin"
    env["PATH"] = f"{venv}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env.update(COLUMNS="80", NO_COLOR="1", TERM="dumb", PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    # as a reader's terminal shows it: pytest stops cutting its short summary under CI
    for name in ("CI", "BUILD_NUMBER", "GITHUB_ACTIONS"):
        env.pop(name, None)
    env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(scratch / ".hypothesis")
    return env


def run_block(block: Block) -> list[list[str]]:
    """What each command of the block prints now, normalized, one list of lines each."""
    scratch = _sandbox()
    try:
        env = _environment(scratch)
        if "setup" in block.settings:  # from the top, so it can make the folder to run in
            subprocess.run(
                ["bash", "-c", block.settings["setup"]], cwd=scratch, env=env,
                capture_output=True, timeout=TIMEOUT,
            )  # fmt: skip
        cwd = _unlinked(scratch, block.settings.get("cwd", "."))
        for name, text in block.files.items():  # the programs the docs show, as shown
            (cwd / name).write_text(text, encoding="utf-8")
        for command in block.commands:  # a `cd` inside the block: the same, relative to cwd
            for folder in re.findall(r"(?:^|&&|;)\s*cd\s+([\w./-]+)", command.text):
                _unlinked(cwd, folder)
        # one shell for the block, so `cd`, variables and `echo $?` carry on; a marker
        # after each command splits the output, and keeps the command's exit status
        script = ["exec 2>&1"]
        for index, command in enumerate(block.commands):
            script.append(command.text)
            script.append(f"__rc=$?; printf '\\n{MARK}{index}\\n'; (exit $__rc)")
        done = subprocess.run(
            ["bash", "-c", "\n".join(script)], cwd=cwd, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, timeout=TIMEOUT,
        )  # fmt: skip
        text = done.stdout.decode("utf-8", "replace")
        pieces = re.split(rf"\n?{MARK}\d+\n", text)
        keep = block.settings.get("progress") == "keep"
        return [normalize(p, scratch, cwd, keep) for p in pieces[: len(block.commands)]]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def normalize(
    text: str, scratch: Path, cwd: Path | None = None, progress: bool = False
) -> list[str]:
    """Paths made relative to where the commands ran, volatile parts made ``…``.

    Progress lines are dropped (a terminal rewrites them in place), or with ``progress``
    kept with their position and time made ``…`` and sorted: workers finish in any order.
    """
    if cwd is not None and cwd != scratch:
        text = text.replace(str(cwd) + "/", "")
    text = text.replace(str(scratch) + "/", "").replace(str(scratch), ".")
    text = text.replace(str(REPO) + "/", "")
    lines = [line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    run: list[str] = []
    for line in lines:
        if UNORDERED.match(line):
            if progress:
                for pattern, replacement in VOLATILE:
                    line = pattern.sub(replacement, line)
                run.append(UNORDERED.sub(f"[{WILD}] ", line))
            continue
        out.extend(sorted(run))
        run = []
        for pattern, replacement in VOLATILE:
            line = pattern.sub(replacement, line)
        out.append(line)
    out.extend(sorted(run))
    while out and not out[-1]:
        out.pop()
    return out


# ---------------------------------------------------------------------- matching


def _line_matches(expected: str, actual: str) -> bool:
    if WILD not in expected:
        return expected.rstrip() == actual
    parts = [re.escape(p) for p in expected.rstrip().split(WILD)]
    return re.fullmatch(".*?".join(parts), actual, re.DOTALL) is not None


def matches(expected: list[str], actual: list[str]) -> bool:
    """``expected`` (with ``…`` placeholders) against ``actual``, line by line."""
    expected = list(expected)
    while expected and not expected[-1].strip():
        expected.pop()

    def go(i: int, j: int) -> bool:
        if i == len(expected):
            return j == len(actual)
        if expected[i].strip() == WILD:
            return any(go(i + 1, k) for k in range(j, len(actual) + 1))
        return j < len(actual) and _line_matches(expected[i], actual[j]) and go(i + 1, j + 1)

    return go(0, 0)


def drift(block: Block, outputs: list[list[str]]) -> list[str]:
    """A readable difference for each command whose output no longer matches."""
    problems = []
    for command, actual in zip(block.commands, outputs, strict=True):
        if not matches(command.expected, actual):
            problems.append(
                f"{block.name}: $ {command.text}\n--- shown\n"
                + "\n".join(command.expected)
                + "\n--- now\n"
                + "\n".join(actual)
            )
    return problems


def rewrite(block: Block, outputs: list[list[str]]) -> None:
    """Put the new output into the block (commands that still match keep their text)."""
    lines = block.path.read_text(encoding="utf-8").splitlines()
    body: list[str] = []
    for command, actual in zip(block.commands, outputs, strict=True):
        body.append(f"$ {command.text}")
        body.extend(command.expected if matches(command.expected, actual) else actual)
    lines[block.line : block.end - 1] = body
    block.path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    """``regen-docs [--check] [FILE...]``: rewrite (or, with --check, report) drifted blocks."""
    check = "--check" in argv
    wanted = [Path(a).resolve() for a in argv if a != "--check"]
    status = 0
    for path in doc_files():
        if wanted and path.resolve() not in wanted:
            continue
        # bottom-up, so rewriting a block does not move the ones above it
        for block in reversed(blocks(path)):
            if not block.shows_output or "not run" in block.settings:
                continue
            lacking = missing_toolchains(block)
            if lacking:
                print(f"skipped  {block.name}: no {', '.join(lacking)} here")
                continue
            outputs = run_block(block)
            problems = drift(block, outputs)
            if not problems:
                print(f"ok       {block.name}")
                continue
            status = 1
            if check:
                print("\n".join(problems))
            else:
                rewrite(block, outputs)
                print(f"rewrote  {block.name}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
