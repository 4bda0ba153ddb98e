"""LLM cost: the demo audit's ``watchdog scan --llm``, through the local stub and, if given, a real endpoint.

Stub run: the demo CRM is built, scanned once without ``--llm`` (the baseline wall time and the findings),
and the deterministic report of those findings is the specialist's script: first with one failing count
changed (verify_fn must flag it), then correct. So "rounds until verify passes" is measured, not assumed.
Freshness ages in exact seconds are dropped from the draft (the ``--llm`` run scans a few seconds
later, so they would be stale); the rounded ages (``45d 2h``) stay. The stub counts words as tokens.
Each run is a fresh ``watchdog scan --llm`` process; from its audit.json:
model calls and tokens per role, the rounds, and the wall time spent outside the model (process wall minus
the latency of the model-calling steps).

Real endpoint: with ``OPENAI_BASE_URL`` and/or ``OPENAI_API_KEY`` set, the same scan against it (models:
``BENCH_LLM_MODEL``, else the first model the endpoint lists, else the configuration's defaults), plus how
many drafts verify_fn flagged and whether the fix rounds converged. ``bench/run --gguf PATH`` serves a GGUF
file you supply through xllamacpp (bench/peers/llm_server.py, in bench/.venv-llm) and uses that instead.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.common import BENCH, ROOT, run_child

WATCHDOG = ROOT / ".venv" / "bin" / "watchdog"
SUITE = ROOT / "checks" / "demo_crm.yaml"
SPECIALIST, EVALUATOR = "[role:specialist]", "[role:evaluator]"
MODEL_STEPS = ("plan", "write", "fix")


def _config(folder: Path, models: dict[str, str], *, timeout_s: float) -> Path:
    path = folder / "watchdog.yaml"
    path.write_text(f"""\
state_dir: state
llm:
  models: {json.dumps(models)}
  max_fix_rounds: 3
  max_replans: 1
  request_timeout_s: {timeout_s:g}
""", encoding="utf-8")
    return path


def _env(base_url: str | None, api_key: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    if base_url:
        env["OPENAI_BASE_URL"] = base_url
    env["OPENAI_API_KEY"] = api_key or "sk-bench-not-a-secret"
    return env


def _scan(folder: Path, db: Path, out: str, *, llm: bool, env: dict[str, str] | None = None):
    cmd = [str(WATCHDOG), "scan", "--db", f"sqlite:///{db}", "--checks", str(SUITE), "--out", str(folder / out)]
    if llm:
        cmd += ["--llm", "--config", str(folder / "watchdog.yaml")]
    return run_child(cmd, env=env, cwd=folder, timeout_s=3600)


def wrong_and_right(findings_path: Path) -> tuple[str, str, dict[str, Any]]:
    """The deterministic report (correct) and a copy with the first failing count changed (wrong)."""
    from watchdog.findings import FindingsDoc
    from watchdog.report import render_markdown
    from watchdog.verify import verify_fn

    doc = FindingsDoc.load(findings_path)
    # a freshness age in exact seconds is already stale a few seconds later, when the --llm run scans again
    right = re.sub(r" \((\d{1,3}(,\d{3})*|\d+) s\)", "", render_markdown(doc))
    target = next(f for f in doc.findings if f.status == "fail" and f.failing)
    row = f"| `{target.name}` | FAIL | {target.failing:,} |"
    wrong_value = target.failing + 10
    wrong = right.replace(row, f"| `{target.name}` | FAIL | {wrong_value:,} |", 1)
    check = {"changed": target.name, "true_failing": target.failing, "written": wrong_value,
             "row_found": row in right, "right_passes": verify_fn(right, doc).passed,
             "wrong_flagged": not verify_fn(wrong, doc).passed}
    return wrong, right, check


def summarise(audit: dict[str, Any], wall_s: float) -> dict[str, Any]:
    """Calls, tokens, rounds and time outside the model from one run's audit.json."""
    rounds = audit.get("rounds", [])
    model_s = sum(float(r.get("latency_s") or 0) for r in rounds if r.get("step") in MODEL_STEPS or
                  (r.get("step") == "evaluate" and r.get("review") is not None))
    evaluations = [r for r in rounds if r.get("step") == "evaluate"]
    passed_at = next((i + 1 for i, r in enumerate(evaluations) if (r.get("verification") or {}).get("passed")), None)
    return {
        "outcome": audit.get("outcome"), "models": audit.get("models"), "tokens": audit.get("tokens"),
        "steps": [r.get("step") for r in rounds], "fix_rounds": audit.get("fix_rounds"),
        "replans": audit.get("replans"),
        "drafts_verified": len(evaluations),
        "drafts_flagged": sum(1 for r in evaluations if not (r.get("verification") or {}).get("passed")),
        "verify_passed_on_draft": passed_at, "converged": audit.get("outcome") == "verified",
        "wall_s": round(wall_s, 3), "model_s": round(model_s, 3), "outside_model_s": round(wall_s - model_s, 3),
        "fallback_reason": audit.get("fallback_reason"),
    }


