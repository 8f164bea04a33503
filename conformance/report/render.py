"""Reports in the forms people and CI read: terminal, JSON, JUnit XML, Markdown."""

from __future__ import annotations

import datetime as _dt
import json
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stella_conform._version import __version__
from stella_conform.conformance.checks import BY_ID, unmatched_globs
from stella_conform.conformance.report.excerpt import show_stream as show_stream  # re-exported
from stella_conform.conformance.suite import CheckResult, SuiteConfig
from stella_conform.errors import SetupError, exit_status, read_toml_file
from stella_conform.oracle.corpus import corpus_version
from stella_conform.safe_files import write_atomic
from stella_conform.safe_text import (
    clip,
    for_terminal,
    json_safe,
    markdown_code,
    no_surrogates,
    xml_safe,
)

#: ``crash``: the client died on a case (its own failure, like ``fail``); ``error``: a case
#: could not be judged (a hang, a protocol error, the time budget): the kit's word, not a
#: verdict on the client.
OUTCOMES = ("pass", "fail", "crash", "warn", "error", "skip")
#: The outcomes a check shows its failing cases for.
FAILING = ("fail", "crash", "warn", "error")
REPORT_FORMAT = "stella-conform/report/1"
#: GitHub refuses a step summary over 1 MiB; the Markdown report stays well under it.
MARKDOWN_CAP = 512 * 1024


def load_known_failures(path: Path) -> dict[str, str]:
    """``[known-failures]`` table of check id -> reason; :class:`SetupError` when malformed."""
    doc = read_toml_file(path, "known-failures file")
    table = doc.get("known-failures")
    if not isinstance(table, dict) or set(doc) - {"known-failures"}:
        raise SetupError(
            f"malformed known-failures file {path}: expected one [known-failures] table of "
            '"CHECK-ID" = "reason"'
        )
    out: dict[str, str] = {}
    for check_id, reason in table.items():
        if not isinstance(reason, str) or not reason.strip():
            raise SetupError(f"malformed known-failures file {path}: {check_id!r} needs a reason")
        if unmatched_globs([check_id]) or check_id not in BY_ID:
            raise SetupError(f"known-failures file {path}: unknown check id {check_id!r}")
        out[check_id] = reason
    return out


