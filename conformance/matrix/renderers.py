"""The matrix document rendered for people: Markdown and a self-contained HTML page.

Every string of the document came from a config, a client or a shard anyone may have
edited: in Markdown it is code (:func:`~stella_conform.safe_text.markdown_name`,
:func:`~stella_conform.safe_text.markdown_code`), in HTML text
(:func:`~stella_conform.safe_text.html_text`).
"""

from __future__ import annotations

from typing import Any

from stella_conform.conformance.matrix.counts import CellCounts, cell_status
from stella_conform.conformance.report.failures import alike
from stella_conform.conformance.report.markdown import OUTCOME_ICONS
from stella_conform.conformance.report.model import FAILING, OUTCOMES
from stella_conform.errors import PASSED, SETUP_ERROR
from stella_conform.safe_text import clip, html_text, markdown_code, markdown_name

ICONS = OUTCOME_ICONS


Cells = dict[tuple[str, str], dict[str, Any]]


def _cells(doc: dict[str, Any]) -> Cells:
    """The document's cells by (client, vocabulary), made once per rendering: a renderer
    looks up every cell, and a search per look-up would make a large page quadratic."""
    return {(c["client"], c["vocabulary"]): c for c in doc["cells"]}


def cell_text(report: dict[str, Any], *, icons: bool = True) -> str:
    """``✅ 28 graded · 0 failed · 1 skipped``: one cell of the overview, the same three
    numbers in every cell (:class:`~.counts.CellCounts`), so that cells compare.

    The HTML page leaves the icons out (its cells are coloured, and a machine without an
    emoji font would show empty boxes).
    """
    if isinstance(report.get("error"), str):
        return f"{ICONS['error']} not graded" if icons else "not graded"
    text = CellCounts.of_report(report).text()
    return f"{ICONS[_overview_status(report)]} {text}" if icons else text


def _header(doc: dict[str, Any]) -> str:
    kit = doc["kit"]
    sample = doc.get("fixtures_per_check")
    fixtures = f"the first {sample} fixture(s) of each check, " if sample is not None else ""
    return (
        f"stella-conform {kit['version']}, corpus {doc['corpus_version']}, seed {doc['seed']}, "
        f"{doc['examples']} example(s) per check, {fixtures}{doc['date']}"
    )


def _check_rows(
    doc: dict[str, Any], cells: Cells, vocab: str
) -> list[tuple[str, dict[str, dict[str, Any]]]]:
    """(check id, client name -> that client's check result) in catalogue order."""
    order: list[str] = []
    per: dict[str, dict[str, dict[str, Any]]] = {}
    for client in doc["clients"]:
        for check in cells[(client["name"], vocab)]["report"]["checks"]:
            if check["id"] not in per:
                order.append(check["id"])
                per[check["id"]] = {}
            per[check["id"]][client["name"]] = check
    return [(i, per[i]) for i in order]


def _outcome(check: dict[str, Any]) -> str:
    """A check's outcome as a known word (a tampered document cannot add CSS classes)."""
    outcome = check.get("outcome")
    return outcome if outcome in OUTCOMES else "error"


def _outcome_text(check: dict[str, Any]) -> str:
    return _outcome(check) + (" (known)" if check.get("known_failure") else "")


def _overview_status(report: dict[str, Any]) -> str:
    """``pass``, ``fail`` (or ``crash``: the client's failures), or ``error`` when nothing
    fails but something could not be graded."""
    if report["exit_code"] == 0:
        return "pass"
    status = cell_status((_outcome(c), bool(c.get("known_failure"))) for c in report["checks"])
    return "error" if status == "pass" else status  # stopped, or not graded


#: What each outcome means, for the legends of both renderings.
LEGEND = (
    ("pass", "the client reads every case of the check right"),
    ("fail", "the client breaks the rule: the message says how, the replay command re-runs "
     "the smallest case that shows it"),
    ("crash", "the client died on a case of the rule (an uncaught exception, a panic, a "
     "signal): its own failure, with its stderr"),
    ("error", "the rule could not be judged: the client timed out or broke the adapter "
     "protocol, or the kit ran out of time (its stderr is shown)"),
    ("warn", "the client breaks a SHOULD rule"),
    ("skip", "not graded in this client's mode or profiles"),
)  # fmt: skip


