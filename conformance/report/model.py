"""A run's result: the checks graded, what they came to, and the exit status it leaves with.

:class:`Report` holds what every output says — counts, the blocking checks, the known
failures that now pass, the claims and the chosen mode in words — and renders nothing:
each format is its own module (``terminal``, ``json_report``, ``junit``, ``markdown``).
A report that says more (``fuzz``'s) gives it through two hooks those modules call,
:meth:`Report.extra_json` and :meth:`Report.extra_lines`.
"""

from __future__ import annotations

import datetime as _dt
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stella_conform.conformance.checks import BY_ID, unmatched_globs
from stella_conform.conformance.suite import CheckResult, SuiteConfig
from stella_conform.errors import SetupError, exit_status, read_toml_file

#: ``crash``: the client died on a case (its own failure, like ``fail``); ``error``: a case
#: could not be judged (a hang, a protocol error, the time budget): the kit's word, not a
#: verdict on the client.
OUTCOMES = ("pass", "fail", "crash", "warn", "error", "skip")
#: The outcomes a check shows its failing cases for.
FAILING = ("fail", "crash", "warn", "error")
REPORT_FORMAT = "stella-conform/report/1"


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

    def sampled_note(self) -> str | None:
        """What a sampled run says of the known failures that passed in it (not proven fixed)."""
        passing = self._passing_known()
        if self.config.fixtures_per_check is None or not passing:
            return None
        return (
            f"known failure(s) passed on a sample of the fixtures (fixtures_per_check = "
            f"{self.config.fixtures_per_check}), so not proven fixed: {', '.join(passing)}"
        )

    def case_cache(self) -> dict[str, Any] | None:
        """What the case cache did for the run, when it had one: the checks whose generated
        cases it served (authenticated), the ones it kept, the files it refused."""
        said = [r.case_cache for r in self.results if r.case_cache]
        if not said:
            return None
        refused = [s.removeprefix("refused: ") for s in said if s.startswith("refused: ")]
        off = next((s.removeprefix("off: ") for s in said if s.startswith("off: ")), None)
        return {
            "folder": str(self.config.case_cache),
            "read": said.count("read"),
            "written": said.count("written"),
            "refused": len(refused),
            **({"why_refused": refused[0]} if refused else {}),
            **({"off": off} if off is not None else {}),
        }

    def cache_note(self) -> str | None:
        """The case cache in a line, when it decided something: a run graded from files it
        did not draw says so, as does one whose cache files were refused or that has none."""
        cache = self.case_cache()
        if cache is None:
            return None
        if "off" in cache:
            return f"case cache off: {cache['off']}"
        said = []
        if cache["read"]:
            said.append(
                f"{cache['read']} check(s) graded from the case cache {cache['folder']} "
                "(authenticated by its key)"
            )
        if cache["refused"]:
            said.append(
                f"{cache['refused']} case cache file(s) refused ({cache['why_refused']}): "
                "their cases generated afresh"
            )
        return "; ".join(said) or None

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

    def stella(self) -> Any:
        """The vocabulary the stella under test writes (claims are stated against it)."""
        return self.config.stella_vocabulary()

    def checks(self) -> list[Any]:
        """The catalogue's checks behind the results (claims say what they leave ungraded)."""
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
        return self.config.claims.describe(self.stella(), self.checks())

    # What a report that says more adds; each format module asks for it.

    def extra_json(self) -> dict[str, Any]:
        """Keys the JSON report holds after the run's own (none for a run)."""
        return {}

    def extra_lines(self) -> list[str] | None:
        """Lines after the run's own in the terminal and Markdown reports, when this report
        has a section of its own (even an empty one); None: it has none."""
        return None
