"""Turn the recorded runs of ``bench.llm_real --record DIR`` into verify corpus drafts, to be labelled by hand.

    python -m bench.llm_real_corpus DIR [DIR ...] [--name-of FILE=SHORT ...]

For every recorded run: its findings are written once to ``tests/verify_corpus/gen<seed>.json`` (the generated
database's findings, samples and diagnosis included) and its first answer (the whole JSON draft the model wrote;
a fix answer holds only the parts it was asked for) to ``tests/verify_corpus/real/<id>.json``. One JSON line per
draft is printed with what verify and the graph's prose rules say of it *now*, to start its ``real.yaml`` entry:
read the draft against the findings and write the labels (``expect``, ``prose_missing``, ``note``) by hand; where
the label and verify disagree, verify is what gets fixed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.common import ROOT

CORPUS = ROOT / "tests" / "verify_corpus"


def draft_of(fixture: dict[str, Any], short: str, target: str) -> dict[str, Any] | None:
    from watchdog.findings import FindingsDoc
    from watchdog.graph.asks import missing_prose
    from watchdog.graph.compose import assemble, parse_prose
    from watchdog.graph.prompts import problem_names
    from watchdog.verify import verify_fn

    calls = fixture.get("calls") or []
    if not calls:
        return None
    raw = calls[0]["answer"]
    doc = FindingsDoc.validate(fixture["findings"])
    draft_id = f"{short}-{target}-program-choose"
    (CORPUS / "real").mkdir(parents=True, exist_ok=True)
    (CORPUS / "real" / f"{draft_id}.json").write_text(raw, encoding="utf-8")
    prose, problem = parse_prose(raw)
    entry: dict[str, Any] = {"id": draft_id, "findings": f"{target}.json", "table": "program",
                             "finish_reason": calls[0].get("finish_reason")}
    if prose is None:
        return {**entry, "expect": "unparsed", "parse_error": problem}
    names = problem_names(fixture["findings"])
    lacks = missing_prose(prose, names)
    bad = verify_fn(assemble(doc, prose), doc).bad
    return {**entry, "prose_missing": [f"{p}: {m}" for p, m in lacks],
            "verify": [{"finding": b.finding, "actual": b.actual, "says": b.says} for b in bad]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.llm_real_corpus", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folders", type=Path, nargs="+")
    p.add_argument("--short", action="append", default=[], help="GGUF-name-prefix=short id prefix (repeatable)")
    args = p.parse_args(argv)
    shorts = dict(s.split("=", 1) for s in args.short)
    for folder in args.folders:
        for path in sorted(folder.glob("*.json")):
            fixture = json.loads(path.read_text(encoding="utf-8"))
            model, target, _mode = path.stem.rsplit("_", 2)
            short = next((v for k, v in shorts.items() if model.startswith(k)), model)
            findings = CORPUS / f"{target}.json"
            if not findings.exists():
                findings.write_text(json.dumps(fixture["findings"], indent=1, ensure_ascii=False) + "\n",
                                    encoding="utf-8")
            line = draft_of(fixture, short, target)
            if line is not None:
                print(json.dumps({"model": fixture.get("model"), **line}, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