def _median(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in runs if r.get(key) is not None]
    return round(statistics.median(values), 3) if values else None


def run_stub(folder: Path, db: Path, reps: int, log: Any) -> dict[str, Any]:
    from watchdog.testing.openai_stub import StubOpenAI, reply, structured

    baseline = [_scan(folder, db, f"plain-{i}", llm=False) for i in range(reps)]
    wrong, right, prep = wrong_and_right(folder / "plain-0" / "findings.json")
    _config(folder, {"planner": "stub-small", "specialist": "stub-big", "evaluator": "stub-small"}, timeout_s=30)
    runs = []
    for i in range(reps):
        script = {SPECIALIST: [reply(wrong), reply(right)], EVALUATOR: [structured({"confidence": 0.9, "issues": []})]}
        with StubOpenAI(by_marker=script, when_empty="error") as stub:
            run = _scan(folder, db, f"llm-{i}", llm=True, env=_env(stub.base_url, None))
            calls = {}
            for request in stub.chat_requests:
                calls[request["marker"] or "none"] = calls.get(request["marker"] or "none", 0) + 1
        audit_path = folder / f"llm-{i}" / "audit.json"
        if not audit_path.is_file():
            runs.append({"error": (run.stderr or run.stdout).strip()[-800:], "exit": run.returncode})
            log(f"    stub run {i + 1}/{reps}: FAILED exit {run.returncode}: {runs[-1]['error'][-300:]}")
            continue
        audit = json.loads(audit_path.read_text(encoding="utf-8"))["llm"]
        runs.append({**summarise(audit, run.wall_s), "stub_requests": calls, "peak_rss_mb": round(run.peak_rss_mb, 1),
                     "exit": run.returncode})
        log(f"    stub run {i + 1}/{reps}: {runs[-1]['outcome']}, {run.wall_s:.2f}s")
    plain_s = statistics.median(r.wall_s for r in baseline)
    return {"prepared_drafts": prep, "runs": runs, "scan_without_llm_s": round(plain_s, 3),
            "scan_without_llm_rss_mb": round(statistics.median(r.peak_rss_mb for r in baseline), 1),
            "median_wall_s": _median(runs, "wall_s"), "median_outside_model_s": _median(runs, "outside_model_s"),
            "median_llm_overhead_s": round(_median(runs, "outside_model_s") - plain_s, 3) if runs else None}


def _endpoint_models(base_url: str | None, api_key: str | None) -> dict[str, str] | None:
    name = os.environ.get("BENCH_LLM_MODEL")
    if not name and base_url:
        try:
            request = urllib.request.Request(base_url.rstrip("/") + "/models",
                                             headers={"Authorization": f"Bearer {api_key or 'none'}"})
            with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - the user's endpoint
                name = json.loads(response.read())["data"][0]["id"]
        except Exception:  # noqa: BLE001 - fall back to the configuration's defaults
            name = None
    return {"planner": name, "specialist": name, "evaluator": name} if name else None


