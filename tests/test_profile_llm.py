"""``suggest --llm``: the model's proposals are run before they are written (real stub server, real databases)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.test_profile import _customers, _load
from watchdog.profile.llm import propose
from watchdog.profile.suggest import profile_database, suggest_suite
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suite
from watchdog.settings import LLMConfig
from watchdog.testing.openai_stub import StubOpenAI, structured, tool_call


def _proposal(**fields: object) -> dict[str, object]:
    base: dict[str, object] = {"values": None, "min": None, "max": None, "regex": None, "references": None,
                               "max_age": None, "reason": "because"}
    return {**base, **fields}


PROPOSALS = {"proposals": [
    _proposal(table="customers", kind="range", column="id", min=1, max=None, reason="ids are positive"),
    _proposal(table="customers", kind="range", column="age", min=0, max=120, reason="human ages"),  # rules have it
    _proposal(table="orders", kind="range", column="id", min=None, max=100, reason="few orders"),
    _proposal(table="customers", kind="not_null", column="no_such_column", reason="cannot run"),
    _proposal(table="customers", kind="sparkle", column="email", reason="not a check type"),
    _proposal(table="ghosts", kind="not_null", column="id", reason="no such table"),
]}


def test_llm_proposals_are_run_failing_commented_unrunnable_dropped(database, tmp_path: Path) -> None:
    _load(database)
    with StubOpenAI([structured(PROPOSALS)]) as stub, Sandbox(database.url) as box:
        profiles = profile_database(box)
        extra, notes = propose(LLMConfig(base_url=stub.base_url, api_key="sk-test", max_attempts=1), profiles)
        result = suggest_suite(box, profiles, extra=extra, notes=notes)
        sent = stub.requests[0]["body"]
        path = tmp_path / "s.yaml"
        path.write_text(result.text)
        doc = scan(box, load_suite(path).checks, sample=0)
    # the model saw the profile (aggregates), never a table row: no email address is in the prompt
    prompt = str(sent["messages"])
    assert "customers" in prompt and "user5@example.com" not in prompt
    assert doc.summary.failed == 0 and doc.summary.errors == 0
    text = result.text
    assert "    # LLM: ids are positive\n    - range: {column: id, min: 1}" in text
    # orders.id runs 1..300: 200 of 300 rows are above 100 -> commented out with the rate
    assert "# FAILS on today's data: 200 of 300 rows fail (66.67%)" in text
    assert "    # - range: {column: id, max: 100}" in text
    joined = "\n".join(result.notes)
    assert "no_such_column" in joined and "could not run" in joined
    assert "sparkle" in joined and "ghosts" in joined
    assert "LLM proposal customers.range.age is already suggested from the profile" in joined
    assert yaml.safe_load(text)["tables"]["customers"]


def test_cli_suggest_llm_through_the_stub(make_database, run_cli, tmp_path: Path) -> None:
    db = make_database("sqlite")
    _load(db)
    out = tmp_path / "llm.yaml"
    with StubOpenAI([structured(PROPOSALS, name="Proposals")]) as stub:
        done = run_cli("suggest", "--db", db.url, "--llm", "--out", str(out),
                       env={"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "sk-test"})
    assert done.returncode == 0, done.stderr
    assert "dropped LLM proposal" in done.stderr and "sk-test" not in done.stderr + done.stdout
    assert "# LLM: ids are positive" in out.read_text()
    missing = run_cli("suggest", "--db", db.url, "--llm", env={"OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""})
    assert missing.returncode == 3 and "--llm needs a model endpoint" in missing.stderr


SAMPLED = {"proposals": [
    _proposal(table="customers", kind="pattern", column="email", regex="^[a-z0-9]+@example[.]com$",
              reason="every sampled address is at example.com"),
    _proposal(table="customers", kind="pattern", column="status", regex="(", reason="broken regex"),
]}


def test_llm_samples_values_through_the_sandbox_tool(database, tmp_path: Path) -> None:
    """The stub asks for samples; the tool answers from the real database through the sandbox, capped at 10
    values; the samples go back to the model; its proposals are then run like any other."""
    _load(database)
    script = [tool_call([("sample_values", {"table": "customers", "column": "email", "n": 50}),
                         ("sample_values", {"table": "customers", "column": "no_such_column"})]),
              tool_call("sample_values", {"table": "orders; DROP TABLE orders", "column": "id"}),
              structured(SAMPLED, name="Proposals")]
    with StubOpenAI(script) as stub, Sandbox(database.url) as box:
        sent: list[str] = []
        box.on_execute(sent.append)
        profiles = profile_database(box)
        sent.clear()
        extra, notes = propose(LLMConfig(base_url=stub.base_url, api_key="sk-test", max_attempts=1), profiles, box)
        result = suggest_suite(box, profiles, kinds=["row_count"], extra=extra, notes=notes)
        requests = stub.chat_requests
    assert len(requests) == 3
    first = requests[0]["body"]
    assert {t["function"]["name"] for t in first["tools"]} == {"sample_values", "Proposals"}
    # one LIMITed read per valid call, through the sandbox; the bad names never reached the database
    samples = [s for s in sent if "LIMIT" in s.upper() and "email" in s]
    assert len(samples) == 1 and not any("DROP" in s.upper() or "no_such_column" in s for s in sent)
    answers = [m for m in requests[1]["body"]["messages"] if m.get("role") == "tool"]
    values = json.loads(answers[0]["content"])["values"]
    assert len(values) == 10 and set(values) <= {row[1] for row in _customers()}
    assert "has no column 'no_such_column'" in answers[1]["content"]
    last = [m for m in requests[2]["body"]["messages"] if m.get("role") == "tool"]
    assert "no profiled table" in last[-1]["content"]
    # nothing secret in any prompt: no API key, no database URL
    for r in requests:
        body = json.dumps(r["body"])
        assert "sk-test" not in body and database.url not in body
    text = result.text
    # the sampled pattern misses the one off-shape address: run, and written commented out with its rate
    assert "# FAILS on today's data: 1 of 120 rows fail (0.83%)" in text
    assert "    # - pattern: {column: email, regex: '^[a-z0-9]+@example[.]com$'}" in text
    # the broken regex cannot form a check: dropped with a note, never presented as passing
    assert any("customers.status.pattern" in n for n in result.notes)
    assert "the model looked at sample values 3 time(s)" in result.notes
    assert "regex: (" not in text
