"""The inputs the kit grades, one :class:`InputKind` each, registered by name in :data:`KINDS`.

``stream`` (JSON lines: reader, dashboard, recorder), ``envelope`` (one JSON document),
``scenario`` (what a fake ``stella`` plays to a wrapper) and ``journal`` (a trace journal).
The rest of the kit asks a case's or a check's kind (``KINDS[case.kind]``) what differs
between them; a new input is one module whose kind registers itself (:func:`register`).
"""

from stella_conform.conformance.kinds.protocol import InputKind
from stella_conform.conformance.kinds.registry import KINDS, Registry, register

# isort: off
# the built-in kinds register themselves on import, in this order
from stella_conform.conformance.kinds import stream, envelope, scenario, journal

# isort: on

__all__ = [
    "KINDS",
    "InputKind",
    "Registry",
    "envelope",
    "journal",
    "register",
    "scenario",
    "stream",
]
