"""bench/gen_accuracy.py: the diagnosis measured against the generator's planted causes (a real scan per seed)."""

from __future__ import annotations

from bench.dbgen import generate
from bench.gen_accuracy import compare, run, summarize


def test_a_measured_run_compares_every_failing_check_with_its_truth() -> None:
    result = run([3], ["declared"], (300, 1500), "sqlite", "", 120, process=True)     # `watchdog scan --json`
    rows = result["modes"]["declared"]["checks"]
    truth = generate(3).truth()
    failing = [c["name"] for c in truth["checks"] if c["status"] == "fail"]
    assert sorted(r["check"] for r in rows) == sorted(failing)
    assert all(r["diagnosed"] and not r["error"] for r in rows)
    summary = result["modes"]["declared"]["summary"]
    planted = [c for c in truth["checks"] if c.get("segment") and c["status"] == "fail"]
    assert summary["planted_segments"] == len(planted)
    # seed 3 plants clear causes (lift >= 2, most failing rows in the segment): the diagnosis names each on top
    assert summary["top_segment_share"] == 1.0 and summary["exact_counts_share"] == 1.0
    assert summary["onset_exact_share"] == 1.0
    assert summary["false_segments_per_100"] == 0.0


def test_the_summary_counts_misses_and_false_segments() -> None:
    truth = generate(5).truth()
    doc = {"findings": []}
    for c in truth["checks"]:
        d = {"segments": []} if c["role"] == "cause" else {"segments": [{"column": "x", "value": "y", "failing": 1,
                                                                         "rows": 2}]}
        doc["findings"].append({"name": c["name"], "diagnosis": d})
    s = summarize(compare(truth, doc, 5))
    causes = [c for c in truth["checks"] if c.get("segment") and c["status"] == "fail"]
    uniform = [c for c in truth["checks"]
               if c["status"] == "fail" and (c["role"] == "control" or c["kind"] == "window")]
    assert s["planted_segments"] == len(causes) and s["top_segment_share"] == (0.0 if causes else None)
    assert s["missed_share"] == (1.0 if causes else None)
    controls = [c for c in uniform if c["role"] == "control"]          # claimed a segment; the window causes did not
    assert s["uniform_checks_diagnosed"] == len(uniform) and s["false_segment_checks"] == len(controls)
    assert s["false_segments_per_100"] == round(100 * len(controls) / len(uniform), 2)
