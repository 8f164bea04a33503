#!/usr/bin/env python3
"""The reference Python reader, narrowed to what its command line says it is.

``narrowed_client.py [--knows TYPE,...] [--summary-only] [FILE]``: it knows exactly those
types (of today's stella and the older one's ``complete``, as
adapters/python/both_versions_client.py does) and reads every other one as unrecognized,
so a claim ``--knows TYPE,...`` is true of it whatever the names; with ``--summary-only``
it reads the whole text and reports no lines (adapters/python/summary_only_client.py).
Its hello claims nothing: the test makes the claims, as the command line would.
tests/conformance/checks/test_claims_property.py grades it under random claims.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "adapters", "python"))

from both_versions_client import BOTH_REQUIRED, BothReader  # noqa: E402
from stella_reader import Adapter  # noqa: E402
from summary_only_client import SummaryOnly  # noqa: E402

ARGS = sys.argv[1:]
KNOWS = None
if ARGS[:1] == ["--knows"]:
    KNOWS = frozenset(ARGS[1].split(",")) & frozenset(BOTH_REQUIRED)
    ARGS = ARGS[2:]
WHOLE = ARGS[:1] == ["--summary-only"]
ARGS = ARGS[1:] if WHOLE else ARGS


class Narrowed(BothReader):
    if KNOWS is not None:
        known_types = KNOWS
        required = {k: v for k, v in BOTH_REQUIRED.items() if k in KNOWS}


class Adapted(SummaryOnly if WHOLE else Adapter):
    reader_class = Narrowed
    claims = {}  # noqa: RUF012 - read-only


if __name__ == "__main__":
    try:
        sys.exit(Adapted().main(ARGS))
    except BrokenPipeError:
        sys.exit(1)