@dataclass
class Report:
    config: SuiteConfig
    results: list[CheckResult]
    vocabulary: str
    known_failures: Mapping[str, str] = field(default_factory=dict)
    shard: str | None = None
    #: Why the run stopped before grading every check (a stop signal), if it did.
    incomplete: str | None = None
    #: The exit status a stopped run leaves with (128 + the signal): what the report's
    #: ``exit_code`` says too, so a CI step that reads the report, not the process's
    #: status, does not take the checks graded before the stop for a whole run that passed.
    stopped: int | None = None
    #: Why the client could not be graded at all (first contact failed: it does not start,
    #: answers no trivially valid stream, refuses the mode): the report says so, exit 2.
    error: str | None = None
    date: str = field(
        default_factory=lambda: _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    )

    def __post_init__(self) -> None:
        for result in self.results:
            reason = self.known_failures.get(result.id)
            if reason is not None and result.outcome in FAILING:
                result.known_failure = reason

    @property
    def now_passing(self) -> list[str]:
        """Known failures that passed: the list can shrink.

        Not from a run that graded a sample of the fixtures (``fixtures_per_check``): a
        known failure may pass there only because the fixture that shows it was left out,
        and "remove it from the list" would be advice a full run takes back.
        """
        if self.config.fixtures_per_check is not None:
            return []
        return self._passing_known()

    def _passing_known(self) -> list[str]:
        return [r.id for r in self.results if r.id in self.known_failures and r.outcome == "pass"]

    def _sampled_note(self) -> str | None:
        passing = self._passing_known()
        if self.config.fixtures_per_check is None or not passing:
            return None
        return (
            f"known failure(s) passed on a sample of the fixtures (fixtures_per_check = "
            f"{self.config.fixtures_per_check}), so not proven fixed: {', '.join(passing)}"
        )

    @property
    def blocking(self) -> list[CheckResult]:
        return [
            r
            for r in self.results
            if r.outcome in ("fail", "crash", "error") and r.known_failure is None
        ]

    @property
    def exit_code(self) -> int:
        return exit_status(
            error=self.error is not None, stopped=self.stopped, failing=bool(self.blocking)
        )

    def counts(self) -> dict[str, int]:
        counted = Counter(r.outcome for r in self.results)
        return {o: counted.get(o, 0) for o in OUTCOMES}

    def to_json(self) -> dict[str, Any]:
        client = self.config.client
        return {
            "format": REPORT_FORMAT,
            "kit": {"name": "stella-conform", "version": __version__},
            "corpus_version": corpus_version(),
            "vocabulary": self.vocabulary,
            "seed": self.config.seed,
            "examples": self.config.examples,
            "date": self.date,
            "client": {
                "command": list(client.argv),
                "mode": client.mode,
                **({"mode_chosen": self.config.mode_reason} if self.config.mode_reason else {}),
            },
            "claims": self.config.claims.to_json(self._stella(), self._checks()),
            "summary": self.counts(),
            "exit_code": self.exit_code,
            "known_failures_now_passing": self.now_passing,
            "checks": [r.to_json() for r in self.results],
            **({"shard": self.shard} if self.shard else {}),
            # a run that left fixtures out says so: its passes are not every fixture's
            **(
                {"fixtures_per_check": self.config.fixtures_per_check}
                if self.config.fixtures_per_check is not None
                else {}
            ),
            **({"incomplete": self.incomplete} if self.incomplete else {}),
            **({"error": self.error} if self.error is not None else {}),
        }

    def _stella(self) -> Any:
        """The vocabulary the stella under test writes (claims are stated against it)."""
        return self.config.stella_vocabulary()

    def _checks(self) -> list[Any]:
        return [BY_ID[r.id] for r in self.results if r.id in BY_ID]

    def mode_chosen(self) -> str | None:
        """How ``--mode auto`` chose the mode, when it did (and the way out of exit mode)."""
        reason = self.config.mode_reason
        if not reason:
            return None
        from stella_conform.conformance.clients.automode import EXIT_HINT

        hint = f"; {EXIT_HINT}" if self.config.client.mode == "exit" else ""
        return f"--mode auto: {reason}{hint}"

    def mode_line(self) -> str | None:
        chosen = self.mode_chosen()
        return f"mode {self.config.client.mode} ({chosen})" if chosen else None

    def claim_lines(self) -> list[str]:
        """What the client claims and what that leaves ungraded; empty without claims."""
        return self.config.claims.describe(self._stella(), self._checks())

    # ------------------------------------------------------------------ renderers

    def terminal(self, verbose: bool = False, color: bool = False) -> str:
        """The report for people; ``color``: outcome words in ANSI colour (after escaping)."""
        text = self._terminal(verbose)
        return colour_outcomes(text) if color else text

    def _terminal(self, verbose: bool) -> str:
        width = max(len(r.id) for r in self.results) if self.results else 10
        lines = [f"claims {line}" for line in self.claim_lines()]
        chosen = self.mode_line()
        if chosen:
            lines.insert(0, chosen)
        if lines:
            lines.append("")
        said: dict[str, list[str]] = {}  # a protocol error -> the checks it stopped
        for r in self.results:
            mark = r.outcome.upper()
            if r.known_failure:
                mark += " (known)"
            taken = readings_text(r.readings)
            cause = protocol_cause(r)
            if cause is not None and cause in said:
                # the same mistake of the adapter: said once, in full, under its first check
                first = said[cause][0]
                said[cause].append(r.id)
                lines.append(f"{mark:<13} {r.id:<{width}}  the protocol error shown under {first}")
                continue
            if cause is not None:
                said[cause] = [r.id]
            message = terminal_line(r.message) + (f"; {taken}" if taken else "")
            lines.append(f"{mark:<13} {r.id:<{width}}  {message}")
            if r.outcome in FAILING and (verbose or not r.known_failure):
                for failure in r.failures[:1]:
                    lines.extend(_failure_lines(failure))
                lines.extend(more_failures(r))
        counts = self.counts()
        lines.append("")
        if self.incomplete:
            lines.append(f"INCOMPLETE: {self.incomplete}")
        lines.append(", ".join(f"{n} {o}" for o, n in counts.items() if n) or "no checks")
        for cause, checks in said.items():
            if len(checks) > 1:
                lines.append(
                    f"one protocol error left {len(checks)} checks ungraded: {terminal_line(cause)}"
                    "; mend the adapter, then run again"
                )
        for check_id in self.now_passing:
            lines.append(f"known failure now passes, remove it from the list: {check_id}")
        sampled = self._sampled_note()
        if sampled:
            lines.append(sampled)
        return for_terminal("\n".join(lines))

    def markdown(self) -> str:
        client = self.config.client
        out = [
            "## stella-conform",
            *(["", f"**⚠️ incomplete: {self.incomplete}**"] if self.incomplete else []),
            *(
                ["", f"**the client could not be graded:** {markdown_code(self.error, 2000)}"]
                if self.error is not None
                else []
            ),
            "",
            f"{markdown_code(' '.join(client.argv))} ({client.mode} mode"
            + (f", {_markdown_text(self.mode_chosen() or '')}" if self.config.mode_reason else "")
            + "), "
            f"vocabulary {markdown_code(self.vocabulary)}, "
            f"corpus `{corpus_version()}`, seed {self.config.seed}, "
            f"stella-conform {__version__}, {self.date}",
            "",
            *[f"- claims {line}" for line in self.claim_lines()],
            *([""] if self.claim_lines() else []),
            "| check | outcome | details |",
            "| --- | --- | --- |",
        ]
        icons = {o: f"{OUTCOME_ICONS[o]} {o}" for o in OUTCOMES}
        size = sum(len(line) + 1 for line in out)
        for index, r in enumerate(self.results):
            outcome = icons[r.outcome] + (" (known)" if r.known_failure else "")
            # client text goes in code spans: no HTML, link, @mention or table break
            detail = markdown_code(r.message) if r.message else ""
            if r.failures:
                detail += alike(r.failures[0])
            if r.readings:
                detail += f"<br>{readings_text(r.readings)}"
            if r.failures and r.failures[0].replay:
                detail += f"<br>replay: {markdown_code(r.failures[0].replay, 1000)}"
            more = max(r.failed_cases, len(r.failures)) - 1
            if r.outcome in FAILING and more > 0:
                names = ", ".join(
                    markdown_code(f.case, 200) + alike(f) for f in r.failures[1 : LISTED + 1]
                )
                detail += f"<br>{more} more failing case{'s' if more != 1 else ''}: {names}"
            tail = stderr_tail(r.failures[0]) if r.failures else ""
            if tail:
                shown = "<br>".join(_markdown_text(line) for line in tail_lines(tail, 5))
                detail += f"<br>client stderr:<br><code>{shown}</code>"
            row = f"| {markdown_code(r.id)} | {outcome} | {detail} |"
            size += len(row.encode("utf-8")) + 1
            if size > MARKDOWN_CAP:
                out.append(
                    f"| … | | cut: {len(self.results) - index} more check(s) past "
                    f"{MARKDOWN_CAP // 1024} KiB; the JSON report has them all |"
                )
                break
            out.append(row)
        counts = self.counts()
        out.append("")
        out.append("**" + ", ".join(f"{n} {o}" for o, n in counts.items() if n) + "**")
        for check_id in self.now_passing:
            out.append(
                f"\nKnown failure now passes, remove it from the list: {markdown_code(check_id)}"
            )
        sampled = self._sampled_note()
        if sampled:
            out.append(f"\n{_markdown_text(sampled)}")
        return "\n".join(out) + "\n"

    def junit(self) -> str:
        counts = self.counts()
        suite = ET.Element(
            "testsuite",
            name="stella-conform",
            tests=str(len(self.results)),
            failures=str(counts["fail"] + counts["crash"] + counts["warn"]),
            errors=str(counts["error"]),
            skipped=str(counts["skip"]),
            timestamp=self.date,
        )
        claims = self.claim_lines()
        if claims:
            props = ET.SubElement(suite, "properties")
            for index, line in enumerate(claims, 1):
                ET.SubElement(props, "property", name=f"claim.{index}", value=line)
        for r in self.results:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=xml_safe(f"stella_conform.{r.rule}"),
                name=xml_safe(r.id),
                time=f"{r.seconds:.3f}",
            )
            if r.readings:
                props = ET.SubElement(case, "properties")
                for label, count in sorted(r.readings.items()):
                    prop = {"name": xml_safe(f"reading:{label}"), "value": str(count)}
                    ET.SubElement(props, "property", prop)
            shown = [*(line for f in r.failures[:1] for line in _failure_lines(f))]
            body = xml_safe("\n".join([*shown, *more_failures(r)]))
            message = xml_safe(clip(no_surrogates(r.message)))
            if r.outcome in ("fail", "crash", "warn"):
                kind = "crash" if r.outcome == "crash" else r.tier  # the client's own failure
                el = ET.SubElement(
                    case,
                    "failure",
                    message=message,
                    type="known-failure" if r.known_failure else kind,
                )
                el.text = body
            elif r.outcome == "error":
                el = ET.SubElement(case, "error", message=message)
                el.text = body
            elif r.outcome == "skip":
                ET.SubElement(case, "skipped", message=message)
            tails = [stderr_tail(f) for f in r.failures[:3]]
            if r.outcome in FAILING and any(tails):
                err = ET.SubElement(case, "system-err")
                err.text = xml_safe(
                    "\n".join(
                        f"--- client stderr, case {f.case}:\n{t}"
                        for f, t in zip(r.failures[:3], tails, strict=True)
                        if t
                    )
                )
        if self.incomplete:
            properties = ET.Element("properties")
            ET.SubElement(properties, "property", name="incomplete", value=self.incomplete)
            suite.insert(0, properties)
        if self.error is not None:  # one error a CI test view shows, with the kit's words
            suite.set("tests", str(len(self.results) + 1))
            suite.set("errors", str(counts["error"] + 1))
            case = ET.SubElement(
                suite, "testcase", classname="stella_conform.setup", name="first-contact"
            )
            el = ET.SubElement(case, "error", message=xml_safe(clip(no_surrogates(self.error))))
            el.text = xml_safe(no_surrogates(self.error))
        ET.indent(suite)
        return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def readings_text(readings: dict[str, int]) -> str:
    """``readings: non-object-line B (3 cases), ...``: the registered readings a client took
    (docs/contract-readings.md); information, never a verdict."""
    if not readings:
        return ""
    parts = []
    for label, count in sorted(readings.items()):
        point, _, reading = label.partition("=")
        parts.append(f"{point} {reading} ({count} case{'s' if count != 1 else ''})")
    return "readings: " + ", ".join(parts)


