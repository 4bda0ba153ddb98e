"""Write a suggested suite as YAML: one check per entry, each under a comment with its evidence.

Checks that failed on today's data are written commented out, with their measured failure. A table with
suggested options (``null_values``, ``trim_blanks``) is written as a mapping: the options, each under its
evidence, then ``checks:``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from watchdog.profile.null_values import TableSetting
from watchdog.profile.rules import Candidate

SHORT_FORM = {"not_null", "unique", "accepted_values", "range", "pattern", "foreign_key"}


def _scalar(value: Any) -> str:
    return yaml.safe_dump([value], default_flow_style=True, width=100_000, allow_unicode=True).strip()[1:-1]


def _entry(candidate: Candidate) -> str:
    options = dict(candidate.options)
    if candidate.kind in SHORT_FORM and list(options) == ["column"]:
        body: Any = options["column"]
    else:
        body = options
    if isinstance(body, dict):
        text = "{" + ", ".join(f"{_scalar(k)}: {_scalar(v)}" for k, v in body.items()) + "}"
    else:
        text = _scalar(body)
    text = f"{_scalar(candidate.kind)}: {text}"
    return "- " + text


def render_suite(candidates: list[Candidate], *, header: list[str], verified: bool = True,
                 settings: Mapping[str, TableSetting] | None = None) -> str:
    """The suite text; with ``verified``, failing candidates are commented out with their failure. ``settings``:
    the table options to write above each table's checks."""
    lines = [f"# {h}" if h else "#" for h in header]
    lines.append("tables:")
    tables: dict[str, list[Candidate]] = {}
    for c in candidates:
        tables.setdefault(c.table, []).append(c)
    for table, entries in tables.items():
        lines.append(f"  {_scalar(table)}:")
        setting = (settings or {}).get(table)
        indent = "    "
        if setting is not None and setting.options:
            lines += [f"    # {line}" for line in setting.evidence]
            lines += [f"    {_scalar(k)}: {_scalar(v)}" for k, v in setting.options.items()]
            lines.append("    checks:")
            indent = "      "
        for c in entries:
            failed = verified and c.status in ("fail", "warn")
            lines.append(f"{indent}# {c.evidence}")
            if failed:
                lines.append(f"{indent}# FAILS on today's data: {c.failure}; commented out, review before enabling")
                lines.append(f"{indent}# " + _entry(c))
            else:
                lines.append(indent + _entry(c))
    return "\n".join(lines) + "\n"
