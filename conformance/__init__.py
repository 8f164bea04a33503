"""The conformance layer: what runs a client (``clients``), what grades it (``checks``),
one grading session (``suite``), what a run keeps (``store``), ``fuzz``, ``matrix`` and
``report``."""

if __name__ != "stella_conform.conformance":  # pragma: no cover - exercised by tests/test_layout.py
    raise ImportError(
        "the kit's conformance layer is imported as stella_conform.conformance, never as "
        "'conformance': a second name loads every module twice, each with its own state "
        "(install the kit, or run from src/ with the package on sys.path)"
    )