#: Failing cases listed one line each under the first (shown in full).
LISTED = 10


def more_failures(result: CheckResult) -> list[str]:
    """Every other distinct failing case of a check, one line each, smallest first, with a
    count; the first (smallest) is shown in full above them."""
    rest = result.failures[1:]
    more = max(result.failed_cases, len(result.failures)) - 1
    if more <= 0:
        return []
    out = [f"    {more} more failing case{'s' if more != 1 else ''}, smallest first:"]
    out += [f"      {failure_line(f)}" for f in rest[:LISTED]]
    hidden = more - min(len(rest), LISTED)
    if hidden > 0:
        out.append(f"      … and {hidden} more (the JSON report has {len(result.failures)})")
    return out


def failure_line(failure: Any) -> str:
    """One failing case on one line: where it is, what went wrong."""
    how = failure.source + (
        f", mutations: {', '.join(failure.mutations)}" if failure.mutations else ""
    )
    where = failure.saved if failure.source != "fixture" and failure.saved else failure.case
    if getattr(failure, "not_saved", None):  # too large to keep beside the smallest
        where = f"a case of {failure.size} bytes, sha256 {failure.sha256[:16]}, not saved"
    said = f"client protocol-error: {failure.cause}" if failure.cause else failure.message
    return f"{where} ({how}): {clip(terminal_line(said), 300)}{alike(failure)}"


