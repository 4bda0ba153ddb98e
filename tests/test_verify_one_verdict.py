"""One verdict: ``watchdog verify`` and the report graph's evaluate node judge the same draft the same way, on
every labelled corpus case (tests/verify_corpus/cases.yaml) and every real model-mode draft (real.yaml)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.test_verify_corpus import CORPUS, findings, raw_cases, report_of
from tests.test_verify_real import drafts, path_of
from watchdog.cli.app import cli
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
