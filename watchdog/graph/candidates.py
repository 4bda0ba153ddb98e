"""``llm.causes: choose``: likely causes and fixes the program derives from a finding, for the model to choose from.

A small local model asked to write causes copies its example, its instructions or the check's rule; asked to
choose among candidates it can only answer with one of them (the JSON schema lists them as an enum, a grammar on
llama.cpp). The candidates name the finding's own table and column, follow from its kind of check, and never carry
a number (the program states every number). The summary and the priorities are still the model's own words.
"""

from __future__ import annotations

from typing import Any

__all__ = ["candidates"]

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
