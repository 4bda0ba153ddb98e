"""``llm.causes: choose``: likely causes and fixes the program derives from a finding, for the model to choose from.

A small local model asked to write causes copies its example, its instructions or the check's rule; asked to
choose among candidates it can only answer with one of them (the JSON schema lists them as an enum, a grammar on
llama.cpp). The candidates name the finding's own table and column, follow from its kind of check, and never carry
a number (the program states every number). The summary and the priorities are chosen the same way
(:func:`summary_candidates`, :func:`priority_candidates`): a 270M model asked for a summary in its own words copies
the prompt or says one sentence again and again; asked to choose, it decides only what matters most.
"""

from __future__ import annotations

from typing import Any

__all__ = ["candidates", "priority_candidates", "summary_candidates"]

# per kind of check: (causes, fixes); {t} the table, {c} the column(s), {p} the referenced table
_BY_CHECK: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "not_null": (("Rows reach {t} without a {c}: the form or import that writes {t} leaves {c} empty.",
                  "{c} is optional where {t} rows are created, but this check requires it."),
                 ("Backfill the missing {t}.{c} values from their source, then add NOT NULL to {t}.{c}.",
                  "Make {c} a required field in the form or import that writes {t}.")),
    "unique": (("The same {c} is written twice for different {t} rows (a double submit or a re-run import).",
                "The import into {t} inserts rows without looking for an existing {c}."),
               ("Merge the duplicated {t} rows, then add a UNIQUE constraint on {t}.{c}.",
                "Make the load of {t} an upsert keyed on {c} instead of a plain insert.")),
    "pattern": (("{c} values in {t} are typed by hand and never validated.",
                 "An import writes {t}.{c} in another format than the rest of the table."),
                ("Validate {c} where {t} rows are entered, and reject malformed values.",
                 "Correct the malformed {t}.{c} values and add a CHECK constraint for the format.")),
    "accepted_values": (("A new {c} value was introduced upstream that the list of accepted values does not have yet.",
                         "{t}.{c} is free text at the source, so spellings and cases vary."),
                        ("Map the unexpected {t}.{c} values to accepted ones at the source.",
                         "If the new {c} value is legitimate, add it to the accepted values of the check.")),
    "range": (("{t}.{c} is entered in another unit or with a typo at the source.",
               "Placeholder values are stored in {t}.{c} when the real value is unknown."),
              ("Correct the out-of-range {t}.{c} values at their source.",
               "Add a CHECK constraint on {t}.{c} so that out-of-range values are refused.")),
    "foreign_key": (("{t} rows point to {p} rows that were deleted.",
                     "{t} rows are loaded before the {p} rows they refer to."),
                    ("Load {p} before {t}, or reject {t} rows whose {c} has no match in {p}.",
                     "Add a FOREIGN KEY from {t}.{c} to {p} once the orphaned rows are fixed.")),
    "freshness": (("The job that loads {t} has stopped or is failing.",
                   "New {t} rows are no longer written at the source."),
                  ("Check the schedule and the logs of the job that loads {t}.",
                   "Alert when {t} receives no new rows for longer than the check allows.")),
    "row_count": (("The last load of {t} was partial or failed.",
                   "Rows were deleted from {t}, or a filter upstream drops them."),
                  ("Re-run the load of {t} and compare its row count with the source.",
                   "Alert on the row count of {t} after every load.")),
}
_QUERY = (("A process writes the rows that the query of {n} returns; the sample rows show which.",
           "The rule behind {n} is not enforced where these rows are written."),
          ("Find the process that writes the rows {n} returns, and correct it.",
           "Enforce the rule behind {n} in the database or the pipeline that writes the rows."))
_ERROR: tuple[tuple[str, ...], tuple[str, ...]] = (
    ("The check {n} could not run, so the state of its data is unknown.",),
    ("Fix the check {n} or the database access it needs, then scan again.",))


