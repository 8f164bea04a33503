"""The report as JUnit XML: a test case per check, for a CI system's test view.

A ``crash`` is a failure of the client (type ``crash``), an ``error`` the kit's (a JUnit
error); a client that could not be graded at all is one error case, ``first-contact``.
Text from outside is made safe (:func:`~stella_conform.safe_text.xml_safe`: no character
XML forbids, none that acts on a terminal, no workflow command) and clipped before it goes
into an attribute or a body.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from stella_conform.conformance.report.failures import failure_lines, more_failures, stderr_tail
from stella_conform.conformance.report.files import ReportFile
from stella_conform.conformance.report.model import FAILING
from stella_conform.conformance.suite import CheckResult
from stella_conform.safe_text import clip, no_surrogates, xml_safe

if TYPE_CHECKING:
    from stella_conform.conformance.report.model import Report


def _testcase(suite: ET.Element, r: CheckResult) -> None:
    case = ET.SubElement(
        suite,
        "testcase",
        classname=xml_safe(f"stella_conform.{r.rule}"),
        name=xml_safe(r.id),
        time=f"{r.seconds:.3f}",
    )
    if r.readings:
        props = ET.SubElement(case, "properties")
        for label, count in sorted(r.readings.items()):
            prop = {"name": xml_safe(f"reading:{label}"), "value": str(count)}
            ET.SubElement(props, "property", prop)
    shown = [*(line for f in r.failures[:1] for line in failure_lines(f))]
    body = xml_safe("\n".join([*shown, *more_failures(r)]))
    message = xml_safe(clip(no_surrogates(r.message)))
    if r.outcome in ("fail", "crash", "warn"):
        kind = "crash" if r.outcome == "crash" else r.tier  # the client's own failure
        el = ET.SubElement(
            case, "failure", message=message, type="known-failure" if r.known_failure else kind
        )
        el.text = body
    elif r.outcome == "error":
        el = ET.SubElement(case, "error", message=message)
        el.text = body
    elif r.outcome == "skip":
        ET.SubElement(case, "skipped", message=message)
    tails = [stderr_tail(f) for f in r.failures[:3]]
    if r.outcome in FAILING and any(tails):
        err = ET.SubElement(case, "system-err")
        err.text = xml_safe(
            "\n".join(
                f"--- client stderr, case {f.case}:\n{t}"
                for f, t in zip(r.failures[:3], tails, strict=True)
                if t
            )
        )


def junit_xml(report: Report) -> str:
    """The JUnit XML document: one ``testsuite``, a ``testcase`` per check."""
    counts = report.counts()
    suite = ET.Element(
        "testsuite",
        name="stella-conform",
        tests=str(len(report.results)),
        failures=str(counts["fail"] + counts["crash"] + counts["warn"]),
        errors=str(counts["error"]),
        skipped=str(counts["skip"]),
        timestamp=report.date,
    )
    claims = report.claim_lines()
    if claims:
        props = ET.SubElement(suite, "properties")
        for index, line in enumerate(claims, 1):
            ET.SubElement(props, "property", name=f"claim.{index}", value=xml_safe(line))
    for r in report.results:
        _testcase(suite, r)
    if report.incomplete:
        properties = ET.Element("properties")
        ET.SubElement(properties, "property", name="incomplete", value=xml_safe(report.incomplete))
        suite.insert(0, properties)
    if report.error is not None:  # one error a CI test view shows, with the kit's words
        suite.set("tests", str(len(report.results) + 1))
        suite.set("errors", str(counts["error"] + 1))
        case = ET.SubElement(
            suite, "testcase", classname="stella_conform.setup", name="first-contact"
        )
        el = ET.SubElement(case, "error", message=xml_safe(clip(no_surrogates(report.error))))
        el.text = xml_safe(no_surrogates(report.error))
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


class JUnitFile(ReportFile):
    """``--junit-xml PATH``: the report as JUnit XML."""

    def render(self, report: Report) -> str:
        return junit_xml(report)
