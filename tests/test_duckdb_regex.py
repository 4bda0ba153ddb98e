"""The regex corpus of ``test_regex_corpus.py`` on DuckDB (RE2): the same failing rows as on SQLite, or an error.

RE2 has no lookaround, so the patterns that need it (``\\m``, ``\\M``, lookaheads) must be an error finding on
DuckDB -- never a different count; ``\\b`` and ``\\B`` are RE2's own ASCII word boundaries. Every other
pattern must fail exactly the rows it fails on SQLite, and the counts worked out by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.dbs import create_database
from tests.test_regex_corpus import CORPUS, VALUES, _by_hand_alpha
from watchdog.sandbox import Sandbox
from watchdog.scan import regex, regex_warehouse
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suites


def _needs_lookaround(pattern: str) -> bool:
    try:
        regex_warehouse.translate(pattern, "duckdb")
    except regex.RegexError:
        return True
    return False


@pytest.fixture(scope="module")
def findings(tmp_path_factory) -> dict[str, dict[str, tuple]]:
    folder = Path(tmp_path_factory.mktemp("duck_regex"))
    checks = [{"pattern": {"column": "v", "regex": p, "name": f"p{i}"}} for i, (p, _) in enumerate(CORPUS)]
    suite = folder / "regex.yaml"
    suite.write_text(yaml.safe_dump({"tables": {"words": checks}}, allow_unicode=True), encoding="utf-8")
    [loaded] = load_suites([suite])
    out = {}
    for kind in ("sqlite", "duckdb"):
        db = create_database(kind, folder)
        try:
            db.create_table("words", {"id": "int", "v": "text"}, list(enumerate(VALUES)))
            db.engine.dispose()
            with Sandbox(db.url) as box:
                doc = scan(box, loaded.checks, sample=0)
            out[kind] = {f.name: (f.status, f.failing, f.error) for f in doc.findings}
        finally:
            db.close()
    return out


def test_duckdb_fails_the_same_rows_as_sqlite_or_refuses(findings):
    refused = {f"p{i}" for i, (p, _) in enumerate(CORPUS) if _needs_lookaround(p)}
    assert {"p2", "p3"} <= refused and not {"p0", "p1", "p4"} & refused and len(refused) < len(CORPUS) // 8
    for name, (status, failing, error) in findings["duckdb"].items():
        if name in refused:
            assert status == "error" and "RE2" in (error or ""), name
        else:
            assert (status, failing) == findings["sqlite"][name][:2], (CORPUS[int(name[1:])][0], name)


def test_duckdb_counts_worked_out_by_hand(findings):
    expected = {f"p{i}": n for i, (p, n) in enumerate(CORPUS) if n is not None and not _needs_lookaround(p)}
    expected["p5"] = len(VALUES) - _by_hand_alpha()
    got = {name: findings["duckdb"][name][1] for name in expected}
    assert got == expected
