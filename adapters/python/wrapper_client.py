#!/usr/bin/env python3
"""A conforming wrapper: launches ``stella run`` the way a CI job does and reads how it ended.

Usage: ``wrapper_client.py [--format json|stream-json] [PROMPT]``.  It runs
``stella run --output-format FORMAT PROMPT`` (the flag after the subcommand),
then maps stella's exit status as the contract says: 0 done; 3 stopped on
purpose (read ``reason`` before retrying); 130 cancelled by the operator; 143
killed by the runner (a job timeout); anything else failed.  A run killed in
the middle of a line leaves a torn last line; everything before it still
counts, and the wrapper does not crash on it.

Exit mode: exit 0 for done, cancelled and killed, 1 for stopped and failed
(the contract's example script).  Report mode: a hello, then one summary with
the outcome, the reason and the final text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stella_reader import PROTOCOL, Reader, physical_lines

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is a tenth of a client's start-up; annotations are strings
    from typing import Any

NAME = "stella-wrapper-python"
OUTCOMES = {0: "completed", 3: "stopped", 130: "cancelled", 143: "terminated"}
SUCCESSFUL = ("completed", "cancelled", "terminated")


class Wrapper:
    """Override a method to break a rule."""

    def __init__(self, output_format: str, prompt: str) -> None:
        self.output_format = output_format
        self.prompt = prompt

    def command(self) -> list[str]:
        return ["stella", "run", "--output-format", self.output_format, self.prompt]

    def outcome(self, code: int) -> str:
        return OUTCOMES.get(code, "failed")

    def parse_envelope(self, stdout: bytes) -> dict[str, Any] | None:
        """The json envelope, or None when there is none (killed) or it is torn."""
        try:
            doc = json.loads(stdout.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return None
        if not isinstance(doc, dict) or doc.get("schema_version") != 1:
            return None
        return doc

    def reason(self, envelope: dict[str, Any] | None) -> str | None:
        if envelope is None or not isinstance(envelope.get("reason"), str):
            return None
        return str(envelope["reason"])

    def read_stream(self, stdout: bytes) -> str | None:
        import io

        reader = Reader()
        for number, content, terminated in physical_lines(io.BytesIO(stdout)):
            reader.push(number, content, terminated)
        reader.finish()
        return reader.texts[-1] if reader.texts else None

    def run(self) -> dict[str, Any]:
        try:
            done = subprocess.run(self.command(), capture_output=True, timeout=60, check=False)
        except FileNotFoundError:
            return {"outcome": "failed", "reason": None, "final_text": None}
        except subprocess.TimeoutExpired:
            return {"outcome": "failed", "reason": "stella did not finish", "final_text": None}
        outcome = self.outcome(done.returncode)
        text = None
        envelope = None
        if self.output_format == "json":
            envelope = self.parse_envelope(done.stdout)
            if envelope is not None and isinstance(envelope.get("text"), str):
                text = envelope["text"]
        else:
            text = self.read_stream(done.stdout)
        reason = self.reason(envelope) if outcome == "stopped" else None
        return {"outcome": outcome, "reason": reason, "final_text": text}


def main(wrapper_class: type[Wrapper] = Wrapper) -> None:
    args = sys.argv[1:]
    output_format = "json"
    if len(args) >= 2 and args[0] == "--format":
        output_format, args = args[1], args[2:]
    prompt = " ".join(args) or "make the store migration idempotent"
    mode = os.environ.get("STELLA_CONFORM_MODE", "exit")
    if mode == "report":
        hello = {"kind": "hello", "protocol": PROTOCOL, "profiles": ["wrapper"],
                 "client": {"name": NAME, "version": "1.0", "language": "python"}}  # fmt: skip
        print(json.dumps(hello), flush=True)
    try:
        result = wrapper_class(output_format, prompt).run()
    except Exception as exc:  # a wrapper's last line of defence: report, never a traceback
        result = {"outcome": "failed", "reason": f"wrapper error: {exc!r}", "final_text": None}
    ok = result["outcome"] in SUCCESSFUL
    if mode == "report":
        summary = {"kind": "summary", "verdict": "accept" if ok else "reject", **result}
        print(json.dumps(summary), flush=True)
    else:
        why = f" ({result['reason']})" if result["reason"] else ""
        print(f"stella: {result['outcome']}{why}", file=sys.stderr)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