def candidates(finding: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(causes, fixes) for one problem finding: diagnosis facts first when the finding has them, then the ones
    that follow from its kind of check."""
    name = str(finding.get("name") or "")
    table = str(finding.get("table") or "")
    columns = finding.get("columns") or ([finding["column"]] if finding.get("column") else [])
    params = finding.get("params") or {}
    if finding.get("status") == "error":
        causes, fixes = _ERROR
    else:
        causes, fixes = _BY_CHECK.get(str(finding.get("check")), _QUERY) if table else _QUERY
    ref = str(params.get("references") or params.get("to") or "the referenced table").split(".")[0]
    fill = {"t": table or name, "c": " and ".join(map(str, columns)) or "its values", "p": ref, "n": name}
    facts = _facts(finding)
    return facts + [x.format(**fill) for x in causes], [x.format(**fill) for x in fixes]


def _facts(finding: dict[str, Any]) -> list[str]:
    """Causes the diagnosis computed for this finding (where and since when its failing rows concentrate, its
    wrong values), as sentences without counts, when it was diagnosed."""
    from watchdog.graph.prompt_diagnosis import cause_facts

    # rows shared with another check are not a cause: a handful shared out of many would read as "the same rows"
    facts = [f for f in cause_facts(finding) if not f.startswith("the same rows also fail")]
    return [f"{fact[0].upper()}{fact[1:]}: what writes these rows is the likely source." for fact in facts[:3]]


#: what a failing check of each kind found, in a few words (no number)
_WHAT = {"not_null": "missing values", "unique": "duplicated values", "pattern": "malformed values",
         "accepted_values": "unexpected values", "range": "out-of-range values", "foreign_key": "orphaned rows",
         "freshness": "stale data", "row_count": "a row count outside its expected range"}
#: at most this many candidates per part (each one is a branch of the answer's grammar)
MOST_CANDIDATES = 8


def _problems(findings: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in findings.get("findings", []) if f.get("status") in ("fail", "warn", "error")]


def _where(f: dict[str, Any]) -> str:
    columns = f.get("columns") or ([f["column"]] if f.get("column") else [])
    table = str(f.get("table") or "")
    if table and columns:
        return " and ".join(f"{table}.{c}" for c in columns)
    return table or str(f.get("name") or "")


def _what(f: dict[str, Any]) -> str:
    return _WHAT.get(str(f.get("check")), "rows that break its rule") if f.get("table") else "rows that break its rule"


def _urgent(f: dict[str, Any]) -> str:
    if f.get("status") == "error":
        return f"The most urgent problem is that the check {f.get('name')} could not run."
    return f"The most urgent problem is {_what(f)} in {_where(f)}."


def summary_candidates(findings: dict[str, Any]) -> list[str]:
    """Summaries for the model to choose from: the tables with problems, then which problem is the most urgent
    (one candidate per problem check, in the findings' order). Empty when nothing failed, warned or errored."""
    problems = _problems(findings)
    tables = list(dict.fromkeys(str(f.get("table") or "") for f in problems if f.get("table")))
    if not problems:
        return []
    if tables:
        listed = tables[0] if len(tables) == 1 else ", ".join(tables[:-1]) + " and " + tables[-1]
        overview = f"The scan found problems in {listed}."
    else:
        overview = "The scan found problems."
    return list(dict.fromkeys(f"{overview} {_urgent(f)}" for f in problems[:MOST_CANDIDATES]))


def priority_candidates(findings: dict[str, Any]) -> list[str]:
    """Priorities for the model to choose from: per problem check, what it found and the fix that follows from
    its kind of check."""
    out = []
    for f in _problems(findings)[:MOST_CANDIDATES]:
        _causes, fixes = candidates(f)
        first = fixes[0] if fixes else ""
        out.append(f"{f.get('name')}: {first}" if f.get("status") == "error" else
                   f"{_where(f)} ({_what(f)}): {first}")
    return list(dict.fromkeys(out))