#: What a cell's three numbers count, under the overview of both renderings.
COUNTS_LEGEND = (
    "Each cell counts the checks of the client's profiles: graded (judged), failed (of "
    "those, failed, crashed or not judged; known failures included, and said), skipped "
    "(not graded in the client's mode or claims). Cells compare when they graded alike."
)


def column_source(vocab: dict[str, Any]) -> str:
    """Where a column comes from, in words: ``wire schema agentevent.schema.json``,
    ``bundled stella-older, 2 recording(s) from recordings/stella-0.9``."""
    schema, bundled = vocab.get("wire_schema"), vocab.get("bundled")
    named = vocab.get("seed_corpus")
    if isinstance(schema, str):
        said = [f"wire schema {schema.replace(chr(92), '/').rsplit('/', 1)[-1]}"]
    elif isinstance(bundled, str):
        said = [f"bundled {bundled}"]
    else:
        said = ["the kit's vocabulary"]
    if isinstance(named, list) and named:
        read = vocab.get("recordings")
        count = f"{read} recording(s)" if isinstance(read, int) else "recordings"
        said.append(f"{count} from {', '.join(str(p) for p in named)}")
    return ", ".join(said)


def _failures(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(client, vocabulary, check) of every check that did not pass, in table order."""
    return [
        (cell["client"], cell["vocabulary"], check)
        for cell in doc["cells"]
        for check in cell["report"]["checks"]
        if _outcome(check) in FAILING
    ]


def _first_failure(check: dict[str, Any]) -> dict[str, Any]:
    failures = check.get("failures") or []
    return failures[0] if failures and isinstance(failures[0], dict) else {}


def _stderr_of(failure: dict[str, Any]) -> str:
    observed = failure.get("observed")
    tail = observed.get("stderr_tail") if isinstance(observed, dict) else None
    return tail.strip("\n") if isinstance(tail, str) and tail.strip() else ""


def _claim_lines(claims: Any) -> list[str]:
    """A cell report's claims in words: what was claimed, what that left ungraded."""
    if not isinstance(claims, dict):
        return []
    out = []
    for key in ("knows", "reads", "computes"):
        if isinstance(claims.get(key), list):
            out.append(f"{key}: {', '.join(str(v) for v in claims[key])}")
    if claims.get("summary_only") is True:
        out.append("summary only")
    out += [f"not graded: {n}" for n in claims.get("not_graded") or [] if isinstance(n, str)]
    return out


def to_markdown(doc: dict[str, Any]) -> str:
    cells = _cells(doc)
    clients = [c["name"] for c in doc["clients"]]
    vocabs = [v["name"] for v in doc["vocabularies"]]
    out = ["## stella-conform compatibility matrix", "", markdown_code(_header(doc), 2000), ""]
    # names come from a config or a shard: escaped, so no markup, link or mention survives
    out.append("| client | mode | " + " | ".join(markdown_name(v) for v in vocabs) + " |")
    out.append("| --- | --- | " + " | ".join("---" for _ in vocabs) + " |")
    for client in doc["clients"]:
        row = [cell_text(cells[(client["name"], v)]["report"]) for v in vocabs]
        name, mode = markdown_name(client["name"]), markdown_code(client["mode"])
        out.append(f"| {name} | {mode} | " + " | ".join(row) + " |")
    out += ["", COUNTS_LEGEND, ""]
    out += [" · ".join(f"{ICONS[o]} {o}: {meaning}" for o, meaning in LEGEND)]
    out.append("(known): listed in the client's known-failures file; it does not fail the matrix.")
    claimed = [
        (cell["client"], cell["vocabulary"], line)
        for cell in doc["cells"]
        for line in _claim_lines(cell["report"].get("claims"))
    ]
    if claimed:  # a release gate shows what the clients' claims left ungraded
        out += ["", "### claims", ""]
        out += [
            f"- {markdown_name(c)} × {markdown_name(v)}: {markdown_code(line, 2000)}"
            for c, v, line in claimed
        ]
    for vocab in doc["vocabularies"]:
        title = (
            f"{markdown_name(vocab['name'])} ({markdown_code(vocab['ident'])}; "
            f"{markdown_code(column_source(vocab), 2000)})"
        )
        out += ["", f"### checks, vocabulary {title}", ""]
        out.append("| check | " + " | ".join(markdown_name(c) for c in clients) + " |")
        out.append("| --- | " + " | ".join("---" for _ in clients) + " |")
        for check_id, by_client in _check_rows(doc, cells, vocab["name"]):
            marks = []
            for name in clients:
                check = by_client.get(name)
                marks.append(f"{ICONS[_outcome(check)]} {_outcome_text(check)}" if check else "—")
            out.append(f"| {markdown_code(check_id)} | " + " | ".join(marks) + " |")
    unstarted = _not_graded(doc)
    if unstarted:
        out += ["", "### not graded", ""]
        out += [
            f"- {ICONS['error']} {markdown_name(c)} × {markdown_name(v)}: "
            + markdown_code(why, 2000)
            for c, v, why in unstarted
        ]
    failing = _failures(doc)
    if failing:
        out += ["", "### failures, crashes and errors", ""]
        for client, vocab, check in failing:
            failure = _first_failure(check)
            line = (
                f"- {ICONS[_outcome(check)]} {markdown_name(client)} × {markdown_name(vocab)}, "
                f"{markdown_code(str(check.get('id')))}: {markdown_code(str(check.get('message')))}"
                + alike(failure)
            )
            if isinstance(failure.get("replay"), str):
                line += f"<br>replay: {markdown_code(failure['replay'], 1000)}"
            out.append(line)
    out += ["", f"**{_verdict(doc)}**"]
    return "\n".join(out) + "\n"


_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
.pass { background: #e6f6e6; }
.fail { background: #fbe3e3; }
.crash { background: #fbe3e3; outline: 2px solid #a11; outline-offset: -3px; }
.error { background: #e9e3f8; outline: 2px dashed #7a5cc4; outline-offset: -3px; }
.warn { background: #fff5d6; }
.skip { color: #888; }
.outcome { font-weight: 600; }
.fail .outcome, .crash .outcome { color: #a11; }
.error .outcome { color: #4b2a9e; }
td details { max-width: 40em; margin-top: 2px; }
td summary { cursor: pointer; }
td pre { white-space: pre-wrap; margin: 4px 0; font-size: 85%; }
#legend { list-style: none; padding: 0; }
#legend li { margin: 2px 0; }
.swatch { display: inline-block; min-width: 4em; padding: 0 6px; margin-right: 6px; }
code { font-size: 90%; }
"""

#: Characters of a message, and lines of stderr, shown in an HTML cell (the JSON has all).
HTML_MESSAGE = 600
HTML_STDERR_LINES = 12


def _html_check_cell(check: dict[str, Any] | None) -> str:
    """One check of one client: the outcome, and for a failure why and how to replay it."""
    esc = html_text
    if check is None:
        return '<td class="skip">—</td>'
    outcome = _outcome(check)
    head = f'<span class="outcome">{esc(_outcome_text(check))}</span>'
    if outcome not in FAILING:
        return f'<td class="{esc(outcome)}">{head}</td>'
    failure = _first_failure(check)
    message = clip(str(check.get("message") or ""), HTML_MESSAGE)
    body = [f'<details><summary class="message">{esc(message + alike(failure))}</summary>']
    if isinstance(failure.get("replay"), str):
        replay = clip(failure["replay"], 2000)
        body.append(f'<p class="replay">replay: <code>{esc(replay)}</code></p>')
    tail = _stderr_of(failure)
    if tail:
        shown = "\n".join(tail.splitlines()[-HTML_STDERR_LINES:])
        body.append(f'<pre class="stderr">{esc(shown)}</pre>')
    body.append("</details>")
    return f'<td class="{esc(outcome)}">{head}{"".join(body)}</td>'


def to_html(doc: dict[str, Any]) -> str:
    """A self-contained page: inline style, no script, nothing fetched."""
    esc = html_text
    cells = _cells(doc)
    clients = [c["name"] for c in doc["clients"]]
    vocabs = [v["name"] for v in doc["vocabularies"]]
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>stella-conform compatibility matrix</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>stella-conform compatibility matrix</h1>",
        f'<p id="provenance">{esc(_header(doc))}</p>',
        '<table id="matrix"><thead><tr><th>client</th><th>mode</th>',
    ]
    parts += [
        f'<th title="{esc(column_source(v))}">{esc(v["name"])}</th>' for v in doc["vocabularies"]
    ]
    parts.append("</tr></thead><tbody>")
    for client in doc["clients"]:
        parts.append(f"<tr><th>{esc(client['name'])}</th><td>{esc(client['mode'])}</td>")
        for vocab in vocabs:
            report = cells[(client["name"], vocab)]["report"]
            status = _overview_status(report)
            n = CellCounts.of_report(report)
            numbers = (
                f'data-graded="{n.graded}" data-failed="{n.failed}" data-skipped="{n.skipped}"'
            )
            text = esc(cell_text(report, icons=False))
            parts.append(f'<td class="{esc(status)}" {numbers}>{text}</td>')
        parts.append("</tr>")
    parts.append("</tbody></table>")
    parts.append(f'<p id="cell-counts">{esc(COUNTS_LEGEND)}</p>')
    parts.append('<ul id="legend">')
    for outcome, meaning in LEGEND:
        parts.append(f'<li><span class="swatch {outcome}">{outcome}</span>{esc(meaning)}</li>')
    parts.append(
        '<li><span class="swatch">(known)</span>listed in the client\'s known-failures file; '
        "it does not fail the matrix</li></ul>"
    )
    for vocab in doc["vocabularies"]:
        source = f"{esc(vocab['ident'])}; {esc(column_source(vocab))}"
        parts.append(f"<h2>checks, vocabulary {esc(vocab['name'])} ({source})</h2>")
        parts.append(f'<table class="checks" data-vocabulary="{esc(vocab["name"])}"><thead><tr>')
        parts.append("<th>check</th>" + "".join(f"<th>{esc(c)}</th>" for c in clients))
        parts.append("</tr></thead><tbody>")
        for check_id, by_client in _check_rows(doc, cells, vocab["name"]):
            parts.append(f"<tr><th><code>{esc(check_id)}</code></th>")
            parts += [_html_check_cell(by_client.get(name)) for name in clients]
            parts.append("</tr>")
        parts.append("</tbody></table>")
    unstarted = _not_graded(doc)
    if unstarted:
        parts.append('<h2>not graded</h2><ul id="not-graded">')
        parts += [
            f'<li class="error">{esc(c)} × {esc(v)}: <pre>{esc(why)}</pre></li>'
            for c, v, why in unstarted
        ]
        parts.append("</ul>")
    parts.append(f'<p id="verdict"><strong>{esc(_verdict(doc))}</strong></p></body></html>')
    return "\n".join(parts) + "\n"


def _not_graded(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(client, vocabulary, why) of each cell whose client could not be graded."""
    return [
        (cell["client"], cell["vocabulary"], cell["report"]["error"])
        for cell in doc["cells"]
        if isinstance(cell["report"].get("error"), str)
    ]


def _verdict(doc: dict[str, Any]) -> str:
    """The matrix in a phrase, by its exit status."""
    if doc["exit_code"] == PASSED:
        return "all clients pass"
    return "a client could not be graded" if doc["exit_code"] == SETUP_ERROR else "a client fails"


def summary_counts(doc: dict[str, Any]) -> dict[str, int]:
    counts = dict.fromkeys(OUTCOMES, 0)
    for cell in doc["cells"]:
        for outcome, n in cell["report"]["summary"].items():
            counts[outcome] += n
    return counts
