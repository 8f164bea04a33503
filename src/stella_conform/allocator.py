"""The kit's process keeps the large blocks it frees, instead of giving them back at once.

A run grades megabyte streams (``R1.long-lines`` writes lines of 64 KiB and of a megabyte),
and each such case makes several blocks of a megabyte or more: the stream's bytes, their
base64, the case message, the decoded text.
glibc's ``malloc`` serves a block that large from ``mmap`` and unmaps it at ``free`` (its
threshold starts at 128 KiB and grows only to the largest block freed so far), and trims
the top of the heap once 128 KiB or more is free there, so the next such block is fresh
pages again: a page fault for every 4 KiB written, which on a virtual machine costs more
than copying the page.  Keeping freed blocks of up to 32 MiB cuts the kit's minor faults
in a default run of the reader profile to under half (``tests/test_allocator.py``
counts them).  The price is a little memory: freed blocks kept on the heap fragment it,
so a run's peak is a few MiB higher, still flat in the cases graded.

Only the command line asks for it (:func:`keep_large_blocks` in ``cli.main``): a library
must not change the allocator of the process it is imported into (the pytest plugin runs
in the user's own pytest).  Elsewhere than glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import os

#: ``mallopt``'s parameters (glibc's ``malloc.h``).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: Blocks up to this size come from the heap, and this much may stay free at its top.
#: glibc accepts an mmap threshold up to 32 MiB on a 64-bit machine.
KEEP = 32 << 20


def keep_large_blocks() -> bool:
    """Tell glibc's ``malloc`` to keep freed blocks of up to :data:`KEEP` bytes; whether
    it did (False on another C library, or where ``mallopt`` cannot be called)."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):  # glibc's own name for its version
            return False
    except (AttributeError, ValueError, OSError):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, KEEP)) and bool(mallopt(_M_TRIM_THRESHOLD, KEEP))


__all__ = ["KEEP", "keep_large_blocks"]
