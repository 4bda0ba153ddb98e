"""Report truthfulness: ``verify_fn`` on the labelled corpus (tests/verify_corpus/cases.yaml) and on the
real drafts of small local models (tests/verify_corpus/real.yaml, raw outputs in real/).

Loads the cases as tests/test_verify_corpus.py does (``report``, ``"@template"`` rendered from the
findings, or ``base`` + ``replace``), then measures: false alarms on correct reports (target 0), the
share of wrong reports flagged at all, the share flagged for every expected item, and milliseconds per
report (after a warm-up pass; the median of several timed passes over the whole corpus).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import yaml

from bench.common import ROOT

CORPUS = ROOT / "tests" / "verify_corpus"


def load_cases(corpus: Path = CORPUS) -> tuple[list[dict[str, Any]], list[str]]:
    """(cases with their report text and findings, ids skipped because a template edit no longer applies)."""
    from watchdog.findings import FindingsDoc
    from watchdog.report import render_markdown

    raw = yaml.safe_load((corpus / "cases.yaml").read_text(encoding="utf-8"))["cases"]
    by_id = {c["id"]: c for c in raw}
    docs: dict[str, Any] = {}

    def doc(name: str) -> Any:
        if name not in docs:
            docs[name] = FindingsDoc.load(corpus / name)
        return docs[name]

    def text_of(case: dict[str, Any]) -> str:
        if "base" in case:
            text = text_of(by_id[case["base"]])
        elif case["report"] == "@template":
            text = render_markdown(doc(case["findings"]))
        else:
            text = case["report"]
        for old, new in case.get("replace", []):
            if old not in text:
                raise LookupError(f"{case['id']}: {old!r} is not in the base report")
            text = text.replace(old, new)
        return text

    cases, skipped = [], []
    for case in raw:
        try:
            cases.append({**case, "text": text_of(case), "doc": doc(case["findings"])})
        except LookupError:
            skipped.append(case["id"])
    return cases, skipped


def _expected_items_found(case: dict[str, Any], bad: list[Any]) -> bool:
    unmatched = list(bad)
    for want in case["expect"]:
        hit = next((b for b in unmatched if b.finding == want["finding"] and str(want["actual"]) in b.actual), None)
        if hit is None:
            return False
        unmatched.remove(hit)
    return True


def load_real(corpus: Path = CORPUS) -> list[dict[str, Any]]:
    """The real drafts with their raw text and findings, in the shape of :func:`load_cases`."""
    from watchdog.findings import FindingsDoc

    path = corpus / "real.yaml"
    if not path.is_file():
        return []
    from watchdog.graph.compose import assemble, parse_prose

    docs: dict[str, Any] = {}
    out = []
    for d in yaml.safe_load(path.read_text(encoding="utf-8"))["drafts"]:
        if d["findings"] not in docs:
            docs[d["findings"]] = FindingsDoc.load(corpus / d["findings"])
        if d.get("table") == "program":  # JSON prose: verify reads the report the graph assembles from it
            if d["expect"] == "unparsed":
                continue
            prose, _ = parse_prose((corpus / "real" / f"{d['id']}.json").read_text(encoding="utf-8"))
            assert prose is not None, d["id"]
            text = assemble(docs[d["findings"]], prose)
        else:
            text = (corpus / "real" / f"{d['id']}.md").read_text(encoding="utf-8")
        out.append({**d, "text": text, "doc": docs[d["findings"]]})
    return out


def run_real_bench(passes: int = 5) -> dict[str, Any]:
    """Real drafts: false alarms (bad items no label expects), labelled items detected, ms per draft."""
    from watchdog.verify import verify_fn

    drafts = load_real()
    expected = detected = false_alarms = 0
    clean = [d for d in drafts if d["expect"] == "pass"]
    for d in drafts:
        unmatched = list(verify_fn(d["text"], d["doc"]).bad)
        for want in ([] if d["expect"] == "pass" else d["expect"]):
            expected += 1
            hit = next((b for b in unmatched if b.finding == want["finding"] and str(want["actual"]) in b.actual),
                       None)
            if hit is not None:
                detected += 1
                unmatched.remove(hit)
        false_alarms += len(unmatched)
    per_ms = []
    for _ in range(passes):
        start = time.perf_counter()
        for d in drafts:
            verify_fn(d["text"], d["doc"])
        per_ms.append((time.perf_counter() - start) / max(len(drafts), 1) * 1000)
    return {"drafts": len(drafts), "models": sorted({d["model"] for d in drafts}), "correct_drafts": len(clean),
            "labelled_items": expected, "detected": detected, "false_alarms": false_alarms,
            "cut_off_drafts": sum(1 for d in drafts if d["finish_reason"] == "length"),
            "ms_per_draft": {"median": round(statistics.median(per_ms), 2) if per_ms else None}}


def run_verify_bench(passes: int = 5) -> dict[str, Any]:
    from watchdog.verify import verify_fn

    cases, skipped = load_cases()
    correct = [c for c in cases if c["expect"] == "pass"]
    wrong = [c for c in cases if c["expect"] != "pass"]
    false_alarms, missed, partly = [], [], []
    for case in cases:  # also the warm-up pass (regex compilation)
        result = verify_fn(case["text"], case["doc"])
        if case["expect"] == "pass":
            if not result.passed:
                false_alarms.append({"id": case["id"], "bad": [b.message for b in result.bad][:3]})
        elif result.passed:
            missed.append(case["id"])
        elif not _expected_items_found(case, result.bad):
            partly.append(case["id"])
    per_report_ms = []
    for _ in range(passes):
        start = time.perf_counter()
        for case in cases:
            verify_fn(case["text"], case["doc"])
        per_report_ms.append((time.perf_counter() - start) / len(cases) * 1000)
    singles = []
    for case in cases:  # each report's best of three, so one GC pause does not name the slowest
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            verify_fn(case["text"], case["doc"])
            best = min(best, time.perf_counter() - start)
        singles.append((best * 1000, case["id"], len(case["text"])))
    slowest = max(singles)
    flagged = len(wrong) - len(missed)
    return {
        "cases": len(cases), "correct": len(correct), "wrong": len(wrong), "skipped": skipped,
        "findings_files": sorted({c["findings"] for c in cases}),
        "false_alarms": len(false_alarms), "false_alarm_cases": false_alarms,
        "wrong_flagged": flagged, "wrong_flagged_share": round(flagged / len(wrong), 4) if wrong else None,
        "missed_cases": missed,
        "wrong_flagged_for_expected_items": flagged - len(partly), "flagged_other_items_only": partly,
        "ms_per_report": {"median": round(statistics.median(per_report_ms), 2), "min": round(min(per_report_ms), 2),
                          "max": round(max(per_report_ms), 2), "passes": passes},
        "slowest_report": {"id": slowest[1], "ms": round(slowest[0], 2), "chars": slowest[2]},
        "real": run_real_bench(passes),
    }