def alike_count(failure: Any) -> int:
    """How many more strata failed the same way as ``failure`` (``suite.CaseFailure.alike``).

    The one place every renderer takes it from — the terminal, JUnit, the report's
    Markdown, the matrix's Markdown and HTML — whether it has the failure itself or its
    JSON (a report or a matrix shard, which anyone may have edited: anything but a count
    is none). ``matrix.md`` showed no count the terminal and the JSON showed."""
    n = failure.get("alike") if isinstance(failure, Mapping) else getattr(failure, "alike", 0)
    return n if type(n) is int and n > 0 else 0


def alike(failure: Any) -> str:
    """`` (and 3 more strata alike)``, or nothing: :func:`alike_count` in words."""
    n = alike_count(failure)
    return f" (and {n} more {'stratum' if n == 1 else 'strata'} alike)" if n else ""


def protocol_cause(result: CheckResult) -> str | None:
    """The protocol error a check could not be graded for, if that is why it errs."""
    if result.outcome != "error" or not result.failures:
        return None
    cause = getattr(result.failures[0], "cause", None)
    return cause if isinstance(cause, str) and cause else None


def _failure_lines(failure: Any) -> list[str]:
    out = [
        f"    case: {failure.case} ({failure.source})"
        + (f", mutations: {', '.join(failure.mutations)}" if failure.mutations else "")
        + alike(failure)
    ]
    out.append(f"    expected: {clip(json.dumps(failure.expected, ensure_ascii=False), 600)}")
    observed = failure.observed
    seen = observed.get("verdict") or observed.get("status")
    if seen == "reject" and observed.get("rejected_line") is not None:
        seen += f" at line {observed['rejected_line']}"
    detail = f" ({observed['detail']})" if observed.get("detail") else ""
    out.append(f"    client:   {seen}{detail}")
    tail = stderr_tail(failure)
    if tail:
        shown = tail_lines(tail, TERMINAL_STDERR_LINES)
        out.append(f"    client stderr (last {len(shown)} line(s)):")
        out.extend(f"      {line}" for line in shown)
    if failure.stream is not None:
        out.append("    stream:")
        excerpt = show_stream(failure.stream, limit=12, keep=failure.decisive)
        out.extend("    " + line for line in excerpt.splitlines())
    if failure.saved:
        out.append(f"    saved:    {failure.saved}")
    if failure.replay:
        out.append(f"    replay:   {failure.replay}")
    return out


