#!/usr/bin/env python3
"""A conforming client that validates each line against stella's published wire schema.

Three independently written clients of stella do this: they load
``agentevent.schema.json`` and check every line of a known type against its member with a
JSON Schema library.  The schema's keywords are all they know, so at every registered point
where the keywords and the prose disagree they take the keywords' side
(docs/contract-readings.md):

* ``ts: null`` is an error: the schema types ``ts`` as an integer (ts-null B);
* an alias the schema names only in its descriptions (a role that shipped as ``judge``, the
  ``judge_verdict`` event, an old rung) is not known: an error, an old type name
  unrecognized (learnt-alias B);
* a constraint stated only in prose is not checked (prose-constraint B);
* a wrapper holds its one arm (extra-key-beside-arm B), a stage without scope misses a
  required field (scopeless-stage B).

The text/delta aliases are the contract's own words, not only the schema's: it reads them.
Grade it against the schema it validates with:

    stella-conform run --wire-schema agentevent.schema.json -- \\
        python3 adapters/python/schema_client.py --schema agentevent.schema.json
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stella_reader import ALIASES, Adapter, Reader, main


def _schema_path() -> str:
    """``--schema PATH`` (taken off the command line before the adapter reads it)."""
    if len(sys.argv) > 2 and sys.argv[1] == "--schema":
        path = sys.argv[2]
        del sys.argv[1:3]
        return path
    sys.exit("usage: schema_client.py --schema agentevent.schema.json [STREAM]")


SCHEMA_PATH = _schema_path() if __name__ == "__main__" else ""


def _validators(path: str) -> dict[str, object]:
    from jsonschema import Draft202012Validator

    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    out = {}
    for branch in doc["oneOf"]:
        member = branch
        if "$ref" in branch:
            member = doc["$defs"][branch["$ref"].rsplit("/", 1)[-1]]
        tag = member["properties"]["type"]["const"]
        out[tag] = Draft202012Validator({**member, "$defs": doc.get("$defs", {})})
    return out


class SchemaReader(Reader):
    validators: dict[str, object] = {}  # noqa: RUF012 - set once, at start

    @property
    def known_types(self):  # type: ignore[override]
        return frozenset(self.validators)

    def type_of(self, event):
        tag = event.get("type")
        return tag if isinstance(tag, str) and tag in self.validators else None

    def normalize(self, tag, event):
        alias = ALIASES.get(tag)
        if alias and alias[0] not in event and alias[1] in event:
            event = dict(event)
            event[alias[0]] = event.pop(alias[1])
        return event

    def misfit(self, tag, event):
        error = next(iter(self.validators[tag].iter_errors(event)), None)  # type: ignore[attr-defined]
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path) or "the event"
        return f"{tag}: {where}: {error.message}"

    def _fold(self, tag, event):
        if tag in ("stage", "text", "text_delta", "step_usage", "turn_complete", "run_complete"):
            super()._fold(tag, event)
        else:  # a type of the schema this reader shows nothing of
            self.known_events += 1
            self.last_known = tag
            self._clock(event.get("ts"))


class SchemaAdapter(Adapter):
    reader_class = SchemaReader


if __name__ == "__main__":
    SchemaReader.validators = _validators(SCHEMA_PATH)
    main(SchemaAdapter)
