"""Record real drafts of a local model for the verify corpus (tests/verify_corpus/real.yaml, real/<id>.md|json).

Serves a GGUF file you already have on 127.0.0.1 (``llm.local``'s server, ``pip install 'watchdog-dq[local]'``;
nothing is downloaded) and sends watchdog's own prompts, exactly as the report graph does: the shared findings
block first (``shared_system``), then the writer's request, for ``llm.table: model`` (the whole Markdown report)
or ``program`` (the JSON prose, with the graph's response format). Each draft cycles through prompt variants that
draw out the shapes small models produce; every raw answer is saved byte for byte and one JSON line per draft
(id, model, finish reason, tokens, seconds) is printed to start its real.yaml entry. Label it by hand: read the
draft against the findings, list every bad item verify must report, fix verify where it disagrees::

    .venv/bin/python -m bench.verify_drafts MODEL.gguf tests/verify_corpus/demo.json --name q05 --runs 4

Requests run one at a time on one server, so the findings prefix stays in its prompt cache.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from bench.common import ROOT

OUT = ROOT / "tests" / "verify_corpus" / "real"
VARIANTS = {
    "plain": "",
    "think": ("\n\nFirst think step by step inside <think> and </think> about which checks failed and their exact "
              "numbers, then write the report."),
    "fenced": "\n\nReturn the report inside a ```markdown code block.",
    "tagged": "\n\nReturn the report between <report> and </report>.",
    "bullets": ("\n\nIn each `### <check name>` section use bullet points: - **Status**: ..., - **Failing**: ..., "
                "- **Total**: ..., - **Rate**: ..., - **Likely cause**: ..., - **Suggested fix**: ..."),
}
PROGRAM_VARIANTS = {"json": "", "numbers": "\n\nIn the summary, say how many checks failed and name the worst one."}


def _chat(base: str, messages: list[dict[str, str]], temperature: float, seed: int, max_tokens: int,
          response_format: dict[str, Any] | None) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "local", "temperature": temperature, "seed": seed, "max_tokens": max_tokens,
                            "messages": messages, "cache_prompt": True}
    if response_format:
        body["response_format"] = response_format
    request = urllib.request.Request(base + "/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=7200) as response:  # noqa: S310 - loopback only
        return dict(json.load(response))


def jobs_for(table: str, runs: int, variants: list[str] | None, seed_base: int) -> list[tuple[str, float, int]]:
    names = variants or list(PROGRAM_VARIANTS if table == "program" else VARIANTS)
    return [(names[k % len(names)], round(0.3 + 0.2 * (k % 4), 1), seed_base + k) for k in range(runs)]


def main(argv: list[str] | None = None) -> int:
    from watchdog.graph.compose import prose_schema
    from watchdog.graph.local import local_server
    from watchdog.graph.prompts import problem_names, shared_system, writer_request
    from watchdog.settings import LocalModel

    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("gguf", type=Path)
    parser.add_argument("findings", type=Path, nargs="+")
    parser.add_argument("--table", choices=["model", "program"], default="model")
    parser.add_argument("--runs", type=int, default=5, help="drafts per findings file (cycling through variants)")
    parser.add_argument("--variants", default="", help="comma-separated variant names (default: all)")
    parser.add_argument("--max-tokens", type=int, default=700)
    parser.add_argument("--seed-base", type=int, default=400)
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--name", default="local", help="short model name that starts each draft id")
    parser.add_argument("--base-url", default=None, help="a running server for this GGUF file (its /v1 URL)")
    args = parser.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v] or None
    served = nullcontext(args.base_url) if args.base_url else local_server(
        LocalModel(model=str(args.gguf.resolve()), context=args.ctx, threads=args.threads), ROOT)
    with served as base:
        for path in args.findings:
            findings = json.loads(path.read_text(encoding="utf-8"))
            names = problem_names(findings)
            for variant, temperature, seed in jobs_for(args.table, args.runs, variants, args.seed_base):
                program = args.table == "program"
                extra = (PROGRAM_VARIANTS if program else VARIANTS)[variant]
                request = writer_request(None, None, prose=program, names=names) + extra
                messages = [{"role": "system", "content": shared_system(findings)},
                            {"role": "user", "content": request}]
                start = time.perf_counter()
                data = _chat(base, messages, temperature, seed, args.max_tokens,
                             prose_schema(names) if program else None)
                choice = data["choices"][0]
                mode = "program" if program else "model"
                draft_id = f"{args.name}-{path.stem}-{mode}-{variant}-t{temperature}-s{seed}"
                OUT.mkdir(parents=True, exist_ok=True)
                suffix = ".json" if program else ".md"
                (OUT / f"{draft_id}{suffix}").write_text(choice["message"].get("content") or "", encoding="utf-8")
                usage = data.get("usage") or {}
                print(json.dumps({"id": draft_id, "model": args.gguf.name, "findings": path.name, "table": mode,
                                  "prompt": f"{mode} writer ({variant}), temperature {temperature}, seed {seed}, "
                                            f"max_tokens {args.max_tokens}",
                                  "finish_reason": choice.get("finish_reason"),
                                  "tokens": {"in": usage.get("prompt_tokens"), "out": usage.get("completion_tokens")},
                                  "seconds": round(time.perf_counter() - start, 1)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
