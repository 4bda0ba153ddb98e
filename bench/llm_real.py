"""``python -m bench.llm_real``: the LLM report through a real model, per model, mode and data set.

    python -m bench.llm_real --gguf /path/to/model.gguf [--gguf other.gguf] [--base-url URL --model NAME]
                             [--modes program,model] [--targets gen,demo,chinook] [--seeds 10] [--first-seed 9001]
                             [--out bench/results/llm_real.json] [--record DIR]

A GGUF file is served by llama.cpp on loopback (``llm.local``'s server, ``pip install 'watchdog-dq[local]'``),
one server per model for all its runs (so its prompt cache is shared); ``--base-url`` measures any running
OpenAI-compatible endpoint instead. Without either, it says so and exits 0 (skipped).

Per run: the outcome (verified at the first draft, verified after fixes, or fallback), rounds, tokens per role
(every attempt's), wall time, and verify_fn's verdict on every draft. The demo is the planted-problem CRM
(20 checks, 10 failing or warning); Chinook is the clean baseline (77 checks, all passing); ``gen`` is one random
database per seed (``bench.dbgen``: random domain, table and column names, sizes, check mix, defect rates and
planted causes), data no prompt and no rule was tuned to. ``--record DIR`` writes every run's findings and raw
answers as a replay fixture (``tests/fixtures/llm_real`` format).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CHINOOK = REPO.parent / "shared" / "datasets" / "chinook" / "Chinook_Sqlite.sqlite"


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.llm_real", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gguf", type=Path, action="append", default=[], help="a GGUF model file (repeatable)")
    p.add_argument("--base-url", default=None, help="an OpenAI-compatible endpoint instead of a GGUF file")
    p.add_argument("--model", default="local", help="the model name sent to --base-url")
    p.add_argument("--modes", default="program,model", help="llm.table modes, comma-separated")
    p.add_argument("--targets", default="gen", help="gen, demo, chinook (comma-separated)")
    p.add_argument("--seeds", type=int, default=10, help="how many generated databases (target gen)")
    p.add_argument("--first-seed", type=int, default=9001, help="the first seed (seeds no one tuned to)")
    p.add_argument("--record", type=Path, default=None, help="write each run's raw answers as a fixture here")
    p.add_argument("--review", default="advisory", choices=["gate", "advisory", "off"])
    p.add_argument("--fix-rounds", type=int, default=2)
    p.add_argument("--causes", default="choose", choices=["write", "choose"], help="llm.causes (program mode)")
    p.add_argument("--specialist-tokens", type=int, default=1500)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "llm_real.json")
    return p.parse_args(argv)


@contextmanager
def endpoints(args: argparse.Namespace) -> Iterator[Iterator[tuple[str, str]]]:
    """(model label, base URL) pairs; each GGUF server lives only while its runs do."""
    from watchdog.graph.local import local_server
    from watchdog.settings import LocalModel

    def each() -> Iterator[tuple[str, str]]:
        if args.base_url:
            yield args.model, args.base_url
        for gguf in args.gguf:
            with local_server(LocalModel(model=str(gguf), threads=args.threads), REPO) as url:
                yield gguf.name, url

    yield each()


def findings_for(target: str, work: Path) -> tuple[str, list[str]]:
    if target.startswith("gen:"):
        from bench.dbgen import generate

        db = generate(int(target.removeprefix("gen:")))
        db.write_sqlite(work / "gen.db")
        (work / "suite.yaml").write_text(db.suite_yaml(), encoding="utf-8")
        return f"sqlite:///{work / 'gen.db'}", [str(work / "suite.yaml")]
    if target == "demo":
        from watchdog.run.demo_data import build_demo_database

        build_demo_database(work / "crm.db")
        return f"sqlite:///{work / 'crm.db'}", [str(REPO / "checks" / "demo_crm.yaml")]
    if target == "chinook":
        return f"sqlite:///{CHINOOK}", [str(REPO / "checks" / "chinook.yaml")]
    raise SystemExit(f"unknown target {target!r}")


def one_run(label: str, url: str, target: str, mode: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from watchdog.graph.models import build_models
    from watchdog.run.scan_run import run_scan
    from watchdog.settings import LLMConfig, RoleModels, RoleTokens, Settings

    llm = LLMConfig(base_url=url, api_key="local", table=mode, review=args.review, max_fix_rounds=args.fix_rounds,
                    causes=args.causes,
                    request_timeout_s=900, idle_timeout_s=120,
                    max_replans=0, tool_budget=0, temperature=0.2,
                    models=RoleModels(planner=args.model, specialist=args.model, evaluator=args.model),
                    max_output_tokens=RoleTokens(planner=600, specialist=args.specialist_tokens, evaluator=400))
    settings = Settings(root=work, state_dir=str(work / "state"), llm=llm)
    db, suites = findings_for(target, work)
    out = work / f"{target.replace(':', '-')}-{mode}"
    started = time.monotonic()
    outcome = run_scan(db, suites, out_dir=out, llm=True, settings=settings, models=build_models(llm))
    wall = time.monotonic() - started
    meta = json.loads((out / "audit.json").read_text())
    audit = meta.get("llm") or meta  # the llm section (older layouts kept it at the top level)
    rounds = audit["rounds"]
    drafts = [r for r in rounds if r["step"] == "evaluate"]
    verdicts = [{"passed": r["verification"]["passed"], "bad": len(r["verification"]["bad"]),
                 "messages": [b["message"] for b in r["verification"]["bad"]][:8],
                 "review": r.get("review")} for r in drafts]
    result = audit["outcome"]
    kind = ("verified first draft" if result == "verified" and audit["fix_rounds"] == 0 else
            "verified after fixes" if result == "verified" else "fallback")
    return {"model": label, "target": target, "mode": mode, "causes": args.causes, "outcome": kind,
            "fix_rounds": audit["fix_rounds"],
            "rounds": [r["step"] for r in rounds], "tokens": audit["tokens"], "wall_s": round(wall, 1),
            "fallback_reason": audit.get("fallback_reason"), "verdicts": verdicts,
            "findings": outcome.doc.summary.to_json_dict(), "report": (out / "report.md").read_text()[:6000],
            "unverified": (out / "report.unverified.md").read_text()[:6000]
            if (out / "report.unverified.md").exists() else None,
            "answers": [r.get("answer") or r.get("draft") for r in rounds if r["step"] in ("write", "fix")],
            "calls": [{"step": r["step"], "answer": r.get("answer") or r.get("draft") or "",
                       "finish_reason": r.get("finish_reason"), "asked": r.get("asked")}
                      for r in rounds if r["step"] in ("write", "fix")],
            "findings_doc": outcome.doc.to_json_dict(), "grounded": grounded(outcome.doc, audit)}


def grounded(doc: Any, audit: dict[str, Any]) -> dict[str, int] | None:
    """Of the failing checks with diagnosis facts, how many have likely causes citing one (the verifier's own
    measure, :func:`watchdog.verify.diagnosis_causes.citation_share`, on the last answer); None when none had."""
    from watchdog.verify.diagnosis_causes import citation_share

    rounds = audit.get("rounds") or []
    last = next((r for r in reversed(rounds) if r.get("step") in ("write", "fix") and r.get("draft")), None)
    if last is None:
        return None
    share = citation_share(last["draft"], doc)
    return {"failing": share["checks"], "quoting": share["citing"]} if share["share"] is not None else None


def table(results: list[dict[str, Any]]) -> str:
    lines = ["| model | data | mode | outcome | fix rounds | tokens in/out (specialist) | tokens in/out (evaluator) "
             "| wall s | verify per draft | causes quoting a fact |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        sp, ev = r["tokens"].get("specialist", {}), r["tokens"].get("evaluator", {})
        verdicts = ", ".join("pass" if v["passed"] else f"{v['bad']} bad" for v in r["verdicts"]) or "–"
        g = r.get("grounded")
        share = f"{g.get('quoting', 0)}/{g.get('failing', 0)}" if g else "–"
        lines.append(f"| {r['model']} | {r['target']} | {r['mode']} | {r['outcome']} | {r.get('fix_rounds', 0)} "
                     f"| {sp.get('input', 0)}/{sp.get('output', 0)} | {ev.get('input', 0)}/{ev.get('output', 0)} "
                     f"| {r['wall_s']} | {verdicts} | {share} |")
    return "\n".join(lines)


def summary(results: list[dict[str, Any]]) -> str:
    """Per model and mode: delivered verified / runs, and the median wall time per report."""
    import statistics

    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in results:
        groups.setdefault((r["model"], r["mode"]), []).append(r)
    out = []
    for (model, mode), runs in groups.items():
        ok = sum(1 for r in runs if str(r["outcome"]).startswith("verified"))
        walls = [r["wall_s"] for r in runs if r.get("wall_s")]
        med = statistics.median(walls) if walls else 0
        out.append(f"{model} {mode}: verified {ok} of {len(runs)}, fallback {len(runs) - ok}, "
                   f"median wall {med:.1f} s")
    return "\n".join(out)


def record(result: dict[str, Any], folder: Path) -> None:
    """The run as a replay fixture: its findings and every raw answer with its finish reason."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{result['model'].split('.gguf')[0]}_{result['target'].replace(':', '')}_{result['mode']}.json"
    fixture = {"model": f"{result['model']}, bench/llm_real.py {result['target']}, {result['mode']} mode",
               "mode": result["mode"], "outcome": result["outcome"], "findings": result["findings_doc"],
               "calls": [{"answer": c["answer"], "finish_reason": c["finish_reason"]} for c in result["calls"]]}
    (folder / name).write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def targets(args: argparse.Namespace) -> list[str]:
    out: list[str] = []
    for t in [t.strip() for t in args.targets.split(",") if t.strip()]:
        out += [f"gen:{args.first_seed + i}" for i in range(args.seeds)] if t == "gen" else [t]
    return out


