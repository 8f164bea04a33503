"""A fake ``stella`` for testing programs that launch stella, without a model or an API key.

Installed as the console script ``stella-conform-fake-stella``; put it first on
``PATH`` under the name ``stella``
(``ln -s "$(command -v stella-conform-fake-stella)" bin/stella``).  It parses the
command line with the documented placement rules and plays a *scenario*: a
recorded or generated stream, how the run ends (exit 0, 1, 3 with ``status:
aborted`` and a ``reason`` naming the cap, 130, 143), and whether the process dies
in the middle of a line.

Settings, all from the environment:

* ``STELLA_FAKE_SCENARIO``: a scenario file (``*.json``, format below) or a
  stream (``*.jsonl``, played as a successful run).  Without it, a minimal
  successful run is played.
* ``STELLA_FAKE_LOG``: a file to which one JSON line per invocation is
  appended (argv, the output format and where it came from, any parse error);
  the ``wrapper`` profile grades a client from it.
* ``STELLA_FAKE_PACE_MS``: milliseconds between stream lines (default: the
  scenario's ``pace_ms``, else 2).

A scenario file::

    {"format": "stella-conform/scenario/1",
     "stream": "minimal_run.jsonl",          # relative to the scenario file
     "exit": 3,
     "reason": "spend limit of $3.00 reached",
     "die_mid_line": false,
     "preflight": null,                      # or a message: fail before the agent exists
     "pace_ms": 2,
     "query": {"schema_version": 1, "rows": []}}  # what a query command prints

``stream_text`` may hold the stream inline instead of ``stream``.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stella_conform.oracle.decoder import Kind, decode_all
from stella_conform.safe_files import read_regular

SCENARIO_ENV = "STELLA_FAKE_SCENARIO"
LOG_ENV = "STELLA_FAKE_LOG"
PACE_ENV = "STELLA_FAKE_PACE_MS"
SCENARIO_FORMAT = "stella-conform/scenario/1"
FORMATS = ("text", "json", "stream-json")
#: Global options that take a value (they go before the subcommand).
GLOBAL_VALUE_OPTIONS = ("--spend-limit", "--model", "--provider", "--settings", "--cwd", "--mode")
GLOBAL_FLAGS = ("--verbose", "--quiet", "--no-color", "--yes")
RUN_VALUE_OPTIONS = ("--output-format", "--pipeline", "--test-command", "--model", "--max-steps")
FLEET_VALUE_OPTIONS = ("--output-format", "--plan", "--max-concurrency")
QUERY_COMMANDS = ("stats", "usage", "inspect", "calibration", "memory", "context")
STATUS_BY_EXIT = {0: "completed", 1: "error", 3: "aborted"}
MINIMAL_RUN = (
    b'{"type":"stage","name":"execute","scope":"turn"}\n'
    b'{"type":"text","text":"Done."}\n'
    b'{"type":"turn_complete","model":"anthropic/claude-fable-5","cost_usd":0.001}\n'
    b'{"type":"run_complete","model":"anthropic/claude-fable-5","cost_usd":0.001}\n'
)


class ParseError(Exception):
    """A command line stella itself would refuse (exit 2)."""


@dataclass
class Invocation:
    argv: list[str]
    command: str | None = None
    output_format: str | None = None
    format_from: str | None = None  # "flag", "env" or "default"
    pipeline: str | None = None
    query_format: str | None = None
    parse_error: str | None = None
    exit: int | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Scenario:
    stream: bytes = MINIMAL_RUN
    exit: int = 0
    reason: str | None = None
    die_mid_line: bool = False
    preflight: str | None = None
    pace_ms: float = 2.0
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Scenario:
        source = Path(path)
        if source.suffix == ".jsonl":
            return cls(stream=read_regular(source, 256 * 1024 * 1024))
        doc = json.loads(read_regular(source, 64 * 1024 * 1024).decode("utf-8"))
        if not isinstance(doc, dict) or doc.get("format") != SCENARIO_FORMAT:
            raise ValueError(f"{source}: not a scenario file (format {SCENARIO_FORMAT!r})")
        if "stream_text" in doc:
            stream = str(doc["stream_text"]).encode("utf-8")
        elif "stream" in doc:
            # only a file in the scenario's own folder, and only a regular one
            folder = source.parent.resolve()
            target = (folder / str(doc["stream"])).resolve()
            if not target.is_relative_to(folder):
                raise ValueError(f"{source}: its stream {doc['stream']!r} is outside its folder")
            stream = read_regular(target, 256 * 1024 * 1024)
        else:
            stream = MINIMAL_RUN
        return cls(
            stream=stream,
            exit=int(doc.get("exit", 0)),
            reason=doc.get("reason"),
            die_mid_line=bool(doc.get("die_mid_line", False)),
            preflight=doc.get("preflight"),
            pace_ms=float(doc.get("pace_ms", 2.0)),
            extra={"query": doc["query"]} if isinstance(doc.get("query"), dict) else {},
        )


def parse(argv: Sequence[str], env: dict[str, str]) -> Invocation:
    """The command line as stella reads it; raises :class:`ParseError` with stella's words."""
    inv = Invocation(list(argv))
    args = list(argv)
    i = 0
    while i < len(args) and args[i].startswith("-"):
        name = args[i].split("=", 1)[0]
        if name == "--output-format":
            raise ParseError(
                "unexpected argument '--output-format' found: it is not a global flag; "
                "it goes after the subcommand (stella run --output-format ...)"
            )
        if name in GLOBAL_VALUE_OPTIONS:
            i += 1 if "=" in args[i] else 2
        elif name in GLOBAL_FLAGS:
            i += 1
        else:
            raise ParseError(f"unexpected argument '{args[i]}' found")
    if i > len(args):
        raise ParseError("a global option is missing its value")
    if i == len(args):
        raise ParseError("a subcommand is required (run, fleet, stats, ...)")
    command, rest = args[i], args[i + 1 :]
    inv.command = command
    if command in ("run", "fleet"):
        _parse_turn(inv, command, rest, env)
    elif command in QUERY_COMMANDS:
        _parse_query(inv, rest)
    else:
        raise ParseError(f"unrecognized subcommand '{command}'")
    return inv


