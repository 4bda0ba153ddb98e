"""One verdict: ``watchdog verify`` and the report graph's evaluate node judge the same draft the same way, on
every labelled corpus case (tests/verify_corpus/cases.yaml), every real model-mode draft (real.yaml), and every
program-mode answer (real.yaml and the recorded real-model runs), assembled as the graph assembles it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.test_verify_corpus import CORPUS, findings, raw_cases, report_of
from tests.test_verify_real import drafts, path_of
from watchdog.cli.app import cli
from watchdog.findings import FindingsDoc
from watchdog.graph.compose import assemble, parse_prose
from watchdog.graph.models import placeholder_models
from watchdog.graph.nodes import GraphDeps
from watchdog.graph.review import evaluate
from watchdog.settings import LLMConfig
from watchdog.verify import verify_fn

DEPS = GraphDeps(models=placeholder_models(), verify_fn=verify_fn, config=LLMConfig(review="off", table="model"),
                 tools=[])


def all_cases() -> list[tuple[str, str, str]]:
    """(id, report text, findings file) for every Markdown draft of both corpora."""
    out = [(c["id"], report_of(c), c["findings"]) for c in raw_cases()]
    out += [(d["id"], path_of(d).read_text(encoding="utf-8"), d["findings"]) for d in drafts()
            if d.get("table", "model") == "model"]
    return out


def graph_verdict(text: str, findings_name: str) -> dict[str, Any]:
    state = {"findings": findings(findings_name).to_json_dict(), "draft": text, "draft_finish": "stop",
             "fix_round": 0, "replans": 0}
    return evaluate(state, DEPS)["verification"]


@pytest.mark.parametrize("case", all_cases(), ids=lambda c: c[0])
def test_the_graph_and_watchdog_verify_agree(case: tuple[str, str, str], tmp_path: Path) -> None:
    case_id, text, findings_name = case
    report = tmp_path / "report.md"
    report.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["verify", "--report", str(report), "--findings",
                                      str(CORPUS / findings_name), "--json"])
    assert result.exit_code in (0, 1), result.output
    cli_verdict = json.loads(result.output)
    graph = graph_verdict(text, findings_name)
    assert graph["passed"] == cli_verdict["passed"] == (result.exit_code == 0), case_id
    assert [b["message"] for b in graph["bad"]] == [b["message"] for b in cli_verdict["bad"]], case_id


# ---- program mode: the model's JSON answer, assembled by the program -------------------------------------------

FIXTURES = Path(__file__).parent / "fixtures" / "llm_real"


def program_cases() -> list[tuple[str, str, dict[str, Any]]]:
    """(id, raw JSON answer, findings) for every program-mode answer that is a whole draft: the program-mode drafts
    of the real corpus and the first answers of the recorded real-model runs (tests/fixtures/llm_real)."""
    out = [(d["id"], path_of(d).read_text(encoding="utf-8"), findings(d["findings"]).to_json_dict())
           for d in drafts() if d.get("table") == "program" and d["expect"] != "unparsed"]
    for path in sorted(FIXTURES.glob("*.json")):
        rec = json.loads(path.read_text(encoding="utf-8"))
        if rec.get("mode") == "program" and rec.get("calls"):
            out.append((path.stem, rec["calls"][0]["answer"], rec["findings"]))
    return [c for c in out if parse_prose(c[1])[0] is not None]  # a cut answer assembles nothing


@pytest.mark.parametrize("case", program_cases(), ids=lambda c: c[0])
def test_program_mode_the_graph_and_watchdog_verify_agree(case: tuple[str, str, dict[str, Any]],
                                                          tmp_path: Path) -> None:
    """The graph judges the prose it parsed; ``watchdog verify`` the report the program assembled from it. Both
    give the same bad items and verdict, except what only the JSON answer shows: a problem check with no causes or
    fixes entry at all (a Markdown report has no slot that must be filled), which the graph adds on top."""
    case_id, raw, doc = case
    prose, problem = parse_prose(raw)
    assert prose is not None, problem
    report = tmp_path / "report.md"
    report.write_text(assemble(FindingsDoc.validate(doc), prose), encoding="utf-8")
    (tmp_path / "findings.json").write_text(json.dumps(doc), encoding="utf-8")
    result = CliRunner().invoke(cli, ["verify", "--report", str(report), "--findings", str(tmp_path / "findings.json"),
                                      "--json"])
    assert result.exit_code in (0, 1), result.output
    cli_verdict = json.loads(result.output)
    for causes in ("write", "choose"):
        deps = GraphDeps(models=placeholder_models(), verify_fn=verify_fn,
                         config=LLMConfig(review="off", table="program", causes=causes), tools=[])
        state = {"findings": doc, "draft": report.read_text(encoding="utf-8"), "draft_finish": "stop",
                 "prose": prose.model_dump(), "fix_round": 0, "replans": 0}
        graph = evaluate(state, deps)["verification"]  # type: ignore[arg-type]
        verify_items = [b["message"] for b in graph["bad"] if "part" not in b]
        assert verify_items == [b["message"] for b in cli_verdict["bad"]], case_id
        only_json = [b["message"] for b in graph["bad"] if "part" in b]
        assert all(m.endswith(("has no likely causes.", "has no suggested fixes.", "The summary is missing."))
                   or "of its own" in m or "restate" in m or "repeat the check's rule" in m or "not sentences" in m
                   or "not among the checks" in m for m in only_json), (case_id, only_json)
        assert graph["passed"] == (cli_verdict["passed"] and not only_json), case_id
