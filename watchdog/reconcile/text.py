"""A diff result in a few plain lines (the terminal, and a reconcile finding's description)."""

from __future__ import annotations

from typing import Any

from watchdog.reconcile.diff import DiffResult


def _keys(rows: list[dict[str, Any]], key: list[str]) -> str:
    shown = [", ".join(f"{k}={row.get(k)!r}" for k in key) if len(key) > 1 else repr(row.get(key[0]))
             for row in rows]
    return "; ".join(shown)


def summary(result: DiffResult) -> str:
    target = result.target_table if result.target_table != result.table else ""
    head = f"{result.table}{' -> ' + target if target else ''}: "
    lines = []
    if result.identical:
        lines.append(f"{head}identical ({result.source_rows:,} rows)")
    elif result.wholes_match is not None:
        lines.append(f"{head}different (source {result.source_rows:,} rows, target {result.target_rows:,})")
    else:
        parts = [f"{result.missing_in_target or 0:,} missing in target",
                 f"{result.missing_in_source or 0:,} missing in source", f"{result.changed or 0:,} changed"]
        if result.duplicate_keys:
            parts.append(f"{result.duplicate_keys:,} duplicated keys")
        lines.append(f"{head}{', '.join(parts)} (source {result.source_rows:,} rows, target "
                     f"{result.target_rows:,})")
    if result.key:
        for kind in ("missing_in_target", "missing_in_source"):
            rows = result.samples.get(kind) or []
            if rows:
                lines.append(f"  {kind.replace('_', ' ')}: {_keys(rows, result.key)}")
        for row in result.samples.get("changed") or []:
            if "column" in row:
                lines.append(f"  changed {_keys([row], result.key)}: {row['column']} {row['source']!r} -> "
                             f"{row['target']!r}")
        for row in result.samples.get("duplicate_keys") or []:
            lines.append(f"  duplicated key {_keys([row], result.key)}: {row['source_rows']} row(s) on the source, "
                         f"{row['target_rows']} on the target")
    if result.note:
        lines.append(f"  note: {result.note}")
    if result.only_in_source or result.only_in_target:
        lines.append(f"  not compared: only in source {result.only_in_source or '-'}, only in target "
                     f"{result.only_in_target or '-'}")
    lines.append(f"  {result.statements['source']} + {result.statements['target']} statements, "
                 f"{result.seconds:.2f} s")
    return "\n".join(lines)
