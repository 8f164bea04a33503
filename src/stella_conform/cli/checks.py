"""The catalogue: ``checks``."""

from __future__ import annotations

import json

import click


@click.command("checks")
@click.option("--json", "as_json", is_flag=True)
def list_checks(as_json: bool) -> None:
    """List every check: id, profile, tier, modes that can grade it, and what it asks."""
    from stella_conform.conformance.checks import CATALOGUE

    if as_json:
        click.echo(
            json.dumps(
                [
                    {
                        "id": c.id,
                        "name": c.name,
                        "rule": c.rule,
                        "profile": c.profile,
                        "tier": c.tier,
                        "modes": sorted(c.modes),
                        "fixtures": list(c.fixtures),
                        "wire_fixtures": list(c.wire_fixtures),
                        "mutations": list(c.mutations),
                        "fields": list(c.fields),
                        "types": list(c.types),
                        "reads": list(c.reads),
                        "why": c.why,
                    }
                    for c in CATALOGUE
                ],
                indent=2,
            )
        )
        return
    for c in CATALOGUE:
        modes = "all modes" if len(c.modes) == 3 else "/".join(sorted(c.modes))
        click.echo(f"{c.id:<32} {c.profile:<9} {c.tier:<6} {modes:<18} {c.name}")