def run_real(folder: Path, db: Path, log: Any, *, base_url: str | None = None, api_key: str | None = None,
             model: str | None = None, endpoint: str = "") -> dict[str, Any]:
    models = ({"planner": model, "specialist": model, "evaluator": model} if model else
              _endpoint_models(base_url, api_key) or {"planner": "gpt-4.1-mini", "specialist": "gpt-4.1",
                                                      "evaluator": "gpt-4.1-mini"})
    _config(folder, models, timeout_s=float(os.environ.get("BENCH_LLM_TIMEOUT_S", "600")))
    run = _scan(folder, db, "real", llm=True, env=_env(base_url, api_key))
    audit_path = folder / "real" / "audit.json"
    if not audit_path.is_file():
        return {"error": (run.stderr or run.stdout).strip()[-500:], "exit": run.returncode, "endpoint": endpoint}
    result = summarise(json.loads(audit_path.read_text(encoding="utf-8"))["llm"], run.wall_s)
    log(f"    real endpoint: {result['outcome']}, {run.wall_s:.1f}s")
    return {**result, "endpoint": endpoint, "peak_rss_mb": round(run.peak_rss_mb, 1)}


@contextmanager
def local_server(gguf: Path, log: Any, timeout_s: float = 900) -> Iterator[tuple[str, str]]:
    """Serve ``gguf`` with bench/.venv-llm's xllamacpp (bench/peers/llm_server.py); yields (base_url, model)."""
    python = BENCH / ".venv-llm" / "bin" / "python"
    if not python.exists():
        raise RuntimeError("bench/.venv-llm is missing: start the benchmark with bench/run --gguf PATH")
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([str(python), str(BENCH / "peers" / "llm_server.py"), str(gguf)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=err, text=True)
        try:
            line = _read_line(proc, timeout_s)
            if not line:
                err.seek(0)
                raise RuntimeError("the local model server did not start: "
                                   + err.read().decode("utf-8", "replace").strip()[-500:])
            info = json.loads(line)
            _wait_ready(info["base_url"], timeout_s)
            log(f"    local model server: {info['base_url']} ({gguf.name})")
            yield info["base_url"], info["model"]
        finally:
            if proc.stdin:
                proc.stdin.close()
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _read_line(proc: subprocess.Popen, timeout_s: float) -> str:
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(proc.stdout.readline() if proc.stdout else ""), daemon=True)
    reader.start()
    reader.join(timeout_s)
    return box[0].strip() if box else ""


def _wait_ready(base_url: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(base_url.rstrip("/") + "/models", timeout=5) as response:  # noqa: S310
                if response.status == 200:
                    return
        except Exception:  # noqa: BLE001 - still loading
            if time.monotonic() > deadline:
                raise RuntimeError(f"the local model server at {base_url} never became ready") from None
        time.sleep(1)


def run_llm_bench(reps: int, log: Any, gguf: Path | None = None) -> dict[str, Any]:
    from watchdog.run.demo_data import build_demo_database

    with tempfile.TemporaryDirectory(prefix="wd-bench-llm-") as tmp:
        folder = Path(tmp)
        db = folder / "crm.db"
        build_demo_database(db)
        result: dict[str, Any] = {"stub": run_stub(folder, db, reps, log), "real": None}
        base_url, api_key = os.environ.get("OPENAI_BASE_URL"), os.environ.get("OPENAI_API_KEY")
        if gguf is not None:
            try:
                with local_server(gguf, log) as (url, model):
                    result["real"] = run_real(folder, db, log, base_url=url, model=model,
                                              endpoint=f"xllamacpp, {gguf.name}")
            except RuntimeError as exc:
                result["real"] = {"error": str(exc), "endpoint": f"xllamacpp, {gguf.name}"}
        elif base_url or api_key:
            result["real"] = run_real(folder, db, log, base_url=base_url, api_key=api_key,
                                      endpoint="OPENAI_BASE_URL" if base_url else "OpenAI (OPENAI_API_KEY)")
    return result
