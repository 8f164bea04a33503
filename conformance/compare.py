"""Work on finished JSON reports: merge shards, and diff two runs for a pull request.

Both read only the report format (``stella-conform/report/1``), so reports from other
machines, other kit versions or other shards can be combined as files.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from stella_conform.conformance.checks import CATALOGUE
from stella_conform.conformance.report import OUTCOMES, REPORT_FORMAT
from stella_conform.errors import SetupError, read_json_file
from stella_conform.safe_text import clip
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
    """One report from shard reports of the same run."""
    if not docs:
        raise SetupError("nothing to merge")
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
    merged["summary"] = {o: sum(1 for c in merged["checks"] if c["outcome"] == o) for o in OUTCOMES}
    merged["known_failures_now_passing"] = sorted(
        {i for d in docs for i in d.get("known_failures_now_passing", [])}, key=_order
    )
    blocking = [
        c
        for c in merged["checks"]
        if c["outcome"] in ("fail", "crash", "error") and not c.get("known_failure")
    ]
    merged["exit_code"] = 1 if blocking else 0
    merged["merged_from"] = [d.get("shard", "?") for d in docs]
    return merged


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
            detail = str(e["message"]).replace("|", "\\|").replace("\n", " ")
            lines.append(f"| `{e['id']}` | {e['old']} | {e['new']} | {detail} |")
        lines.append("")
    return "\n".join(lines)