#: Lines of a client's stderr shown under a failure in the terminal (JSON keeps more).
TERMINAL_STDERR_LINES = 10


def stderr_tail(failure: Any) -> str:
    """The end of the client's stderr for a failing case ("" when it wrote none)."""
    tail = (failure.observed or {}).get("stderr_tail")
    return tail.strip("\n") if isinstance(tail, str) and tail.strip() else ""


def tail_lines(tail: str, count: int) -> list[str]:
    """The last ``count`` lines, control characters made visible (client text is untrusted)."""
    lines = tail.splitlines()[-count:]
    return [
        "".join(c if c.isprintable() or c == "\t" else f"\\x{ord(c):02x}" for c in line)
        for line in lines
    ]


def _markdown_text(text: str) -> str:
    """Client text inside a Markdown table cell: no markup, no cell breaks."""
    for raw, safe in MARKDOWN_ESCAPES:
        text = text.replace(raw, safe)
    return text


MARKDOWN_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "&#124;"), ("`", "&#96;"))


def write_outputs(
    report: Report, *, json_path: Path | None, junit_path: Path | None, markdown_path: Path | None
) -> None:
    def as_json() -> str:
        return report_json_text(report.to_json())

    write_rendered(
        [(json_path, as_json), (junit_path, report.junit), (markdown_path, report.markdown)]
    )