def _options(rest: list[str], takes_value: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    opts: dict[str, str] = {}
    positional: list[str] = []
    i = 0
    while i < len(rest):
        token = rest[i]
        if token == "--":
            positional.extend(rest[i + 1 :])
            break
        if token.startswith("--"):
            name, eq, value = token.partition("=")
            if name not in takes_value:
                raise ParseError(f"unexpected argument '{token}' found")
            if not eq:
                if i + 1 >= len(rest):
                    raise ParseError(f"a value is required for '{name}'")
                value = rest[i + 1]
                i += 1
            opts[name] = value
        else:
            positional.append(token)
        i += 1
    return opts, positional


def _parse_turn(inv: Invocation, command: str, rest: list[str], env: dict[str, str]) -> None:
    opts, positional = _options(
        rest, RUN_VALUE_OPTIONS if command == "run" else FLEET_VALUE_OPTIONS
    )
    if "--output-format" in opts:
        inv.output_format, inv.format_from = opts["--output-format"], "flag"
    elif env.get("STELLA_OUTPUT_FORMAT"):
        inv.output_format, inv.format_from = env["STELLA_OUTPUT_FORMAT"], "env"
    else:
        inv.output_format, inv.format_from = "text", "default"
    if inv.output_format not in FORMATS:
        raise ParseError(
            f"invalid value '{inv.output_format}' for '--output-format' "
            f"(possible values: {', '.join(FORMATS)})"
        )
    inv.pipeline = opts.get("--pipeline")
    if "--test-command" in opts and inv.pipeline is None:
        raise ParseError("--test-command needs --pipeline <variant>; the raw loop refuses it")
    if command == "run" and not positional:
        raise ParseError("the PROMPT argument is required")
    if command == "fleet" and "--plan" not in opts:
        raise ParseError("'--plan <FILE>' is required")


def _parse_query(inv: Invocation, rest: list[str]) -> None:
    if any(t.split("=", 1)[0] == "--output-format" for t in rest):
        raise ParseError(
            f"unexpected argument '--output-format' found: '{inv.command}' takes --format"
        )
    fmt = "text"
    for i, token in enumerate(rest):
        if token == "--format" and i + 1 < len(rest):
            fmt = rest[i + 1]
        elif token.startswith("--format="):
            fmt = token.split("=", 1)[1]
    if fmt not in ("text", "json"):
        raise ParseError(f"invalid value '{fmt}' for '--format' (possible values: text, json)")
    inv.query_format = fmt


# ------------------------------------------------------------------------- playing


def envelope(scenario: Scenario, pipeline: str | None) -> dict[str, Any]:
    """The ``--output-format json`` summary of a scenario, in the shape the run would have."""
    if scenario.preflight is not None:
        return {"schema_version": 1, "status": "error", "text": None, "reason": scenario.preflight}
    decoded = decode_all(scenario.stream)
    events = [o.raw for o in decoded.outcomes if o.kind in (Kind.KNOWN, Kind.UNKNOWN)]
    summary = decoded.summary
    failed = scenario.exit != 0
    model = next(
        (e.get("model") for e in reversed(events) if isinstance(e, dict) and "model" in e), None
    )
    error_message = next(
        (
            e.get("message")
            for e in reversed(events)
            if isinstance(e, dict) and e.get("type") == "error"
        ),
        None,
    )
    reason = scenario.reason if scenario.reason is not None else error_message
    cost = summary.cost_usd
    if cost is None:  # no run_complete: what the finished turns cost
        cost = sum(
            float(e["cost_usd"])
            for e in events
            if isinstance(e, dict) and e.get("type") == "turn_complete"
        )
    status = STATUS_BY_EXIT.get(scenario.exit, "error")
    doc: dict[str, Any] = {
        "schema_version": 1,
        "status": status,
        "text": summary.final_text,
        "cost_usd": cost,
        "reason": reason,
    }
    if pipeline is None:
        doc["model"] = model
        doc["events"] = events
        touched = [
            {
                "path": e["path"],
                "lines_added": e.get("added", 0),
                "lines_removed": e.get("removed", 0),
            }
            for e in events
            if isinstance(e, dict) and e.get("type") == "file_change" and "path" in e
        ]
        doc["files_touched"] = {"files_touched": touched}
        doc["withheld"] = None
    else:
        doc.update(
            {
                "task_class": None if failed else "code_change",
                "verdict": None if failed else {"deterministic": True, "summary": "tests pass"},
                "revisions": None if failed else 0,
                "candidates_run": None if failed else 1,
                "model": model,
                "events": events,
                "reflection": None,
            }
        )
        if failed:
            doc["text"] = None
    return doc


def _die(out: Any, data: bytes, code: int) -> int:
    """Write the first half of ``data`` without its newline, then end as a killed run."""
    out.write(data[: max(1, len(data.rstrip(b"\n")) // 2)])
    out.flush()
    return code


def play(inv: Invocation, scenario: Scenario, pace_ms: float) -> int:
    out = sys.stdout.buffer
    if inv.command not in ("run", "fleet"):
        doc = scenario.extra.get("query") or {"schema_version": 1, "rows": []}
        if inv.query_format == "json":
            out.write(json.dumps(doc).encode() + b"\n")
        else:
            out.write(b"(no rows)\n")
        return 0
    killed = scenario.exit in (130, 143)
    if scenario.preflight is not None:
        sys.stderr.write(f"stella: {scenario.preflight}\n")
        if inv.output_format == "json":
            out.write(json.dumps(envelope(scenario, inv.pipeline)).encode() + b"\n")
        return scenario.exit or 1
    if inv.output_format == "stream-json":
        lines = [line for line in scenario.stream.splitlines(keepends=True) if line.strip()]
        for index, line in enumerate(lines):
            if scenario.die_mid_line and index == len(lines) - 1:
                return _die(out, line, scenario.exit)
            out.write(line if line.endswith(b"\n") else line + b"\n")
            out.flush()
            if pace_ms > 0:
                time.sleep(pace_ms / 1000)
        return scenario.exit
    if inv.output_format == "json":
        if killed and not scenario.die_mid_line:
            return scenario.exit  # killed before the summary was written
        data = json.dumps(envelope(scenario, inv.pipeline), ensure_ascii=False).encode() + b"\n"
        if scenario.die_mid_line:
            return _die(out, data, scenario.exit)
        out.write(data)
        return scenario.exit
    text = decode_all(scenario.stream).summary.final_text
    if text is not None and not killed:
        out.write(text.encode("utf-8") + b"\n")
    if scenario.exit == 3:
        sys.stderr.write(f"stella: stopped: {scenario.reason or 'a cap was reached'}\n")
    elif scenario.exit == 1:
        sys.stderr.write("stella: the run failed\n")
    return scenario.exit


def _log(inv: Invocation, env: dict[str, str]) -> None:
    path = env.get(LOG_ENV)
    if not path:
        return
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(inv.to_json()) + "\n")


def usage() -> str:
    """What ``--help`` prints: this module's own description, so the two cannot drift."""
    return (
        "usage: stella-conform-fake-stella [GLOBAL OPTIONS] COMMAND [OPTIONS] [PROMPT]\n"
        "       (installed as 'stella' first on PATH; commands: run, fleet, "
        + ", ".join(QUERY_COMMANDS)
        + ")\n\n"
        + textwrap.dedent(__doc__ or "").strip()
        + "\n"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ)
    if args in (["--version"], ["-V"]):
        print("stella 0.0.0-fake (stella-conform fake stella)")
        return 0
    if args in (["--help"], ["-h"], ["help"]):
        print(usage())
        return 0
    try:
        inv = parse(args, env)
    except ParseError as exc:
        inv = Invocation(args, parse_error=str(exc), exit=2)
        _log(inv, env)
        sys.stderr.write(f"stella: error: {exc}\n")
        return 2
    try:
        scenario = Scenario.load(env[SCENARIO_ENV]) if env.get(SCENARIO_ENV) else Scenario()
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"stella (fake): cannot read the scenario: {exc}\n")
        return 2
    pace = float(env.get(PACE_ENV, scenario.pace_ms))
    inv.exit = scenario.exit
    _log(inv, env)
    try:
        code = play(inv, scenario, pace)
        sys.stdout.flush()
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        code = 141
    os._exit(code)  # no cleanup that could print after a deliberate death


if __name__ == "__main__":
    sys.exit(main())
