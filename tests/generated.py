"""bench/dbgen.py's random databases in the test suite (the ``generated_database`` fixture of conftest.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.dbgen import GeneratedDatabase, generate
from tests.dbs import TestDatabase


@dataclass
class Generated:
    url: str                    # the loaded database (SQLAlchemy URL of a throw-away test database)
    suite: Path                 # the suite YAML
    truth: dict[str, Any]       # GeneratedDatabase.truth()
    database: GeneratedDatabase
    db: TestDatabase

    def check(self, name: str) -> dict[str, Any]:
        """The truth of one check, by its name."""
        return next(c for c in self.truth["checks"] if c["name"] == name)


def load_generated(db: TestDatabase, folder: Path, seed: int, *, declare: bool = False,
                   **options: Any) -> Generated:
    """Generate the database of ``seed``, load it into ``db`` and write its suite into ``folder``."""
    gen = generate(seed, **options)
    gen.load(db.url)
    folder.mkdir(parents=True, exist_ok=True)
    suite = folder / f"suite-{seed}.yaml"
    suite.write_text(gen.suite_yaml(declare=declare), encoding="utf-8")
    return Generated(db.url, suite, gen.truth(), gen, db)


def truth_findings(truth: dict[str, Any]) -> dict[str, Any]:
    """A findings document (schema 1 dict) of a generated database as a correct scan and diagnosis would file it,
    built from its truth alone: for unit tests of what reads a diagnosis (verify, prompts), without a scan."""
    findings = []
    for c in truth["checks"]:
        f: dict[str, Any] = {"name": c["name"], "check": c["type"], "table": c["table"], "column": c["column"],
                             "status": c["status"], "failing": c["failing"], "total": c["rows"],
                             "rate": c["failing"] / c["rows"] if c["rows"] else None}
        if c["type"] == "row_count":
            f.update(failing=None, rate=None, observed=c["rows"], params={"min": 1})
        if c["status"] != "pass":
            d: dict[str, Any] = {"segments": [c["segment"]] if c.get("segment") else []}
            for key in ("onset", "overlap"):
                if c.get(key):
                    d[key] = c[key]
            if c.get("values"):
                d["values"] = c["values"][:5]
            f["diagnosis"] = d
        findings.append(f)
    failed = sum(f["status"] == "fail" for f in findings)
    return {"database": f"sqlite:///gen{truth['seed']}.db", "started_at": "2026-12-01T08:00:00+00:00",
            "duration_s": 0.5, "findings": findings,
            "summary": {"checks": len(findings), "passed": len(findings) - failed, "warned": 0, "failed": failed,
                        "errors": 0}}
