"""How well the diagnosis finds planted causes, measured on generated databases (bench/dbgen.py).

For each seed: generate the database, write it to SQLite (or load it into a fresh PostgreSQL database), run
the scan with its diagnosis (the run function of ``watchdog scan``, in process; ``--process``: ``watchdog scan
--json`` in a fresh process each) and compare every failing check's diagnosis with the
generator's truth:

* **planted segments** (causes planted in one segment value): the share whose *top* reported segment is the
  planted one; named anywhere; missed (no segment claimed); a wrong top segment; whether the reported counts
  (failing rows in it, rows in it) are exact;
* **onset** (causes planted in a time window): the diagnosis's first failing timestamp against the planted
  window's start (days, and as a share of the table's time range), and whether it is exactly the first failing
  row's timestamp;
* **false segments** on the checks whose failing rows are spread uniformly over the segments (the controls,
  and the causes planted only in time): segments claimed per 100 such checks diagnosed (goal: at most 1).

Two modes: ``declared`` (the suite names the segment columns and the timestamp column as table options) and
``detected`` (the diagnosis finds its candidates itself). Results: ``bench/results/<name>.json`` with every
check's comparison, the machine and the load average.

    python -m bench.gen_accuracy --seeds 60 --name diagnosis-accuracy
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.dbgen import generate

RESULTS = Path(__file__).resolve().parent / "results"
REPO = Path(__file__).resolve().parent.parent


def _scan(url: str, suite: Path, out: Path, timeout: float, *, process: bool) -> dict[str, Any]:
    """The scan's findings.json content: ``watchdog scan --json`` in a fresh process, or the same run function
    in this one (``process=False``: no interpreter start per seed on a loaded machine)."""
    if not process:
        from watchdog.run.scan_run import run_scan

        return run_scan(url, [suite], out_dir=out, sample=0).doc.to_json_dict()
    cmd = [sys.executable, "-m", "watchdog", "scan", "--db", url, "--checks", str(suite), "--json", "--sample", "0",
           "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO)
    if done.returncode not in (0, 1, 2):
        raise RuntimeError(f"scan failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout)


def _day(text: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text)) if text else None
    except ValueError:
        return None


def compare(truth: dict[str, Any], doc: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """One row per failing check: what was planted, what the diagnosis says."""
    by_name = {f["name"]: f for f in doc["findings"]}
    rows = []
    for c in truth["checks"]:
        if c["status"] != "fail" or c["role"] not in ("cause", "control"):
            continue
        f = by_name.get(c["name"]) or {}
        d = f.get("diagnosis") or {}
        segs = d.get("segments") or []
        kind = c["kind"] if c["role"] == "cause" else "uniform"
        row: dict[str, Any] = {"seed": seed, "check": c["name"], "type": c["type"], "kind": kind,
                               "failing": c["failing"], "rows": c["rows"], "status": f.get("status"),
                               "scan_error": (f.get("error") or "")[:200] or None, "diagnosed": bool(d),
                               "error": d.get("error"), "claimed": [(s["column"], s["value"]) for s in segs]}
        planted = c.get("segment")
        if planted:
            row["planted"] = (planted["column"], planted["value"])
            row["planted_share"] = planted["share_of_failing"]
            row["planted_lift"] = round(planted["share_of_failing"] / planted["share_of_rows"], 2) \
                if planted["share_of_rows"] else None
            hit = next((s for s in segs if (s["column"], s["value"]) == row["planted"]), None)
            row["top"] = bool(segs) and (segs[0]["column"], segs[0]["value"]) == row["planted"]
            row["named"] = hit is not None
            row["exact_counts"] = hit is not None and hit["failing"] == planted["failing"] and \
                hit["rows"] == planted["rows"]
        window = c.get("window")
        onset = d.get("onset") or {}
        if window and c.get("onset"):
            first, start = _day(onset.get("first")), _day(window["start"])
            lo, hi = _day(c["onset"]["table_first"]), _day(c["onset"]["table_last"])
            row["onset_found"] = first is not None
            if first is not None and start is not None:
                row["onset_error_days"] = round(abs((first - start).total_seconds()) / 86400, 3)
                if lo is not None and hi is not None and hi > lo:
                    row["onset_error_share"] = round(abs((first - start).total_seconds())
                                                     / (hi - lo).total_seconds(), 4)
                row["onset_exact"] = onset.get("first") == c["onset"]["first"]
        rows.append(row)
    return rows


def summarize(all_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures over the checks the scan found failing (a check whose statement errored, e.g. timed out on a
    loaded machine, has no diagnosis to judge: it is counted apart)."""
    rows = [r for r in all_rows if (r.get("status") or "fail") in ("fail", "warn")]
    seg = [r for r in rows if "planted" in r]
    win = [r for r in rows if "onset_error_days" in r or "onset_found" in r]
    uniform = [r for r in rows if r["kind"] in ("uniform", "window") and r["diagnosed"] and not r["error"]]
    false = sum(len(r["claimed"]) > 0 for r in uniform)
    errs = [r["onset_error_days"] for r in win if "onset_error_days" in r]
    shares = [r["onset_error_share"] for r in win if "onset_error_share" in r]

    def share(part: int, whole: int) -> float | None:
        return round(part / whole, 4) if whole else None

    by_type = {}
    for t in sorted({r["type"] for r in seg}):
        sub = [r for r in seg if r["type"] == t]
        by_type[t] = {"planted": len(sub), "top": sum(r["top"] for r in sub),
                      "top_share": share(sum(r["top"] for r in sub), len(sub))}
    return {
        "failing_checks": len(rows), "scan_errors": len(all_rows) - len(rows),
        "diagnosed": sum(r["diagnosed"] for r in rows),
        "errors": sum(bool(r["error"]) for r in rows),
        "planted_segments": len(seg), "top_segment": sum(r["top"] for r in seg),
        "top_segment_share": share(sum(r["top"] for r in seg), len(seg)),
        "named_anywhere_share": share(sum(r["named"] for r in seg), len(seg)),
        "missed_share": share(sum(not r["claimed"] for r in seg), len(seg)),
        "wrong_top_share": share(sum(bool(r["claimed"]) and not r["top"] for r in seg), len(seg)),
        "exact_counts_share": share(sum(r["exact_counts"] for r in seg if r["named"]),
                                    sum(r["named"] for r in seg)),
        "planted_windows": len(win), "onset_found_share": share(sum(r.get("onset_found", False) for r in win),
                                                                len(win)),
        "onset_exact_share": share(sum(r.get("onset_exact", False) for r in win), len(errs)),
        "onset_error_days": {"median": round(statistics.median(errs), 3) if errs else None,
                             "p90": round(sorted(errs)[int(0.9 * (len(errs) - 1))], 3) if errs else None,
                             "max": max(errs) if errs else None},
        "onset_error_share_of_range_median": round(statistics.median(shares), 4) if shares else None,
        "uniform_checks_diagnosed": len(uniform), "false_segment_checks": false,
        "false_segments_per_100": round(100 * false / len(uniform), 2) if uniform else None,
        "by_type": by_type,
        "missed": [{k: r[k] for k in ("seed", "check", "failing", "rows", "planted_share", "planted_lift", "claimed")}
                   for r in seg if not r["top"]][:40],
        "false": [{k: r[k] for k in ("seed", "check", "kind", "failing", "claimed")} for r in uniform
                  if r["claimed"]][:40],
    }


