"""Work on finished JSON reports: merge shards, and diff two runs for a pull request.

Both read only the report format (``stella-conform/report/1``), so reports from other
machines, other kit versions or other shards can be combined as files.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from stella_conform.conformance.checks import CATALOGUE
from stella_conform.conformance.report.model import OUTCOMES, REPORT_FORMAT
from stella_conform.errors import STOPPED, SetupError, exit_status, read_json_file
from stella_conform.safe_text import clip, markdown_code
from stella_conform.schemas.vocabulary import load_schema

BAD = ("fail", "crash", "error", "warn")
#: Keys that must agree for shards to be parts of one run.
SAME_RUN = (
    "kit", "corpus_version", "vocabulary", "seed", "examples", "fixtures_per_check", "client",
    "claims",
)  # fmt: skip


def load_report(path: Path) -> dict[str, Any]:
    doc = read_json_file(path, "report")
    if not isinstance(doc, dict) or doc.get("format") != REPORT_FORMAT:
        raise SetupError(f"{path} is not a stella-conform report ({REPORT_FORMAT})")
    check_shape(doc, "Report", path)
    return doc


@cache
def _validator(definition: str) -> Any:
    schema = dict(load_schema("report.schema.json"))
    schema.pop("oneOf")
    schema["$ref"] = f"#/$defs/{definition}"
    return jsonschema.validators.validator_for(schema)(schema)


def check_shape(doc: Any, definition: str, path: Path) -> None:
    """Refuse a report or matrix whose fields are not what the renderers read.

    A shard is a file anyone could have edited: an unknown outcome, a name that is not a
    string or a missing summary must be one clear line (exit 2), never a ``KeyError`` in
    the Markdown renderer or markup in the HTML page (``schemas/report.schema.json``).
    """
    error = jsonschema.exceptions.best_match(_validator(definition).iter_errors(doc))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise SetupError(f"malformed report {path}: at {where}: {clip(error.message, 200)}")


def _order(check_id: str) -> tuple[int, str]:
    ids = [c.id for c in CATALOGUE]
    return (ids.index(check_id), check_id) if check_id in ids else (len(ids), check_id)


def merge(docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One report from shard reports of the same run, or from fuzz workers' reports."""
    if not docs:
        raise SetupError("nothing to merge")
    if len(docs) > 1 and all(isinstance(d.get("fuzz"), dict) for d in docs):
        return merge_workers(docs)
    first = docs[0]
    for doc in docs[1:]:
        for key in SAME_RUN:
            if doc.get(key) != first.get(key):
                raise SetupError(f"reports are not shards of one run: '{key}' differs")
    checks: dict[str, dict[str, Any]] = {}
    for doc in docs:
        for check in doc["checks"]:
            if check["id"] in checks:
                raise SetupError(f"check {check['id']} appears in more than one shard")
            checks[check["id"]] = check
    merged = {k: v for k, v in first.items() if k not in ("checks", "shard")}
    merged["checks"] = [checks[i] for i in sorted(checks, key=_order)]
    _totals(merged, docs)
    merged["merged_from"] = [d.get("shard", "?") for d in docs]
    return merged


def _totals(merged: dict[str, Any], docs: Sequence[dict[str, Any]]) -> None:
    """The merged report's summary, known failures now passing, and exit status."""
    merged["summary"] = {o: sum(1 for c in merged["checks"] if c["outcome"] == o) for o in OUTCOMES}
    merged["known_failures_now_passing"] = sorted(
        {i for d in docs for i in d.get("known_failures_now_passing", [])}, key=_order
    )
    blocking = [
        c
        for c in merged["checks"]
        if c["outcome"] in ("fail", "crash", "error") and not c.get("known_failure")
    ]
    # a part that was stopped leaves the merged run incomplete, whichever part it was
    stops = [d for d in docs if isinstance(d.get("incomplete"), str)]
    merged.pop("incomplete", None)
    if stops:
        merged["incomplete"] = "; ".join(dict.fromkeys(d["incomplete"] for d in stops))
    codes = [d["exit_code"] for d in stops if d.get("exit_code", 0) >= STOPPED]
    errors = [d["error"] for d in docs if isinstance(d.get("error"), str)]
    merged.pop("error", None)
    if errors:  # a part whose client could not be graded at all: so is the merged run
        merged["error"] = errors[0]
    merged["exit_code"] = exit_status(
        error=bool(errors),
        stopped=(max(codes) if codes else STOPPED) if stops else None,
        failing=bool(blocking),
    )


#: Outcomes from the worst: a check two workers graded takes the worse of the two.
_WORST = ("crash", "error", "fail", "warn", "pass", "skip")
#: Counts in a worker's fuzz record that add up across workers.
_SUMMED = ("received", "adopted", "reused", "built_on", "sent")


def _count(doc: dict[str, Any], key: str, where: str) -> float:
    value = doc.get(key, 0)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SetupError(f"malformed fuzz report: {where}.{key} is not a number")
    return value


def _badness(outcome: str) -> int:
    """Lower is worse (an outcome a newer kit added counts as the worst)."""
    return _WORST.index(outcome) if outcome in _WORST else -1