def write_rendered(outputs: Sequence[tuple[Path | None, Callable[[], str]]]) -> None:
    """Render and write each requested output (``None``: not asked for); errors exit 2."""
    for path, render in outputs:
        if path is None:
            continue
        try:
            write_atomic(path, render())  # whole or not at all; never through a planted link
        except OSError as exc:
            raise SetupError(f"cannot write {path}: {exc.strerror or exc}") from None


#: A report (or matrix) whose JSON is longer than this is written without indentation.
INDENTED_JSON_CAP = 4 * 1024 * 1024


def report_json_text(doc: Any) -> str:
    """A report as RFC 8259 JSON in UTF-8, whatever strings or numbers a client put in it.

    NaN and infinities become strings and lone surrogates U+FFFD (:func:`json_safe`);
    ``allow_nan=False`` makes a value that slipped through an error, not invalid JSON.

    A document that is JSON already (the usual case: every client value in it went
    through :func:`json_safe` when its failure was recorded) is written by the C encoder
    as it is, and indented only when small: the pure-Python walk and the indenting encoder
    are slow on a large matrix, which a stopped matrix writes after the signal.  Only a
    document the C encoder refuses is copied through :func:`json_safe`.
    """
    try:
        compact = json.dumps(doc, ensure_ascii=False, allow_nan=False)
        compact.encode("utf-8")  # a lone surrogate cannot be written as UTF-8
    except (ValueError, TypeError, RecursionError, UnicodeEncodeError):
        doc = json_safe(doc, depth=64, string=None, items=None)
        compact = json.dumps(doc, ensure_ascii=False, allow_nan=False)
    if len(compact) > INDENTED_JSON_CAP:
        return compact + "\n"
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


#: The Markdown reports' outcome icons; a crash is the client's failure, an error the kit's.
OUTCOME_ICONS = {
    "pass": "✅",
    "fail": "❌",
    "crash": "💥",
    "warn": "⚠️",
    "error": "⚙️",
    "skip": "⏭️",
}

#: ANSI colours of the outcome words; an error is not a failure, so not the same red.
OUTCOME_COLOURS = {
    "PASS": "32",  # green
    "FAIL": "1;31",  # bold red
    "CRASH": "1;31",  # bold red: the client's own failure
    "WARN": "33",  # yellow
    "ERROR": "1;35",  # bold magenta
    "SKIP": "2",  # dim
}


def colour_outcome(word: str) -> str:
    """One outcome word (``PASS``) in its colour."""
    code = OUTCOME_COLOURS.get(word)
    return f"\033[{code}m{word}\033[0m" if code else word


def colour_outcomes(text: str) -> str:
    """Colour the outcome word that starts a check's line (client text never starts one:
    it is indented, and its own escape sequences were made visible before this)."""
    out = []
    for line in text.split("\n"):
        word = line.split(" ", 1)[0]
        out.append(colour_outcome(word) + line[len(word) :] if word in OUTCOME_COLOURS else line)
    return "\n".join(out)


def progress_line(
    done: int, total: int, result: CheckResult, *, color: bool = False, message: bool = True
) -> str:
    """One finished check, as progress: ``[3/17] PASS R3.unknown-type-inert (1.2 s): ...``."""
    word = result.outcome.upper()
    shown = colour_outcome(word) if color else word
    line = f"[{done}/{total}] {shown} {result.id} ({result.seconds:.1f} s)"
    if not message:
        return line
    said = for_terminal(terminal_line(result.message))
    return f"{line}: {said if len(said) <= 120 else said[:119] + '…'}"


def terminal_line(text: str) -> str:
    """Client text on one terminal line: newlines shown as ⏎, the length capped."""
    return clip(no_surrogates(text), 500).replace("\r\n", "⏎").replace("\n", "⏎")


def check_writable(paths: Sequence[Path | None]) -> None:
    """Fail before running anything if an output path cannot be written."""
    for path in paths:
        if path is None:
            continue
        parent = path.parent if str(path.parent) else Path(".")
        if path.is_dir():
            raise SetupError(f"output path is a directory: {path}")
        if not parent.is_dir():
            raise SetupError(f"output directory does not exist: {parent}")
        import os

        if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
            raise SetupError(f"output path is not writable: {path}")
