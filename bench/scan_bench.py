"""Scan speed: watchdog against the hand-written limit, Great Expectations and Soda Core, in one run.

For each size and backend the tools run interleaved (the order rotates every repetition), each as a
fresh process: wall time and peak RSS per run, medians with min and max. One untimed warm-up run of
each tool comes first. Every run's counts are compared with the planted truth, so a tool that skipped
work would show. One extra in-process watchdog scan counts and times the statements it issued.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import datagen
from bench.common import BENCH, GX_PYTHON, ROOT, SODA_PYTHON, WATCHDOG_PYTHON, Samples, last_json_line, ratio, run_child

SUITE = BENCH / "suite.yaml"
WATCHDOG = ROOT / ".venv" / "bin" / "watchdog"

#: each tool's duplicate rule, as stated in the output
DUPLICATE_RULES = {
    "watchdog": "failing = every row of a duplicated group (also reports duplicate_values, excess_rows)",
    "limit": "every row of a duplicated group: sum(n) over GROUP BY ... HAVING count(*) > 1",
    "gx": "unexpected_count = every row of a duplicated group (GX's rule, = watchdog's failing)",
    "soda": "duplicate_count = rows beyond the first of each group (valid - distinct; = watchdog's excess_rows)",
}


@dataclass
class Tool:
    name: str
    label: str
    command: Any  # (backend, target) -> argv
    backends: tuple[str, ...] = ("sqlite", "postgresql")
    peer: bool = False


def _targets(backend: str, rows: int, data_dir: Path, pg_admin: str) -> dict[str, str]:
    if backend == "sqlite":
        path = str(datagen.sqlite_path(data_dir, rows))
        return {"watchdog": f"sqlite:///{path}", "raw": path, "gx": path}
    url = datagen.pg_url(pg_admin).replace("postgresql+psycopg://", "postgresql://")
    return {"watchdog": url.replace("postgresql://", "postgresql+psycopg://"), "raw": url,
            "gx": url.replace("postgresql://", "postgresql+psycopg2://")}


def tools(out_dir: Path, with_peers: bool = True) -> list[Tool]:
    def watchdog(sample: int):
        return lambda b, t: [str(WATCHDOG), "scan", "--db", t["watchdog"], "--checks", str(SUITE), "--out",
                             str(out_dir / f"wd-{b}-{sample}"), "--json", "--sample", str(sample)]

    found = [
        Tool("watchdog", "watchdog scan", watchdog(5)),
        Tool("watchdog_nosample", "watchdog scan --sample 0", watchdog(0)),
        Tool("limit", "limit (bare driver)", lambda b, t: [str(WATCHDOG_PYTHON), str(BENCH / "limit_runner.py"), b,
                                                           t["raw"]]),
    ]
    if with_peers and GX_PYTHON.exists():
        found.append(Tool("gx", "Great Expectations",
                          lambda b, t: [str(GX_PYTHON), str(BENCH / "peers" / "gx_runner.py"), b, t["gx"]], peer=True))
    if with_peers and SODA_PYTHON.exists():
        found.append(Tool("soda", "Soda Core", lambda b, t: [str(SODA_PYTHON), str(BENCH / "peers" / "soda_runner.py"),
                                                             b, t["raw"]], backends=("postgresql",), peer=True))
    return found


def counts_of(tool: str, stdout: str) -> dict[str, dict[str, int]]:
    """The figures a tool reported, keyed by watchdog's check names."""
    if tool.startswith("watchdog"):
        doc = json.loads(stdout)
        out: dict[str, dict[str, int]] = {}
        for f in doc["findings"]:
            if f["status"] == "error":
                out[f["name"]] = {"error": f["error"]}
            elif f["check"] == "row_count":
                out[f["name"]] = {"observed": f["observed"]}
            else:
                out[f["name"]] = {"failing": f["failing"], **{k: v for k, v in (f.get("details") or {}).items()
                                                               if k in ("duplicate_values", "excess_rows")}}
        return out
    return last_json_line(stdout)["counts"]


def mismatches(reported: dict[str, dict[str, Any]], truth: dict[str, dict[str, int]]) -> list[str]:
    """Every figure a tool reported that differs from the truth, and every check it did not report."""
    bad = []
    for name, facts in truth.items():
        got = reported.get(name)
        if got is None:
            bad.append(f"{name}: not reported")
            continue
        if "error" in got:
            bad.append(f"{name}: error {got['error'][:120]}")
            continue
        for key, value in got.items():
            if key in facts and facts[key] != value:
                bad.append(f"{name}.{key}: {value} (truth {facts[key]})")
        if not set(got) & set(facts):
            bad.append(f"{name}: reported {got}, none of {sorted(facts)}")
    return bad


@dataclass
class Cell:
    """Measurements of one tool on one (size, backend)."""

    wall: Samples = field(default_factory=Samples)
    rss: Samples = field(default_factory=Samples)
    failures: list[str] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)
    reps_planned: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"wall_s": self.wall.summary(3), "peak_rss_mb": self.rss.summary(1), "count_mismatches":
                sorted(set(self.failures)), "reps": self.reps_planned, "counts": self.counts}


