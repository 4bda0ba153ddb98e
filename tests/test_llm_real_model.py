"""The LLM report with a real small model, end to end: a generated database no prompt was tuned to, ``llm.local``
serving the GGUF file, program mode choosing causes. Slow (minutes on two cores): it runs only when a GGUF file is
given, ``WATCHDOG_TEST_GGUF=/path/to/model.gguf pytest tests/test_llm_real_model.py``.

Whatever the model answers, nothing wrong is delivered: the report is either verified (and then passes
``watchdog verify``'s own verdict) or the deterministic report under a banner naming the reason; audit.json names
the GGUF file that ran, and every fix answer is stored beside its draft.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bench.dbgen import generate
from watchdog.run.scan_run import run_scan
from watchdog.settings import LLMConfig, LocalModel, RoleTokens, Settings
from watchdog.verify import verify_fn

GGUF = os.environ.get("WATCHDOG_TEST_GGUF")

pytestmark = pytest.mark.skipif(not GGUF or not Path(GGUF).is_file(),
                                reason="set WATCHDOG_TEST_GGUF to a GGUF model file to run the real-model test")


def test_a_real_model_on_a_generated_database_delivers_only_what_verifies(tmp_path: Path) -> None:
    db = generate(9101)
    db.write_sqlite(tmp_path / "gen.db")
    (tmp_path / "suite.yaml").write_text(db.suite_yaml(), encoding="utf-8")
    llm = LLMConfig(table="program", causes="choose", review="off", max_fix_rounds=2, max_replans=0, tool_budget=0,
                    request_timeout_s=1800, idle_timeout_s=300, local=LocalModel(model=str(GGUF), threads=2),
                    max_output_tokens=RoleTokens(planner=400, specialist=1500, evaluator=300))
    settings = Settings(root=tmp_path, state_dir=str(tmp_path / "state"), llm=llm)
    out = tmp_path / "run"
    outcome = run_scan(f"sqlite:///{tmp_path / 'gen.db'}", [tmp_path / "suite.yaml"], out_dir=out, llm=True,
                       settings=settings)
    audit = json.loads((out / "audit.json").read_text())["llm"]
    report = (out / "report.md").read_text()
    name = Path(str(GGUF)).name
    assert all(m.startswith(f"{name} (") and "llm.local" in m for m in audit["models"].values())
    for r in audit["rounds"]:
        if r["step"] == "fix":
            assert "answer" in r and "draft" in r
    if audit["outcome"] == "verified":
        assert verify_fn(report, outcome.doc).passed  # the same verdict as `watchdog verify`
    else:
        assert "Unverified LLM draft not delivered" in report and audit["fallback_reason"]
