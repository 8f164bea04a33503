"""The stop state this process shares between the stopping modules: what is live (client
process groups, temporary folders and files), who runs the handlers, the watchdog, and a
``-j`` worker's ledger.  Each is read and set here, as ``state.NAME``, by every module
that needs it."""

from __future__ import annotations

import signal
from typing import Any

#: Signals that stop the kit.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)

#: The live client process groups, temporary folders and temporary files of this process.
groups: set[int] = set()
dirs: set[str] = set()
files: set[str] = set()
#: The pid of the kit's main process: where the handlers were installed (:func:`install`).
main_pid: int | None = None
#: Whether the handlers are installed in this process (:func:`install`).
installed_pid: int | None = None
#: This process's watchdog: (the pid that started it, its ``Popen``, the kit's end of the
#: pipe, its token). A forked ``-j`` worker keeps its parent's (and its end of the pipe):
#: the watchdog acts once the last of them is gone.
watchdog: tuple[int, Any, int, str] | None = None
#: In a ``-j`` worker: the pool's ledger, a file with no name that every worker of the pool
#: appends to, so that the parent can remove what a killed worker tracked.
ledger: tuple[int, int] | None = None  # (the worker's pid, the ledger's descriptor)
