"""One unwrapping core (watchdog.verify.unwrap) for verify_fn and the graph (graph/compose.unwrap), over the real
drafts of small models (tests/verify_corpus/real, tests/fixtures/llm_real): reasoning blocks, echoed
<report>/<answer>/<json> tags, and a fence around the whole answer with what it must contain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from watchdog.graph import compose
from watchdog.verify import verify_fn
from watchdog.verify.unwrap import has_object, unwrap, unwrap_json, unwrap_report

HERE = Path(__file__).parent
REAL = sorted((HERE / "verify_corpus" / "real").glob("*.md"))
PROGRAM = json.loads((HERE / "fixtures" / "llm_real" / "qwen0.5b_demo_program.json").read_text())
SECOND = PROGRAM["calls"][1]["answer"]  # a complete real JSON answer of the 0.5B model


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.stem)
def test_graph_and_verify_read_every_real_draft_alike(path: Path) -> None:
    """The draft the graph keeps is what verify reads: unwrapping it again changes nothing, and an unclosed
    fence stays visible to verify as a cut."""
    raw = path.read_text(encoding="utf-8")
    core = unwrap(raw)
    kept = compose.unwrap(raw)
    if core.unclosed_fence:
        assert kept.startswith(core.fence_line + "\n") and unwrap(kept).unclosed_fence
    assert unwrap(kept).text == core.text
    if not core.removed:
        assert kept == raw


def test_unclosed_fence_kept_by_the_graph_is_flagged_as_cut() -> None:
    raw = (HERE / "verify_corpus" / "real" / "q15-chinook_audit-fenced-t0.7-s2.md").read_text(encoding="utf-8")
    doc = json.loads((HERE / "verify_corpus" / "chinook_audit.json").read_text())
    cut = [b for b in verify_fn(compose.unwrap(raw), doc).bad if b.actual == "the report is cut off"]
    assert cut and "never closed" in cut[0].message


@pytest.mark.parametrize("wrap", [
    "```json\n{}\n```", "Here is the JSON:\n```json\n{}\n```\nHope this helps.", "<answer>\n{}\n</answer>",
    "<json>{}</json>", "<think>The checks failed {a lot}.</think>\n```\n{}\n```", "~~~json\n{}\n~~~",
    "```json\n{}",  # cut before the closing fence
], ids=["json-fence", "chatter", "answer-tag", "json-tag", "think-then-fence", "tilde", "unclosed"])
def test_real_json_answer_in_every_wrapping_parses_the_same(wrap: str) -> None:
    bare, problem = compose.parse_prose(SECOND)
    assert problem is None and bare is not None
    wrapped = wrap.replace("{}", SECOND.strip())
    prose, problem = compose.parse_prose(wrapped)
    assert problem is None and prose == bare, problem
    assert json.loads(unwrap_json(wrapped)) == json.loads(SECOND)


def test_cut_real_json_answer_is_incomplete_not_unwrapped_into_something_else() -> None:
    cut = PROGRAM["calls"][0]["answer"]
    for wrapped in (cut, "```json\n" + cut, "<answer>\n" + cut):
        incomplete = "The JSON answer is incomplete: it ends before the object closes."
        assert compose.parse_prose(wrapped) == (None, incomplete)


def test_a_fence_that_is_part_of_the_report_is_kept() -> None:
    """The first fence is a ```json example inside a report with headings outside it: not a wrapper."""
    report = "# Report\n\nThe check's parameters:\n\n```json\n{\"min\": 0}\n```\n\n## Findings\n\nNone.\n"
    assert unwrap_report(report) == report.strip("\n")
    assert unwrap(report, has_object).text == '{"min": 0}'  # asked for JSON, the predicate finds the object
    assert compose.unwrap(report) == report


def test_report_tags_and_reasoning_around_a_real_fenced_report() -> None:
    fenced = (HERE / "verify_corpus" / "real" / "q05-library-fenced-t0.6-s101.md").read_text(encoding="utf-8")
    for tag in ("report", "answer"):
        wrapped = f"<think>Let me count.</think>\nSure.\n<{tag}>\n{fenced}\n</{tag}>\nDone."
        assert unwrap_report(wrapped) == unwrap_report(fenced)
        assert compose.unwrap(wrapped) == compose.unwrap(fenced)
