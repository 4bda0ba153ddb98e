"""Record real drafts of a local model for the verify corpus (tests/verify_corpus/real.yaml, real/<id>.md).

Serves a GGUF file you already have on 127.0.0.1 with xllamacpp (``pip install xllamacpp``; nothing is
downloaded), sends watchdog's own specialist prompt (``SPECIALIST_SYSTEM`` + ``writer_request``) for a
findings file with each prompt variant, saves every raw answer byte for byte and prints one JSON line per
draft (id, model, finish reason, tokens) to start its real.yaml entry. Label it by hand: read the draft
against the findings, list every bad item verify must report, fix verify where it disagrees::

    .venv/bin/python -m bench.verify_drafts MODEL.gguf tests/verify_corpus/library.json --name q05 --runs 4

Use ``OMP_WAIT_POLICY=PASSIVE`` on shared cores. Each slot keeps the findings prefix in its prompt cache, so
only the first draft per slot pays for the prompt.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time
import urllib.request
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


def _serve(gguf: Path, ctx: int, slots: int) -> tuple[Any, str]:
    import xllamacpp as xlc

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    params = xlc.CommonParams()
    params.model.path = str(gguf)
    params.n_ctx = ctx
    params.n_parallel = slots
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.model_alias = {"local"}
    params.cpuparams.n_threads = 2
    params.cpuparams_batch.n_threads = 2
    return xlc.Server(params), f"http://127.0.0.1:{port}/v1"


def _chat(base: str, system: str, user: str, temperature: float, seed: int, max_tokens: int) -> dict[str, Any]:
    body = json.dumps({"model": "local", "temperature": temperature, "seed": seed, "max_tokens": max_tokens,
                       "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]})
    request = urllib.request.Request(base + "/chat/completions", body.encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=7200) as response:
        return json.load(response)


def main(argv: list[str] | None = None) -> int:
    from watchdog.graph.prompts import SPECIALIST_SYSTEM, writer_request

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gguf", type=Path)
    parser.add_argument("findings", type=Path)
    parser.add_argument("--runs", type=int, default=5, help="drafts to record (cycling through the variants)")
    parser.add_argument("--max-tokens", type=int, default=500)
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument("--ctx", type=int, default=8192, help="context window per slot")
    parser.add_argument("--name", default="local", help="short model name that starts each draft id")
    args = parser.parse_args(argv)
    findings = json.loads(args.findings.read_text(encoding="utf-8"))
    server, base = _serve(args.gguf, args.ctx * args.slots, args.slots)
    jobs = [(list(VARIANTS)[k % len(VARIANTS)], round(0.3 + 0.2 * (k % 4), 1), 300 + k) for k in range(args.runs)]
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                if not jobs:
                    return
                variant, temperature, seed = jobs.pop(0)
            start = time.perf_counter()
            data = _chat(base, SPECIALIST_SYSTEM, writer_request(findings, None, None) + VARIANTS[variant],
                         temperature, seed, args.max_tokens)
            choice = data["choices"][0]
            draft_id = f"{args.name}-{args.findings.stem}-{variant}-t{temperature}-s{seed}"
            OUT.mkdir(parents=True, exist_ok=True)
            (OUT / f"{draft_id}.md").write_text(choice["message"].get("content") or "", encoding="utf-8")
            usage = data.get("usage") or {}
            with lock:
                print(json.dumps({"id": draft_id, "model": args.gguf.name, "findings": args.findings.name,
                                  "prompt": f"specialist writer ({variant}), temperature {temperature}, seed {seed}",
                                  "finish_reason": choice.get("finish_reason"),
                                  "tokens": {"in": usage.get("prompt_tokens"), "out": usage.get("completion_tokens")},
                                  "seconds": round(time.perf_counter() - start, 1)}), flush=True)

    threads = [threading.Thread(target=worker) for _ in range(args.slots)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    del server
    return 0


if __name__ == "__main__":
    sys.exit(main())
