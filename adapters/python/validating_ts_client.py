#!/usr/bin/env python3
"""A conforming client that validates `ts` as stella's wire schema types it: an integer.

The contract's prose says "read it as ``ts ?? null``", and stella's readers take a
``"ts": null`` as the absent stamp (reading A of ``ts-null``); the wire schema types ``ts``
as an unsigned integer, so a client that validates each line against stella's published
schema rejects it (reading B).  Both conform (docs/contract-readings.md): this client
takes B, and passes everything it claims.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stella_reader import Adapter, Reader, main


class ValidatingReader(Reader):
    def misfit(self, tag, event):
        if "ts" in event and event["ts"] is None:
            return f"{tag}: 'ts' must be an integer (the wire schema), got null"
        return super().misfit(tag, event)


class Validating(Adapter):
    reader_class = ValidatingReader


if __name__ == "__main__":
    main(Validating)