def merge_workers(docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One report from the reports of ``fuzz`` workers (each its own seed) on one client.

    Each worker graded every selected check: a check's outcome is the worst any worker
    saw, its cases add up, its failures and failing cases are every worker's (each
    once).  The ``fuzz`` record adds cases up, keeps the first failure's time, and lists
    every worker.
    """
    first = docs[0]
    for doc in docs[1:]:
        for key in SAME_RUN:
            if key not in ("seed", "examples") and doc.get(key) != first.get(key):
                raise SetupError(f"reports are not workers of one fuzz session: '{key}' differs")
    checks: dict[str, dict[str, Any]] = {}
    for doc in docs:
        for check in doc["checks"]:
            mine = checks.get(check["id"])
            if mine is None:
                checks[check["id"]] = {**check, "failures": list(check.get("failures", []))}
                continue
            mine["cases"] += check["cases"]
            if _badness(check["outcome"]) < _badness(mine["outcome"]):
                mine["outcome"], mine["message"] = check["outcome"], check["message"]
            known = {json.dumps(f, sort_keys=True) for f in mine["failures"]}
            # each worker's failing cases are its own, but one both list (found by one,
            # run by the other from the shared database) is one case
            failed = _count(check, "failed_cases", f"checks.{check['id']}")
            for failure in check.get("failures", []):
                if json.dumps(failure, sort_keys=True) not in known:
                    mine["failures"].append(failure)
                else:
                    failed -= 1
            mine["failed_cases"] = max(
                _count(mine, "failed_cases", "checks") + max(0, failed), len(mine["failures"])
            )
    merged = {k: v for k, v in first.items() if k not in ("checks", "shard", "fuzz")}
    merged["checks"] = [checks[i] for i in sorted(checks, key=_order)]
    _totals(merged, docs)
    merged["seeds"] = [d.get("seed") for d in docs]
    merged["merged_from"] = [f"worker seed {d.get('seed')}" for d in docs]
    merged["fuzz"] = _merge_fuzz(docs)
    return merged


def _merge_fuzz(docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    fuzzes = [d["fuzz"] for d in docs]
    failures = []
    for doc, fuzz in zip(docs, fuzzes, strict=True):
        for found in fuzz.get("failures") or []:
            if isinstance(found, dict):
                _count(found, "seconds", "fuzz.failures")
                failures.append({**found, "worker_seed": doc.get("seed")})
    failures.sort(key=lambda f: f.get("seconds") or 0)
    per_check: dict[str, dict[str, float]] = {}
    for fuzz in fuzzes:
        for check_id, record in (fuzz.get("checks") or {}).items():
            mine = per_check.setdefault(check_id, {})
            for key in ("cases", "new_behaviour", "failures"):
                mine[key] = mine.get(key, 0) + _count(record, key, f"fuzz.checks.{check_id}")
            mine["corpus"] = max(mine.get("corpus", 0), _count(record, "corpus", "fuzz.checks"))
    seconds = max(_count(f, "seconds", "fuzz") for f in fuzzes)
    cases = sum(_count(f, "cases", "fuzz") for f in fuzzes)
    shared = [f["shared"] for f in fuzzes if isinstance(f.get("shared"), dict)]
    out: dict[str, Any] = {
        "workers": len(fuzzes),
        "seconds": seconds,
        "cases": cases,
        "cases_per_second": round(sum(_count(f, "cases_per_second", "fuzz") for f in fuzzes), 1),
        "coverage_features": max(_count(f, "coverage_features", "fuzz") for f in fuzzes),
        "feedback": fuzzes[0].get("feedback"),
        "stopped": sorted({str(f.get("stopped")) for f in fuzzes}),
        "time_to_first_failure": failures[0]["seconds"] if failures else None,
        "failures": failures,
        "checks": per_check,
        "shared": None,
    }
    if shared:
        out["shared"] = {
            "database": sorted({str(s.get("database")) for s in shared}),
            **{k: sum(_count(s, k, "fuzz.shared") for s in shared) for k in _SUMMED},
            "lost": [s.get("lost") for s in shared if s.get("lost")],
            "not_shared": [s.get("not_shared") for s in shared if s.get("not_shared")],
        }
    return out


def diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """What newly fails, what newly passes, and every other change of outcome."""
    before = {c["id"]: c for c in old["checks"]}
    after = {c["id"]: c for c in new["checks"]}
    out: dict[str, list[dict[str, Any]]] = {"newly_failing": [], "newly_passing": [], "changed": []}
    for check_id in sorted(set(before) | set(after), key=_order):
        was = before.get(check_id, {}).get("outcome", "absent")
        now = after.get(check_id, {}).get("outcome", "absent")
        if was == now:
            continue
        entry = {
            "id": check_id,
            "old": was,
            "new": now,
            "message": after.get(check_id, {}).get("message", ""),
        }
        if now in BAD and was not in BAD:
            out["newly_failing"].append(entry)
        elif was in BAD and now == "pass":
            out["newly_passing"].append(entry)
        else:
            out["changed"].append(entry)
    return out


def diff_markdown(result: dict[str, list[dict[str, Any]]]) -> str:
    lines = ["## stella-conform: changes against the base report", ""]
    titles = {
        "newly_failing": "❌ Newly failing",
        "newly_passing": "✅ Newly passing",
        "changed": "Changed outcome",
    }
    if not any(result.values()):
        return "\n".join([*lines, "No check changed outcome."]) + "\n"
    for key, title in titles.items():
        if not result[key]:
            continue
        lines += [
            f"### {title}",
            "",
            "| check | was | now | details |",
            "| --- | --- | --- | --- |",
        ]
        for e in result[key]:
            cells = [markdown_code(str(e[k]), 2000 if k == "message" else 200)
                     for k in ("id", "old", "new", "message")]  # fmt: skip
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)
