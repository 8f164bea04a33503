"""The kit's command line keeps the large blocks it frees (``stella_conform/allocator.py``).

A megabyte case makes several blocks of a megabyte or more; by default glibc gives each
back at its ``free`` and the next one is fresh pages, a page fault for every 4 KiB.  Counted in page
faults, never in time: the second round of the same large blocks takes none.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

#: Blocks of 1 to 16 MiB written and freed, twice; prints the second round's page faults.
ROUNDS = """
import resource, sys
from stella_conform.cli import main
main(sys.argv[1:], standalone_mode=False)  # a command, as `stella-conform` runs it
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(2):
    before = faults()
    for mib in range(1, 17):
        block = b"x" * (mib << 20)
        del block
print(faults() - before)
"""

pytestmark = pytest.mark.skipif(
    not hasattr(os, "confstr") or "glibc" not in (os.confstr("CS_GNU_LIBC_VERSION") or ""),
    reason="the allocator kept is glibc's",
)


def _second_round_faults() -> int:
    out = subprocess.run(
        [sys.executable, "-c", ROUNDS, "checks"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return int(out.stdout.split()[-1])


def test_a_kit_command_reuses_the_large_blocks_it_freed() -> None:
    # 16 MiB written again is 4,096 pages: every one a fault when the blocks were given back
    assert _second_round_faults() < 256
