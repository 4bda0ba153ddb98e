"""bench/dbgen.py: random databases with planted causes -- deterministic per seed, and their truth is what a
real scan finds on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bench.dbgen import generate

#: nouns of the demo and of the fixtures verify was tuned on: a generated database uses none of them
TUNED_NOUNS = {"contact", "customer", "user", "book", "deal", "order", "invoice", "account", "compan", "activit"}


def _dump(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def test_the_same_seed_gives_the_same_database_byte_for_byte(tmp_path: Path) -> None:
    a, b = generate(11), generate(11)
    assert json.dumps(a.truth()) == json.dumps(b.truth())
    assert a.suite_yaml() == b.suite_yaml() and a.suite_yaml(declare=True) == b.suite_yaml(declare=True)
    pa, pb = a.write(tmp_path / "a"), b.write(tmp_path / "b")
    assert _dump(pa["db"]) == _dump(pb["db"])
    assert pa["truth"].read_bytes() == pb["truth"].read_bytes()
    # in another interpreter too (string hashing is randomised per process)
    code = "import json, sys; from bench.dbgen import generate; sys.stdout.write(json.dumps(generate(11).truth()))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           cwd=Path(__file__).resolve().parent.parent, env={"PYTHONHASHSEED": "123"})
    assert other.stdout == json.dumps(a.truth())


def test_seeds_differ() -> None:
    truths = [generate(s).truth() for s in range(8)]
    assert len({json.dumps(t) for t in truths}) == 8
    assert len({t["domain"] for t in truths}) >= 3
    assert len({name for t in truths for name in t["tables"]}) >= 8


@pytest.mark.parametrize("seed", range(40))
def test_every_database_plants_causes_and_controls_as_stated(seed: int) -> None:
    truth = generate(seed).truth()
    checks = truth["checks"]
    names = [c["name"] for c in checks]
    assert len(names) == len(set(names))
    for table, info in truth["tables"].items():
        assert not any(noun in table for noun in TUNED_NOUNS), table
        assert not any(noun in col for noun in TUNED_NOUNS for col in info["columns"]), info["columns"]
    causes = [c for c in checks if c["role"] == "cause"]
    controls = [c for c in checks if c["role"] == "control"]
    assert causes and controls
    for c in controls + causes:
        assert c["failing"] >= 1 and c["status"] == "fail"
    for c in checks:
        if c["role"] in ("clean", "passing"):
            assert c["failing"] == 0 and c["status"] == "pass"
    for c in causes:
        kind = c["kind"]
        if "segment" in kind:
            seg = c["segment"]
            assert seg["share_of_failing"] >= 0.6, c          # most failing rows are in the segment...
            assert seg["share_of_rows"] <= 0.5, c             # ...which is a minority of the rows
            assert seg["share_of_failing"] > seg["share_of_rows"] * 1.5, c
            assert seg["failing"] == round(seg["share_of_failing"] * c["failing"])
        if "window" in kind:
            w, onset = c["window"], c["onset"]
            assert w["start"] <= onset["first"] <= onset["last"] <= w["end"], c
            assert onset["table_first"] < w["start"], c


def test_truth_is_json_and_names_the_planted_values() -> None:
    for seed in range(10):
        gen = generate(seed)
        truth = json.loads(json.dumps(gen.truth()))
        for c in truth["checks"]:
            if c["failing"] and c["type"] in ("accepted_values", "foreign_key", "pattern", "range"):
                assert sum(v["failing"] for v in c["values"]) <= c["failing"]
                assert c["values"][0]["failing"] == max(v["failing"] for v in c["values"])
            if c["type"] == "foreign_key" and c["failing"]:
                parent = gen.table(c["table"]).parent
                top = truth["tables"][parent]["rows"]
                assert all(v["value"] > top for v in c["values"])


def test_sizes_are_a_parameter() -> None:
    small = generate(3, rows=(50, 60)).truth()
    big = generate(3, rows=(5000, 6000)).truth()
    assert all(t["rows"] <= 120 for t in small["tables"].values())
    assert all(t["rows"] >= 5000 for t in big["tables"].values())


def test_declared_suite_names_segments_and_timestamp_column() -> None:
    gen = generate(5)
    declared = yaml.safe_load(gen.suite_yaml(declare=True))["tables"]
    for t in gen.tables:
        assert declared[t.name]["segments"] == t.segment_columns
        assert declared[t.name].get("timestamp_column") == t.timestamp_column
        assert declared[t.name]["checks"] == yaml.safe_load(gen.suite_yaml())["tables"][t.name]


def _scan(run_cli, url: str, suite: Path) -> dict[str, dict]:
    done = run_cli("scan", "--db", url, "--checks", str(suite), "--json", "--sample", "0", "--out", "out")
    assert done.returncode == 1, done.stderr          # causes and controls fail
    return {f["name"]: f for f in json.loads(done.stdout)["findings"]}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_scan_finds_exactly_the_truth_on_sqlite(seed: int, generated_database, run_cli) -> None:
    gen = generated_database(seed, "sqlite")
    found = _scan(run_cli, gen.url, gen.suite)
    assert sorted(found) == sorted(c["name"] for c in gen.truth["checks"])
    for c in gen.truth["checks"]:
        assert found[c["name"]]["status"] == c["status"], c["name"]
        if c["type"] != "row_count":
            assert found[c["name"]]["failing"] == c["failing"], c["name"]


def test_a_scan_finds_exactly_the_truth_on_postgresql(generated_database, run_cli) -> None:
    gen = generated_database(4, "postgresql")
    found = _scan(run_cli, gen.url, gen.suite)
    for c in gen.truth["checks"]:
        assert found[c["name"]]["status"] == c["status"], c["name"]
        if c["type"] != "row_count":
            assert found[c["name"]]["failing"] == c["failing"], c["name"]


def test_the_command_writes_database_suite_and_truth(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "bench.dbgen", "--seed", "9", "--out", str(tmp_path / "g"),
                          "--rows", "100,200"], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent)
    assert "seed 9:" in out.stdout
    truth = json.loads((tmp_path / "g" / "truth.json").read_text())
    assert truth == json.loads(json.dumps(generate(9, rows=(100, 200)).truth()))
    assert yaml.safe_load((tmp_path / "g" / "suite.yaml").read_text())["tables"]
