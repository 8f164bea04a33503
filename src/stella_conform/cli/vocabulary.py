"""The known types: ``vocabulary``.

The list a client author needs first: which ``type`` tags are known, which fields
each requires, which legacy spellings it accepts.  Without it, a hand-written client
missed ``budget_tick`` and ``reasoning``, found only inside the kit's schema files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from stella_conform.cli.client import load_vocabulary, wire_schema_option


def describe(vocab: Any) -> dict[str, Any]:
    """The vocabulary as JSON: per known type, its required and optional fields, aliases."""
    types = []
    for tag in sorted(vocab.known):
        member = vocab.members[tag]
        required = [f for f in member.get("required", ()) if f != "type"]
        props = member.get("properties", {})
        optional = [f for f in props if f not in required and f != "type"]
        alias = vocab.aliases.get(tag)
        archived = vocab.archived.get(tag)
        types.append(
            {
                "type": tag,
                "title": member.get("title"),
                "required": required,
                "optional": optional,
                "alias": {"field": alias.field, "legacy": alias.legacy} if alias else None,
                "archived_shape": (
                    {"missing": archived.missing, "why": archived.why} if archived else None
                ),
            }
        )
    return {
        "vocabulary": vocab.ident,
        "source": vocab.source,
        "turn_boundary": vocab.turn_boundary,
        "types": types,
    }


def _line(entry: dict[str, Any], width: int) -> str:
    text = f"{entry['type']:<{width}}  requires " + (", ".join(entry["required"]) or "nothing")
    alias = entry["alias"]
    if alias:
        text += f" ({alias['field']} also spelled {alias['legacy']})"
    if entry["optional"]:
        text += f"; optional {', '.join(entry['optional'])}"
    if entry["archived_shape"]:
        text += f"; without {entry['archived_shape']['missing']}: unrecognized, not corrupt"
    return text


@click.command("vocabulary")
@wire_schema_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def vocabulary(wire_schema: Path | None, as_json: bool) -> None:
    """List the known event types, their required fields and legacy spellings.

    A client must recognize these (and only these) as known; every other type is
    unrecognized and inert (rule 3). Pass --wire-schema with your stella release's
    agentevent.schema.json, or --vocabulary stella-older, to list another stella's.
    """
    vocab = load_vocabulary(wire_schema)
    doc = describe(vocab)
    if as_json:
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        return
    types = doc["types"]
    click.echo(
        f"{doc['vocabulary']} ({doc['source']}): {len(types)} known types; a turn ends on "
        f"{doc['turn_boundary']}, the run on run_complete (or error)"
    )
    width = max(len(t["type"]) for t in types)
    for entry in types:
        click.echo(_line(entry, width))
    click.echo("every other type is unrecognized: skip it and keep going (rule 3)")
