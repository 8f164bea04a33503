"""The catalogue of checks, as data, with the judges that decide them: one module per profile.

A check names one thing the contract asks of a client, in the contract's own
words.  It says which cases grade it (curated fixtures by name, generated
cases carrying its mutations, unmutated valid runs), which modes can observe
it, and which judge compares the client's behaviour with the reference
decoder's.

Case sets are chosen so that one flaw trips one check: *verdict* checks ask
"did the client accept or reject as it must?"; *detail* checks (counts,
per-line readings, line numbers, stderr) only look at cases whose verdict was
already right, so a client that wrongly rejects is not failed twice.

Where each part lives:

* :mod:`.model`: the :class:`Check` row, the :class:`Judgment` a judge answers,
  the :class:`Context` it judges in, and :func:`combine` (one outcome per check);
* :mod:`.case`: the :class:`GradedCase`, a case as the grader sees it, with the
  oracle's reading;
* :mod:`.dispatch`: :func:`judge`, which picks a check's judge and runs it under
  every conforming reading;
* :mod:`.judging`: what the profiles' judges share;
* one module per profile, its checks and their judges side by side:
  :mod:`.reader` (R1 to R6), :mod:`.dashboard` (``D.*``), :mod:`.recorder`
  (``P.*``), :mod:`.envelope` (``E.*``), :mod:`.wrapper` (``W.*``) and
  :mod:`.trace` (``J.*``, and the ``T.*`` checks over a whole journal);
* :mod:`.claims`: what a client claims to know, read and compute, and so which
  checks grade it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence

from stella_conform.conformance.checks.dashboard import DASHBOARD
from stella_conform.conformance.checks.dispatch import (
    JUDGES,
    expand_digests,
    judge,
    judge_verdict,
    register_judge,
    unregister_judge,
)
from stella_conform.conformance.checks.envelope import ENVELOPE
from stella_conform.conformance.checks.judging import unanswered
from stella_conform.conformance.checks.model import (
    ALL_MODES,
    EXIT_ONLY,
    LAUNCHED,
    PROFILE_INPUT,
    REPORTING,
    Check,
    Context,
    Judge,
    Judgment,
    Tier,
    Verdict,
    combine,
    profiles,
    register_profile,
    unregister_profile,
)
from stella_conform.conformance.checks.reader import READER
from stella_conform.conformance.checks.recorder import RECORDER, json_equal
from stella_conform.conformance.checks.trace import TRACE
from stella_conform.conformance.checks.wrapper import WRAPPER
from stella_conform.conformance.kinds.case import GradedCase, expected_text, expected_verdict_text

__all__ = [
    "ALL_MODES",
    "BY_ID",
    "CATALOGUE",
    "DASHBOARD",
    "ENVELOPE",
    "EXIT_ONLY",
    "JUDGES",
    "LAUNCHED",
    "PROFILE_INPUT",
    "READER",
    "RECORDER",
    "REPORTING",
    "TRACE",
    "WRAPPER",
    "Check",
    "Context",
    "GradedCase",
    "Judge",
    "Judgment",
    "Tier",
    "Verdict",
    "combine",
    "expand_digests",
    "expected_text",
    "expected_verdict_text",
    "json_equal",
    "judge",
    "judge_verdict",
    "profiles",
    "register_judge",
    "register_profile",
    "select",
    "unanswered",
    "unmatched_globs",
    "unregister_judge",
    "unregister_profile",
]

#: Every check, profile by profile, in the order reports list them.
CATALOGUE: tuple[Check, ...] = READER + DASHBOARD + RECORDER + ENVELOPE + WRAPPER + TRACE
BY_ID = {check.id: check for check in CATALOGUE}


def select(
    profiles: Sequence[str] = ("reader",),
    only: Iterable[str] = (),
    skip: Iterable[str] = (),
    catalogue: Sequence[Check] = CATALOGUE,
) -> list[Check]:
    """Checks of the given profiles, filtered by ``--only`` / ``--skip`` id globs."""
    only, skip = list(only), list(skip)
    chosen = [c for c in catalogue if c.profile in profiles]
    if only:
        chosen = [c for c in chosen if any(fnmatch.fnmatchcase(c.id, g) for g in only)]
    if skip:
        chosen = [c for c in chosen if not any(fnmatch.fnmatchcase(c.id, g) for g in skip)]
    return chosen


def unmatched_globs(globs: Iterable[str], catalogue: Sequence[Check] = CATALOGUE) -> list[str]:
    """Globs that name no check at all (a typo, reported as a usage error)."""
    return [g for g in globs if not any(fnmatch.fnmatchcase(c.id, g) for c in catalogue)]
