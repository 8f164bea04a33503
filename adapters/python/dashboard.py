#!/usr/bin/env python3
"""A small conforming dashboard: what a status panel for a stella run should show.

    stella run --output-format stream-json "..." | dashboard.py

While the run streams it redraws one status line on stderr (when stderr is a
terminal); at the end it prints a panel on stdout: the final text (previews
replaced, never appended), stages per scope, turns, how the run ended, the
elapsed time from ``ts`` (absent lines skipped, backward steps clamped to zero),
and the version gap.  Under the kit (``STELLA_CONFORM_MODE=report`` or
``persistent``) it speaks the adapter protocol instead and claims the
``reader`` and ``dashboard`` profiles.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stella_reader import NAME, Adapter, Reader, main

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is a tenth of a client's start-up; annotations are strings
    from typing import Any


class LiveReader(Reader):
    live = False

    def _fold(self, tag: str, event: dict[str, Any]) -> None:
        super()._fold(tag, event)
        if self.live:
            stage = (self.stages["turn"] or ["-"])[-1]
            shown = ("".join(self.preview) or (self.texts[-1] if self.texts else ""))[-50:]
            sys.stderr.write(f"\r\033[K[{stage}] {shown}")
            sys.stderr.flush()


def panel(reader: Reader) -> str:
    s = reader.summary()
    ended = {"run_complete": "completed", "error": "failed"}.get(s["terminator"], "not finished")
    elapsed = "n/a" if s["elapsed_ms"] is None else f"{s['elapsed_ms'] / 1000:.1f} s"
    types = ", ".join(s["unrecognized_types"])
    gap = f"{s['unrecognized_events']} event(s) of newer type(s): {types}"
    if not s["unrecognized_events"]:
        gap = "none"
    lines = [
        f"run:         {ended} after {s['turns_completed']} turn(s), {elapsed}",
        f"turn stages: {' → '.join(s['stages']['turn']) or '-'}",
        f"run stages:  {' → '.join(s['stages']['run']) or '-'}",
        f"version gap: {gap}",
        "",
        s["final_text"] or "(no text)",
    ]
    if s["preview"]:
        lines.append(f"(still streaming: {s['preview']})")
    return "\n".join(lines)


class Dashboard(Adapter):
    reader_class = LiveReader

    def run_exit(self, argv: list[str]) -> int:
        LiveReader.live = sys.stderr.isatty()
        if argv:
            with open(argv[0], "rb") as fh:
                reader = self.read(fh, lambda m: None)
        else:
            reader = self.read(sys.stdin.buffer, lambda m: None)
        if LiveReader.live:
            sys.stderr.write("\r\033[K")
        if reader.rejected:
            line, reason = reader.rejected
            sys.stderr.write(f"{NAME}: line {line}: {reason}\n")
            return 1
        print(panel(reader))
        return 0


if __name__ == "__main__":
    main(Dashboard)
