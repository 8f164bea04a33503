"""The schemas layer: the vocabulary of known types and their body schemas, compiled into
the fit checks the oracle and the generators use."""

if __name__ != "stella_conform.schemas":  # pragma: no cover - exercised by tests/test_layout.py
    raise ImportError(
        "the kit's schemas layer is imported as stella_conform.schemas, never as "
        "'schemas': a second name loads every module twice, each with its own state "
        "(install the kit, or run from src/ with the package on sys.path)"
    )