def _measure(tool: Tool, backend: str, targets: dict[str, str], truth: dict, cell: Cell, *, timed: bool,
             log: Any) -> float | None:
    run = run_child(tool.command(backend, targets), cwd=ROOT)
    if run.timed_out or run.returncode not in (0, 1):  # watchdog exits 1: checks failed, as planted
        cell.failures.append(f"exit {run.returncode}: {(run.stderr or run.stdout).strip()[-300:]}")
        log(f"    {tool.name}: FAILED exit {run.returncode}: {(run.stderr or run.stdout).strip()[-300:]}")
        return None
    try:
        reported = counts_of(tool.name, run.stdout)
    except (ValueError, KeyError) as exc:
        cell.failures.append(f"unreadable output: {exc}")
        return None
    cell.counts = reported
    cell.failures.extend(mismatches(reported, truth))
    if timed:
        cell.wall.add(run.wall_s)
        cell.rss.add(run.peak_rss_mb)
    return run.wall_s


def bench_one(rows: int, backend: str, *, data_dir: Path, pg_admin: str, reps: int, peer_reps: int | None,
              peer_slow_s: float, with_peers: bool, log: Any) -> dict[str, Any]:
    """Interleaved repetitions of every tool on one size and backend."""
    from bench.statements import profile_scan

    truth = datagen.expected_counts(rows)
    targets = _targets(backend, rows, data_dir, pg_admin)
    with tempfile.TemporaryDirectory(prefix="wd-bench-out-") as tmp:
        active = [t for t in tools(Path(tmp), with_peers) if backend in t.backends]
        cells = {t.name: Cell() for t in active}
        notes: list[str] = []
        plan = {}
        for tool in active:  # warm-up: caches, .pyc files; also a first check of the counts
            warm = _measure(tool, backend, targets, truth, cells[tool.name], timed=False, log=log)
            plan[tool.name] = reps
            if tool.peer:
                if peer_reps is not None:
                    plan[tool.name] = min(reps, peer_reps)
                elif warm is not None and warm > peer_slow_s and reps > 3:
                    plan[tool.name] = 3
                    notes.append(f"{tool.label}: 3 repetitions instead of {reps} (its warm-up took {warm:.0f}s, "
                                 f"over {peer_slow_s:.0f}s)")
            cells[tool.name].reps_planned = plan[tool.name]
            log(f"    warm-up {tool.name}: {warm:.2f}s" if warm is not None else f"    warm-up {tool.name}: failed")
        for rep in range(reps):
            order = active[rep % len(active):] + active[:rep % len(active)]
            for tool in order:
                if rep < plan[tool.name]:
                    _measure(tool, backend, targets, truth, cells[tool.name], timed=True, log=log)
            log(f"    rep {rep + 1}/{reps}: " + ", ".join(
                f"{t.name} {cells[t.name].wall.values[-1]:.2f}s" for t in order
                if rep < plan[t.name] and cells[t.name].wall.values))
    profile = profile_scan(targets["watchdog"])
    return {"rows": rows, "backend": backend, "tools": {name: cell.to_json() for name, cell in cells.items()},
            "statements": profile, "truth": truth, "notes": notes, "ratios": _ratios(cells)}


def _ratios(cells: dict[str, Cell]) -> dict[str, float | None]:
    med = {name: cell.wall.median for name, cell in cells.items()}
    return {
        "watchdog/limit": ratio(med.get("watchdog"), med.get("limit")),
        "watchdog_nosample/limit": ratio(med.get("watchdog_nosample"), med.get("limit")),
        "gx/watchdog": ratio(med.get("gx"), med.get("watchdog")),
        "soda/watchdog": ratio(med.get("soda"), med.get("watchdog")),
    }


def run_scan_bench(sizes: list[int], *, data_dir: Path, pg_admin: str, reps: int, peer_reps: int | None,
                   peer_slow_s: float, with_peers: bool, backends: tuple[str, ...], log: Any,
                   fixed_rows: int = 0, fixed_reps: int = 3, pg_only_sizes: list[int] | None = None) -> dict[str, Any]:
    """Every size on every backend; ``fixed_rows`` (if any) first, with ``fixed_reps``: the fixed cost;
    then ``pg_only_sizes`` on PostgreSQL alone."""
    results: list[dict[str, Any]] = []
    generation: list[dict[str, Any]] = []
    plan = ([(fixed_rows, min(fixed_reps, reps))] if fixed_rows else []) + [(n, reps) for n in sizes]
    plan += [(n, reps) for n in pg_only_sizes or [] if n not in sizes]
    if "postgresql" in backends:
        datagen.create_pg_database(pg_admin)
    try:
        for rows, n_reps in plan:
            common = dict(data_dir=data_dir, pg_admin=pg_admin, reps=n_reps, peer_reps=peer_reps,
                          peer_slow_s=peer_slow_s, with_peers=with_peers, log=log)
            if "sqlite" in backends and (rows in sizes or rows == fixed_rows):
                _, took = datagen.build_sqlite(data_dir, rows)
                generation.append({"rows": rows, "backend": "sqlite",
                                   "seconds": None if took is None else round(took, 1), "reused": took is None})
                log(f"  sqlite {rows:,} rows: " + ("reused" if took is None else f"generated in {took:.1f}s"))
                results.append(bench_one(rows, "sqlite", **common))
            if "postgresql" in backends:
                took = datagen.build_postgres(pg_admin, rows)
                generation.append({"rows": rows, "backend": "postgresql", "seconds": round(took, 1), "reused": False})
                log(f"  postgresql {rows:,} rows: generated in {took:.1f}s")
                results.append(bench_one(rows, "postgresql", **common))
    finally:
        if "postgresql" in backends:
            datagen.drop_pg_database(pg_admin)
    return {"runs": results, "generation": generation, "duplicate_rules": DUPLICATE_RULES, "fixed_rows": fixed_rows,
            "suite": SUITE.read_text(encoding="utf-8")}
