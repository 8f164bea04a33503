"""A conforming client for each of these readings, taking the non-default side, passes
what it claims on every seed; the broken clients of the same points fail on every seed.

Each client takes reading B at one point (docs/contract-readings.md): ``ts: null`` rejected
as the wire schema types ``ts``, the version gap counted by type names, and an envelope's
token totals unknown without ``step_usage``.
Graded on the checks whose cases reach the point, on 20 seeds: a reading the grader
honours on some seeds only would be a false fail waiting.
(Every check of their profiles, on the fixtures: tests/conformance/checks/test_client_matrix.py.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import ADAPTERS

from stella_conform.conformance.checks import BY_ID
from stella_conform.conformance.checks.claims import from_hello
from stella_conform.conformance.clients.runner import Client, ensure_mode_supported, resolve_client
from stella_conform.conformance.suite import SuiteConfig, run_check, shared_sessions
from stella_conform.schemas.vocabulary import Vocabulary

SEEDS = range(20)
CLIENTS = {
    "validating_ts_client.py": (("R1.valid-runs-accepted",), "ts-null"),
    "counts_type_names_client.py": (("R3.unknown-counted",), "unknown-count"),
    "unknown_tokens_envelope_client.py": (("E.usage-read",), "tokens-without-usage"),
}


@pytest.mark.slow
@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_a_reading_s_client_passes_on_every_seed(tmp_path: Path, client: str) -> None:
    checks, point = CLIENTS[client]
    argv = resolve_client((sys.executable, str(ADAPTERS / "python" / client)))
    took_b = 0
    with shared_sessions():  # one client process for every seed
        for seed in SEEDS:
            config = SuiteConfig(
                Client(argv, "persistent", timeout=10.0),
                examples=5,
                seed=seed,
                database_dir=None,
                failures_dir=tmp_path / "failures",
                shrink_budget=0,
            )
            hello = ensure_mode_supported(config.client)  # its claims, as run reads them
            config = config.with_claims(from_hello(hello, Vocabulary.default()))
            for check_id in checks:
                result = run_check(BY_ID[check_id], config)
                assert result.outcome == "pass", (seed, check_id, result.message)
                took_b += result.readings.get(f"{point}=B", 0)
                assert not result.readings.get(f"{point}=A"), (seed, result.readings)
    assert took_b >= len(SEEDS)  # the reading was met, and taken, on every seed


BROKEN = {
    "dashboard_ends_on_complete.py": "D.run-terminator",
    "final_text_folds_line_separators.py": "R1.lines-end-only-at-newline",
    "final_text_prefers_legacy_field.py": "R4.legacy-spelling-fits",
    "summary_only_drops_unterminated_line.py": "R6.unterminated-last-line-read",
}


@pytest.mark.slow
@pytest.mark.parametrize("client", sorted(BROKEN))
def test_this_round_s_broken_clients_are_caught_on_every_seed(tmp_path: Path, client: str) -> None:
    """What claims once hid (a terminator computed without run_complete) and what a check
    never compared (final_text under line separators and beside a legacy alias; a
    summary-only client's last line)."""
    check = BY_ID[BROKEN[client]]
    argv = resolve_client((sys.executable, str(ADAPTERS / "broken" / client)))
    with shared_sessions():
        for seed in SEEDS:
            config = SuiteConfig(
                Client(argv, "persistent", timeout=10.0),
                examples=1,
                seed=seed,
                database_dir=None,
                failures_dir=tmp_path / "failures",
                shrink_budget=0,
            )
            hello = ensure_mode_supported(config.client)
            config = config.with_claims(from_hello(hello, Vocabulary.default()))
            result = run_check(check, config)
            assert result.outcome == "fail", (seed, result.outcome, result.message)
