#!/usr/bin/env python3
"""Envelope bug: a token count that is not a number is read as nothing, not as an error.

Modelled on a real envelope reader that turned ``"input_tokens":"1200"`` in a step_usage
into nothing: its event model typed the counts ``number | undefined``, so a string, a
null, a negative or a fraction validated as "no count" and the run was reported with
fewer tokens. It checks every other field of every event by the stream rules; only the
two counts it sums are let through, as nothing.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from envelope_client import EnvelopeReader, main

COUNTS = ("input_tokens", "output_tokens")


def count(value):
    """The count, or None ("undefined") for anything that is not a u64."""
    if type(value) is int and 0 <= value < 2**64:
        return value
    return None


class Broken(EnvelopeReader):
    def events(self, doc):
        events = doc.get("events")
        if not isinstance(events, list):
            return super().events(doc)
        checked = []
        for event in events:
            if isinstance(event, dict) and event.get("type") == "step_usage":
                event = {**event, **{k: count(event[k]) or 0 for k in COUNTS if k in event}}
            checked.append(event)
        return super().events({**doc, "events": checked})

    def tokens(self, doc, reader):
        if reader is None:
            return None, None
        steps = [e for e in doc["events"] if isinstance(e, dict) and e.get("type") == "step_usage"]
        return tuple(sum(count(e.get(k)) or 0 for e in steps) for k in COUNTS)


if __name__ == "__main__":
    main(Broken)
