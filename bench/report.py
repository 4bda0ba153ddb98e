"""Plain-text tables of a benchmark run (pipe tables: they paste into Markdown as they are)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.common import fmt_ratio, fmt_s

LABELS = {"watchdog": "watchdog scan", "watchdog_nosample": "watchdog scan --sample 0", "limit": "limit (bare driver)",
          "gx": "Great Expectations", "soda": "Soda Core"}
DB = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}


def table(headers: list[str], rows: list[list[Any]]) -> str:
    cells = [[str(c) for c in headers]] + [[("–" if c is None else str(c)) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + " |"  # noqa: E731
    return "\n".join([line(cells[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, cells[1:])])


def _mb(summary: dict[str, Any]) -> str:
    return f"{summary['median']:.0f}" if summary.get("n") else "–"


def scan_tables(scan: dict[str, Any]) -> str:
    runs = scan["runs"]
    timing = []
    for run in runs:
        for name, cell in run["tools"].items():
            counts = "ok" if not cell["count_mismatches"] else f"{len(cell['count_mismatches'])} WRONG"
            timing.append([f"{run['rows']:,}", DB[run["backend"]], LABELS[name], fmt_s(cell["wall_s"]),
                           cell["wall_s"].get("n", 0), _mb(cell["peak_rss_mb"]), counts])
    ratios = []
    for run in runs:
        r, st = run["ratios"], run["statements"]
        kinds = st["by_kind"]
        sample_s = kinds.get("sample", {}).get("seconds", 0.0)
        ratios.append([f"{run['rows']:,}", DB[run["backend"]], fmt_ratio(r["watchdog/limit"]),
                       fmt_ratio(r["watchdog_nosample/limit"]), fmt_ratio(r["gx/watchdog"]),
                       fmt_ratio(r["soda/watchdog"]),
                       f"{st['statements']} = " + " + ".join(
                           f"{kinds[k]['count']} {k}"
                           for k in ("batch", "unique", "foreign_key", "sample") if k in kinds),
                       f"{sample_s:.2f} of {st['scan_seconds']:.2f}"])
    parts = ["Scan speed: wall seconds per whole process, median (min–max); peak RSS of that process",
             table(["rows/table", "db", "tool", "wall s", "reps", "peak RSS MB", "counts"], timing), "",
             "Ratios of medians (same run); statements watchdog issued (in-process count, 11 checks on 2 tables)",
             table(["rows/table", "db", "watchdog/limit", "--sample 0/limit", "GX/watchdog", "Soda/watchdog",
                    "statements", "sample-query s of scan s"], ratios)]
    parts += ["", rss_table(runs), "", counts_table(scan), ""]
    parts += [f"  duplicate rule, {LABELS[k]}: {v}" for k, v in scan["duplicate_rules"].items()]
    notes = [n for run in runs for n in run["notes"]]
    if notes:
        parts += ["", *[f"  note: {n}" for n in notes]]
    return "\n".join(parts)


def rss_table(runs: list[dict[str, Any]]) -> str:
    rows = []
    for backend in DB:
        mine = sorted((r for r in runs if r["backend"] == backend), key=lambda r: r["rows"])
        if len(mine) < 1:
            continue
        big = [r for r in mine if r["rows"] >= 100_000] or mine
        figures = [(r["rows"], r["tools"]["watchdog"]["peak_rss_mb"].get("median")) for r in mine]
        first, last = (big[0]["tools"]["watchdog"]["peak_rss_mb"].get("median"),
                       big[-1]["tools"]["watchdog"]["peak_rss_mb"].get("median"))
        growth = last / first if len(big) > 1 and first and last else None
        rows.append([DB[backend], " → ".join(f"{n:,}: {mb:.0f} MB" for n, mb in figures if mb is not None),
                     fmt_ratio(growth)])
    return ("watchdog peak RSS as the tables grow\n"
            + table(["db", "peak RSS (median)", "largest/smallest from 100k up"], rows))


SHORT = {"failing": "", "observed": "", "duplicate_values": "dup values ", "excess_rows": "excess "}


def _figures(facts: dict[str, Any], keys: list[str]) -> str:
    return "; ".join(f"{SHORT[k]}{facts[k]:,}" if isinstance(facts[k], int) else f"{k} {facts[k]}" for k in keys
                     if k in facts)


def counts_table(scan: dict[str, Any]) -> str:
    """What each tool reported on the largest PostgreSQL run (else the largest run), against the truth."""
    runs = scan["runs"]
    pg = [r for r in runs if r["backend"] == "postgresql"]
    run = max(pg or runs, key=lambda r: r["rows"])
    shown_tools = [t for t in run["tools"] if t != "watchdog_nosample"]
    headers = ["check", "truth"] + [LABELS[t] for t in shown_tools]
    rows = []
    for name, facts in run["truth"].items():
        keys = list(facts)
        row = [name, _figures(facts, keys)]
        for tool in shown_tools:
            got = run["tools"][tool]["counts"].get(name, {})
            row.append(got.get("error", "")[:40] or _figures(got, keys) or "–")
        rows.append(row)
    all_ok = all(not c["count_mismatches"] for r in runs for c in r["tools"].values())
    verdict = ("every tool reported the planted counts in every run, both databases, every size" if all_ok
               else "MISMATCHES: " + "; ".join(f"{r['rows']:,}/{r['backend']}/{t}: {c['count_mismatches'][:3]}"
                                               for r in runs for t, c in r["tools"].items() if c["count_mismatches"]))
    return (f"Counts on {run['rows']:,} rows/table, {DB[run['backend']]} ({verdict})\n" + table(headers, rows))


def targets(scan: dict[str, Any]) -> str:
    runs = scan["runs"]
    lines = []
    for run in runs:
        r = run["ratios"]
        where = f"{run['rows']:,} {DB[run['backend']]}"
        if run["rows"] >= 1_000_000 and r["watchdog/limit"] is not None:
            lines.append(f"  within 1.3x of the limit ({where}): {fmt_ratio(r['watchdog/limit'])} — "
                         + ("met" if r["watchdog/limit"] <= 1.3 else "NOT met"))
        for peer, factor in (("gx", 2.0), ("soda", 1.0)):  # the goals: 2x faster than GX, faster than Soda
            value = r[f"{peer}/watchdog"]
            if value is not None:
                goal = "at least 2x faster" if factor > 1 else "faster"
                lines.append(f"  {goal} than {LABELS[peer]} ({where}): {LABELS[peer]} takes {fmt_ratio(value)} "
                             f"watchdog's time — " + ("met" if value >= factor and value > 1 else "NOT met"))
    fixed = scan.get("fixed_rows") or 0
    for backend in DB:
        mine = sorted((r for r in runs if r["backend"] == backend and r["rows"] != fixed), key=lambda r: r["rows"])
        if len(mine) > 1:
            a, b = (m["tools"]["watchdog"]["peak_rss_mb"].get("median") for m in (mine[0], mine[-1]))
            if a and b:
                lines.append(f"  watchdog peak RSS flat as rows grow {mine[-1]['rows'] // mine[0]['rows']}x "
                             f"({DB[backend]}): {a:.0f} → {b:.0f} MB ({b / a:.2f}x) — "
                             + ("met" if b / a <= 1.2 else "NOT met"))
    counts = {r["statements"]["statements"] - r["statements"]["by_kind"].get("sample", {}).get("count", 0)
              for r in runs}
    samples = {r["statements"]["by_kind"].get("sample", {}).get("count", 0) for r in runs}
    lines.append(f"  statements per scan besides samples: {sorted(counts)} "
                 "(tables 2 + unique 1 + foreign keys 1 = 4) — " + ("met" if counts == {4} else "NOT met"))
    lines.append(f"  sample statements per scan: {sorted(samples)} (at most one per table: 2) — "
                 + ("met" if samples <= {0, 1, 2} else "NOT met"))
    return "Targets (reported, not enforced)\n" + "\n".join(lines)


def verify_table(v: dict[str, Any]) -> str:
    rows = [[v["cases"], f"{v['correct']}", v["false_alarms"], v["wrong"], v["wrong_flagged"],
             f"{100 * v['wrong_flagged_share']:.1f}%", v["wrong_flagged_for_expected_items"],
             f"{v['ms_per_report']['median']:.2f} ({v['ms_per_report']['min']:.2f}–{v['ms_per_report']['max']:.2f})",
             f"{v['slowest_report']['ms']:.1f} ({v['slowest_report']['id']})"]]
    out = ("Report truthfulness: verify_fn on tests/verify_corpus (targets: 0 false alarms, ≥95% of wrong reports "
           "flagged)\n" + table(["cases", "correct", "false alarms", "wrong", "flagged", "share flagged",
                                "flagged for the expected item", "ms/report median (min–max)", "slowest ms"], rows))
    real = v.get("real")
    if real and real.get("drafts"):
        out += ("\n\nReal drafts of local models (tests/verify_corpus/real.yaml)\n"
                + table(["drafts", "models", "correct drafts", "cut off", "labelled items", "detected",
                         "false alarms", "ms/draft median"],
                        [[real["drafts"], ", ".join(real["models"]), real["correct_drafts"], real["cut_off_drafts"],
                          real["labelled_items"], real["detected"], real["false_alarms"],
                          real["ms_per_draft"]["median"]]]))
    return out


def _roles(tokens: dict[str, Any] | None) -> str:
    if not tokens:
        return "–"
    return "; ".join(f"{role} {t.get('calls', 0)} calls {t.get('input', 0):,} in/{t.get('output', 0):,} out"
                     for role, t in tokens.items())


def llm_table(llm: dict[str, Any]) -> str:
    stub = llm["stub"]
    rows = []
    for i, run in enumerate(stub["runs"]):
        if "error" in run:
            rows.append([f"stub #{i + 1}", f"FAILED: {run['error'][-80:]}", "", "", "", "", "", ""])
            continue
        rows.append([f"stub #{i + 1}", _roles(run["tokens"]), f"{run['drafts_verified']} ({run['drafts_flagged']})",
                     run["verify_passed_on_draft"], run["outcome"], f"{run['wall_s']:.2f}", f"{run['model_s']:.2f}",
                     f"{run['outside_model_s']:.2f}"])
    real = llm.get("real")
    if real and "error" not in real:
        rows.append(["real: " + str((real.get("models") or {}).get("specialist")), _roles(real["tokens"]),
                     f"{real['drafts_verified']} ({real['drafts_flagged']})", real["verify_passed_on_draft"],
                     real["outcome"] + (" (converged)" if real["converged"] else " (did not converge)"),
                     f"{real['wall_s']:.1f}", f"{real['model_s']:.1f}", f"{real['outside_model_s']:.1f}"])
    prep = stub["prepared_drafts"]
    head = (f"LLM cost: the demo audit with --llm (stub: first draft says {prep['changed']} = {prep['written']}, "
            f"true {prep['true_failing']}; then the correct report; tokens are the stub's word counts)")
    foot = (f"  scan without --llm: {stub['scan_without_llm_s']:.2f}s; median --llm run {stub['median_wall_s']}s, "
            f"of which outside the model {stub['median_outside_model_s']}s (LLM machinery outside the model: "
            f"{stub['median_llm_overhead_s']}s)")
    if real is None:
        foot += "\n  real model: not run (set OPENAI_BASE_URL and/or OPENAI_API_KEY to measure one)"
    elif "error" in real:
        foot += f"\n  real model: FAILED: {real['error'][-300:]}"
    return "\n".join([head, table(["run", "calls and tokens per role", "drafts (flagged)", "verify passed on draft",
                                   "outcome", "wall s", "model s", "outside model s"], rows), foot])


def scheduler_table(s: dict[str, Any]) -> str:
    idle = s["idle"]
    rss = idle.get("idle_rss_mb", {})
    rows = [[s["audits"], s["first_start_s"], s["restart_median_s"], s["one_audit_restart_median_s"],
             f"{idle.get('idle_s')}", f"{idle.get('idle_cpu_percent')}% ({idle.get('idle_cpu_s')} s CPU)",
             f"{rss.get('min')} / {rss.get('median')} / {rss.get('max')}", s["runs_started_while_idle"]]]
    text = ("Scheduler: watchdog serve (start-up = spawn until the 'serving N scheduled audit(s)' log line)\n"
            + table(["audits", "first start s", "restart s (median)", "1 audit: restart s", "idle s", "idle CPU",
                     "idle RSS MB min/median/max", "runs while idle"], rows))
    if s["errors"]:
        text += "\n  errors: " + "; ".join(s["errors"])
    return text


def diagnostics_table(d: dict[str, Any]) -> str:
    rows = [[x["what"], f"{x['wall_s']:.2f}", f"{x.get('min_s', x['wall_s']):.2f}",
             f"{x['cpu_s']:.3f}" if "cpu_s" in x else "–", f"{x['peak_rss_mb']:.0f}",
             "" if x["ok"] else "FAILED"] for x in d["startup"]]
    reps = d["startup"][0].get("reps", 3) if d["startup"] else 0
    text = (f"Diagnostics: fixed cost of a fresh process (median and min of {reps}, interleaved; CPU: user + "
            "system of the process and its children, median)\n"
            + table(["process", "wall s", "min s", "CPU s", "peak RSS MB", ""], rows))
    r = d.get("startup_ratios")
    if r:
        cpu = lambda key: f"; CPU {fmt_ratio(r[key])}" if r.get(key) else ""  # noqa: E731
        text += (f"\n  watchdog --version / python -c 'import sqlite3': {fmt_ratio(r['version/bare_python'])} "
                 f"(mins {fmt_ratio(r['version/bare_python_min'])}{cpu('version/bare_python_cpu')}; target 3x)"
                 f"\n  watchdog scan of a 1-row table / importing sqlglot, yaml, sqlite3: "
                 f"{fmt_ratio(r['scan_1_row/scan_imports'])} (mins {fmt_ratio(r['scan_1_row/scan_imports_min'])}"
                 f"{cpu('scan_1_row/scan_imports_cpu')}; target 1.5x)")
    rx = d.get("sqlite_regexp")
    if rx:
        secs = rx["seconds"]
        text += ("\n\nDiagnostics: SQLite REGEXP over customers.email, " + Path(rx["file"]).name
                 + f" (median of {rx['reps']}; a plain pass over the table takes {rx['plain_scan_s']:.2f}s)\n"
                 + table(["registered function", "seconds", "matches"],
                         [[k, f"{v:.2f}", rx["counts"][k]] for k, v in secs.items()])
                 + f"\n  watchdog's function / re.search: {fmt_ratio(rx['ratio'])}")
    return text


def sparse_table(runs: list[dict[str, Any]]) -> str:
    rows = []
    for run in runs:
        w, r, pr = run["wall_s"], run["ratios"], run["profile"]
        rows.append([f"{run['rows']:,}", DB[run["backend"]], fmt_s(w["watchdog"]), fmt_s(w["watchdog_nosample"]),
                     fmt_s(w["limit"]), fmt_ratio(r["watchdog/limit"]), fmt_ratio(r["watchdog/watchdog_nosample"]),
                     f"{pr['statements']} ({pr['sample_statements']} for samples)",
                     f"{pr['sample_seconds']:.3f}", f"{pr['old_sample_statements']}: {pr['old_sample_seconds']:.3f}",
                     fmt_ratio(pr["old/new_sample_seconds"]),
                     "ok" if not run["count_mismatches"] else f"{len(run['count_mismatches'])} WRONG"])
    return ("Sparse defects: 20 checks on one table, each failing on 1-3 rows (wall s median (min–max); samples: "
            "in-process seconds)\n" + table(["rows", "db", "watchdog", "--sample 0", "limit", "watchdog/limit",
                                             "samples' cost", "statements", "sample s", "old way: stmts: s",
                                             "old/new", "counts"], rows))
