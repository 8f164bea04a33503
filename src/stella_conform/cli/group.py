"""The command group every command runs in: usage errors as one line and exit 2, a bug in
the kit as exit 3, broken pipes quiet, every process the command starts supervised."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import click

from stella_conform.errors import INTERNAL_ERROR, OUTPUT_CLOSED, SETUP_ERROR, SetupError

F = TypeVar("F", bound=Callable[..., Any])


def fail_setup(message: str) -> NoReturn:
    # a message may quote a client's output or a file's name: never raw control bytes
    from stella_conform.safe_text import for_terminal

    click.echo(f"stella-conform: {for_terminal(message)}", err=True)
    sys.exit(SETUP_ERROR)


def _printable_streams() -> None:
    """Print what cannot be encoded (a lone surrogate from a stream) as its escape."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # a detached or closed stream
                reconfigure(errors="backslashreplace")


def _unwritable_stream(exc: OSError) -> str | None:
    """The standard stream (``stdout``, ``stderr``) whose write raised ``exc``, if one did.

    The write that failed is in the innermost frame, with the stream it wrote to (click's
    ``echo``: ``file``); a stream's buffer is dropped on a failed write, so flushing it
    again cannot tell.  The failed one is pointed at ``/dev/null``, so that the
    interpreter's own flush at exit does not fail again."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    for value in tb.tb_frame.f_locals.values() if tb is not None else ():
        try:
            fd = value.fileno() if callable(getattr(value, "fileno", None)) else None
        except (OSError, ValueError):
            continue
        if fd in (1, 2):
            with contextlib.suppress(OSError):
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, fd)
                os.close(null)
            return "stdout" if fd == 1 else "stderr"
    return None


class KitGroup(click.Group):
    """Turns :class:`SetupError` into one line and exit 2, an internal error into exit 3
    (never 1, which reads as a verdict), and keeps broken pipes quiet; an output that
    cannot be written (a full disk) is one line and exit 2, not an internal error."""

    def invoke(self, ctx: click.Context) -> Any:
        from stella_conform import stopping

        _printable_streams()
        try:
            # every process the command starts is supervised, and gone when it ends
            with stopping.command():
                return super().invoke(ctx)
        except SetupError as exc:
            fail_setup(str(exc))
        except BrokenPipeError:
            # the output's reader left (`| head`): nothing more can be said
            sys.stderr.close()
            sys.exit(OUTPUT_CLOSED)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException, SystemExit):
            raise
        except Exception as exc:
            if isinstance(exc, OSError) and (lost := _unwritable_stream(exc)) is not None:
                # `> log` on a full disk, /dev/full: the output's failure, not the kit's
                with contextlib.suppress(OSError, ValueError):
                    click.echo(f"stella-conform: cannot write to {lost}: {exc.strerror}", err=True)
                sys.exit(SETUP_ERROR)
            import traceback

            traceback.print_exc()
            click.echo(
                f"stella-conform: internal error (a bug in the kit, not a verdict): exit status "
                f"{INTERNAL_ERROR}; please report it with the traceback above",
                err=True,
            )
            sys.exit(INTERNAL_ERROR)
