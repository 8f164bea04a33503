"""Stopping the kit stops everything: clients, workers, temporary files, escaped grandchildren.

A CI job is cancelled with SIGTERM, a terminal closes with SIGHUP, a person presses Ctrl-C.
Whatever the kit was doing, within two seconds: every client process group is killed,
``-j`` workers are stopped (each kills its own clients first), temporary folders are
removed, the report is written marked incomplete, and the kit exits 128 + the signal
(130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).

This module keeps what must be cleaned up — the live client process groups and temporary
folders of *this* process — and does the cleaning.  On Linux the kit (and each worker) is
also a *child subreaper*: a grandchild that left the client's process group with
``setsid`` is re-parented to the kit when the client dies, instead of to init, so the kit
can find and kill it after each case.

It is one mechanism for every command, not a step each command must remember: the CLI
runs every command inside :func:`command`, and everything that starts a process (a
client, an oracle, a worker pool) calls :func:`supervise` first, which sets up the
handlers and the subreaper in the command's main process the first time.  When the
command ends — by returning, by an error, or by a stop signal — :func:`command` kills
whatever is still tracked and reaps whatever a client left behind.

This package is its façade (``stopping.X``); the rooms behind it: :mod:`.state` (the stop
state the rooms share), :mod:`.stops` (what a stop raises), :mod:`.ledger` (what is live,
and a ``-j`` worker's ledger of it), :mod:`.reaper` (orphans, clean-up),
:mod:`.watchdog_link` (the link to :mod:`.watchdog`, a script that imports nothing of the
kit), :mod:`.signals` (the handlers, :func:`command`, :func:`leave`) and :mod:`.pool`
(``-j`` workers).
"""

from __future__ import annotations

from stella_conform.stopping import state
from stella_conform.stopping.ledger import (
    private_dir,
    remove_dir,
    temp_dir,
    track_file,
    track_group,
    tracked_dir,
    untrack_file,
    untrack_group,
)
from stella_conform.stopping.pool import (
    finished,
    pool_context,
    stop_pool,
    worker_init,
    worker_pool,
)
from stella_conform.stopping.reaper import (
    REAP_MARK_ENV,
    _as_before,
    become_subreaper,
    clean_up,
    client_env,
    reap_orphans,
    reaped,
)
from stella_conform.stopping.signals import (
    check,
    command,
    first_interrupt_asks,
    install,
    installed,
    leave,
    leave_after,
    on_worker_stop,
    signals_held,
    supervise,
)
from stella_conform.stopping.state import STOP_SIGNALS
from stella_conform.stopping.stops import Stopped, WorkerLost
from stella_conform.stopping.watchdog_link import DISMISS_WAIT, WATCH_ENV, dismiss, watch

#: The live client process groups of this process (the same set as ``state.groups``).
_groups = state.groups

__all__ = [
    "DISMISS_WAIT",
    "REAP_MARK_ENV",
    "STOP_SIGNALS",
    "WATCH_ENV",
    "Stopped",
    "WorkerLost",
    "_as_before",
    "become_subreaper",
    "check",
    "clean_up",
    "client_env",
    "command",
    "dismiss",
    "finished",
    "first_interrupt_asks",
    "install",
    "installed",
    "leave",
    "leave_after",
    "on_worker_stop",
    "pool_context",
    "private_dir",
    "reap_orphans",
    "reaped",
    "remove_dir",
    "signals_held",
    "stop_pool",
    "supervise",
    "temp_dir",
    "track_file",
    "track_group",
    "tracked_dir",
    "untrack_file",
    "untrack_group",
    "watch",
    "worker_init",
    "worker_pool",
]