def _pg_database(admin: str) -> tuple[str, Any]:
    import sqlalchemy as sa

    name = f"wd_genacc_{uuid.uuid4().hex[:8]}"
    engine = sa.create_engine(admin, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE {name}")
    url = sa.engine.make_url(admin).set(database=name).render_as_string(hide_password=False)

    def drop() -> None:
        with engine.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        engine.dispose()

    return url, drop


def run(seeds: list[int], modes: list[str], rows: tuple[int, int], backend: str, pg_url: str,
        timeout: float, *, process: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"modes": {}, "seconds": {}}
    for mode in modes:
        all_rows: list[dict[str, Any]] = []
        started = time.monotonic()
        for seed in seeds:
            gen = generate(seed, rows=rows)
            with tempfile.TemporaryDirectory(prefix=f"wd-genacc-{seed}-") as tmp:
                folder = Path(tmp)
                suite = folder / "suite.yaml"
                suite.write_text(gen.suite_yaml(declare=mode == "declared"), encoding="utf-8")
                if backend == "sqlite":
                    url = f"sqlite:///{gen.write_sqlite(folder / 'db.sqlite')}"
                    doc = _scan(url, suite, folder / "run", timeout, process=process)
                else:
                    url, drop = _pg_database(pg_url)
                    try:
                        gen.load(url)
                        doc = _scan(url, suite, folder / "run", timeout, process=process)
                    finally:
                        drop()
            all_rows += compare(gen.truth(), doc, seed)
        out["seconds"][mode] = round(time.monotonic() - started, 1)
        out["modes"][mode] = {"summary": summarize(all_rows), "checks": all_rows}
    return out


def _seeds(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-", 1)
        return list(range(int(lo), int(hi) + 1))
    return list(range(int(text)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.gen_accuracy", description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="60", help="N (seeds 0..N-1) or LO-HI (default 60)")
    p.add_argument("--modes", default="declared,detected")
    p.add_argument("--rows", default="300,1500", help="parent table rows LOW,HIGH (children up to 2x HIGH)")
    p.add_argument("--backend", default="sqlite", choices=["sqlite", "postgresql"])
    p.add_argument("--pg-url", default=os.environ.get("WATCHDOG_TEST_POSTGRES_URL",
                                                      "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"))
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per scan (with --process)")
    p.add_argument("--process", action="store_true", help="each scan as `watchdog scan --json` in a fresh process")
    p.add_argument("--name", default=None, help="results file bench/results/NAME.json")
    a = p.parse_args(argv)
    lo, _, hi = a.rows.partition(",")
    load_start = os.getloadavg()
    result = run(_seeds(a.seeds), a.modes.split(","), (int(lo), int(hi or lo)), a.backend, a.pg_url, a.timeout,
                 process=a.process)
    from bench.common import machine

    result.update(
        {"benchmark": "diagnosis accuracy on generated databases (bench/gen_accuracy.py)",
         "date": datetime.now().astimezone().isoformat(timespec="seconds"), "machine": machine(),
         "load_average": {"start": load_start, "end": os.getloadavg()},
         "params": {"seeds": a.seeds, "rows": a.rows, "backend": a.backend, "modes": a.modes,
                    "process": a.process}})
    name = a.name or f"diagnosis-accuracy-{a.backend}"
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(result, indent=1, default=str) + "\n", encoding="utf-8")
    for mode, res in result["modes"].items():
        s = res["summary"]
        print(f"{mode}: {s['failing_checks']} failing checks ({s['errors']} diagnosis errors, {s['scan_errors']} "
              f"planted checks that the scan could not run) in "
              f"{result['seconds'][mode]} s")
        print(f"  planted segments: {s['planted_segments']}, top segment {s['top_segment_share']}, named anywhere "
              f"{s['named_anywhere_share']}, missed {s['missed_share']}, wrong top {s['wrong_top_share']}, exact "
              f"counts {s['exact_counts_share']}")
        print(f"  planted windows: {s['planted_windows']}, onset found {s['onset_found_share']}, exact "
              f"{s['onset_exact_share']}, error days {s['onset_error_days']}, share of range "
              f"{s['onset_error_share_of_range_median']}")
        print(f"  uniform checks diagnosed: {s['uniform_checks_diagnosed']}, false segments per 100: "
              f"{s['false_segments_per_100']}")
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
