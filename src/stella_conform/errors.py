"""Errors that end a command with one clear line and exit status 2."""

from __future__ import annotations


class SetupError(Exception):
    """Bad input to the kit itself: a missing file, a malformed schema, a bad client command.

    The CLI prints ``stella-conform: <message>`` and exits 2, never a traceback.
    """
