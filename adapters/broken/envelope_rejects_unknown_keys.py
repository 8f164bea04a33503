#!/usr/bin/env python3
"""Envelope bug: validates against the keys it knows today and refuses any new one."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from envelope_client import EnvelopeReader, Refused, main

KNOWN = {
    "schema_version", "status", "text", "cost_usd", "reason", "model", "events",
    "files_touched", "withheld", "task_class", "verdict", "revisions", "candidates_run",
    "reflection", "rows", "session", "step", "verified",
}  # fmt: skip


class Broken(EnvelopeReader):
    def check_version(self, doc):
        super().check_version(doc)
        extra = sorted(set(doc) - KNOWN)
        payload = doc.get("files_touched")
        if isinstance(payload, dict):
            extra += sorted(set(payload) - {"files_touched"})
        if extra:
            raise Refused(f"unexpected key {extra[0]!r}")


if __name__ == "__main__":
    main(Broken)
