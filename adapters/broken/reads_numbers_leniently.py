#!/usr/bin/env python3
"""Breaks rule 4: reads a bad number leniently instead of failing. "input_tokens":"1200"
becomes 1200, and a number it cannot make sense of (null, -1, 1.5, "") becomes 0 —
silently, the way a lax model validator or a `Number(x) || 0` does."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import OPTIONAL, REQUIRED, Adapter, Reader, check_field, main

NUMERIC = ("uint", "uint-or-null")


def _numeric(spec):
    return spec == ("number",) or (isinstance(spec, tuple) and spec[0] in NUMERIC)


def _lenient(value):
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0
    return int(number) if number >= 0 and number == int(number) else 0


class BrokenReader(Reader):
    def normalize(self, tag, event):
        fixed = dict(super().normalize(tag, event))
        specs = {**REQUIRED[tag], **OPTIONAL.get(tag, {})}
        for name, spec in specs.items():
            if _numeric(spec) and name in fixed and check_field(fixed[name], spec, name):
                fixed[name] = _lenient(fixed[name])
        return fixed


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
