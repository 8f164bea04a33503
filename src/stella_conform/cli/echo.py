"""The one way a command prints a line for people.

Every line a command prints may carry outside text (a client's reason or stderr, a
stream's types and texts, a journal's ids, a path): it goes through
:func:`~stella_conform.safe_text.for_terminal`, so escape sequences are shown, not acted
on, and no line starts a GitHub workflow command (``::error::``).
"""

from __future__ import annotations

from typing import Any

import click

from stella_conform.safe_text import for_terminal


def say(text: object = "", **kwargs: Any) -> None:
    """``click.echo`` of ``text`` made inert for a terminal (``err=True`` for stderr)."""
    click.echo(for_terminal(str(text)), **kwargs)