def machine() -> dict[str, Any]:
    import datetime
    import os
    import platform

    return {"date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"), "host": platform.node(),
            "cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version()}


def main(argv: list[str] | None = None) -> int:
    import signal

    def stop(signum: int, frame: Any) -> None:  # SIGTERM unwinds like Ctrl-C: each model server is stopped
        raise KeyboardInterrupt("SIGTERM")

    signal.signal(signal.SIGTERM, stop)
    args = parse(argv)
    if not args.gguf and not args.base_url:
        print("bench.llm_real: skipped: give a model with --gguf PATH or --base-url URL", file=sys.stderr)
        return 0
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="wd-llm-real-") as tmp, endpoints(args) as each:
        for label, url in each:
            for target in targets(args):
                for mode in [m.strip() for m in args.modes.split(",") if m.strip()]:
                    work = Path(tmp) / f"{label}-{target}-{mode}"
                    work.mkdir(parents=True)
                    print(f"{label} {target} {mode} ...", file=sys.stderr, flush=True)
                    try:
                        result = one_run(label, url, target, mode, args, work)
                    except Exception as exc:  # noqa: BLE001 - one failed run is a result, not the end
                        result = {"model": label, "target": target, "mode": mode, "outcome": f"error: {exc}",
                                  "rounds": [], "tokens": {}, "wall_s": 0, "verdicts": []}
                    results.append(result)
                    print(f"  {result['outcome']} in {result['wall_s']} s, rounds {result['rounds']}, verify "
                          f"{[v['passed'] for v in result['verdicts']]}", file=sys.stderr, flush=True)
                    if args.record and "calls" in result:
                        record(result, args.record)
                    args.out.parent.mkdir(parents=True, exist_ok=True)
                    args.out.write_text(json.dumps({"machine": machine(), "results": results}, indent=1,
                                                   default=str) + "\n")
    print(table(results))
    print(summary(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def prompt_tokens(base_url: str, seeds: list[int]) -> list[dict[str, Any]]:
    """Prompt tokens per role, counted by the serving model's own tokenizer (llama.cpp's /tokenize), for the
    findings of generated databases: the shared findings block, each role's request, the program-mode schema."""
    import tempfile
    import urllib.request

    from bench.dbgen import generate
    from watchdog.graph import prompts
    from watchdog.graph.compose import prose_schema
    from watchdog.graph.nodes import choices_for
    from watchdog.run.scan_run import run_scan
    from watchdog.settings import Settings

    def count(text: str) -> int:
        req = urllib.request.Request(base_url.removesuffix("/v1") + "/tokenize", method="POST",
                                     data=json.dumps({"content": text}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=600) as resp:  # noqa: S310 - loopback
            return len(json.loads(resp.read())["tokens"])

    out = []
    for seed in seeds:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            db = generate(seed)
            db.write_sqlite(work / "g.db")
            (work / "s.yaml").write_text(db.suite_yaml(), encoding="utf-8")
            doc = run_scan(f"sqlite:///{work / 'g.db'}", [str(work / "s.yaml")], out_dir=work / "o",
                           settings=Settings(root=work, state_dir=str(work / "st"))).doc
        f = doc.to_json_dict()
        names = prompts.problem_names(f)
        choices = choices_for({"findings": f})  # type: ignore[typeddict-item]
        ask = [f"`{n}`: causes and fixes missing." for n in names]
        out.append({"seed": seed, "checks": len(f["findings"]), "problems": len(names),
                    "findings_block": count(prompts.shared_system(f, samples=False)),
                    "findings_block_with_samples": count(prompts.shared_system(f)),
                    "specialist_write": count(prompts.writer_request(None, None, prose=True, names=names,
                                                                     choose=True)),
                    "specialist_fix_all_missing": count(prompts.fix_prose_request(ask)),
                    "evaluator": count(prompts.EVALUATOR), "planner": count(prompts.PLANNER),
                    "schema_chars": len(json.dumps(prose_schema(names, choices=choices)))})
    return out
