"""Schema checks: ``schema`` (declared columns and types) and ``schema_changes`` (drift since the last run).

Types are compared by their generic type (SQLAlchemy's type family, see ``sandbox/catalog.py``),
so ``{id: integer, email: text}`` means the same on SQLite, PostgreSQL and MariaDB: an ``INT``,
``BIGINT`` or ``INTEGER`` column is an ``integer``; ``TEXT``, ``VARCHAR(255)`` or ``CHAR(2)`` a
``text``. Both read the catalog, not the rows. ``failing`` counts the columns in question.
"""

from __future__ import annotations

from typing import Any

from watchdog.scan.check_types.base import Check, Columns, Measurement, Metric, Severity, register
from watchdog.scan.check_types.fields import Options, option, options_class

#: declared type name -> the generic types it accepts
TYPE_NAMES: dict[str, frozenset[str]] = {}
for _names, _generic in (
    (("integer", "int", "bigint", "smallint"), {"integer"}),
    (("decimal", "numeric"), {"decimal"}),
    (("float", "double", "real"), {"float"}),
    (("number",), {"integer", "decimal", "float"}),
    (("text", "string", "varchar", "char"), {"text"}),
    (("boolean", "bool"), {"boolean"}),
    (("date",), {"date"}),
    (("datetime", "timestamp"), {"datetime"}),
    (("time",), {"time"}),
    (("interval",), {"interval"}),
    (("binary", "bytes", "blob", "bytea"), {"binary"}),
    (("json",), {"json"}),
    (("uuid",), {"uuid"}),
):
    for _name in _names:
        TYPE_NAMES[_name] = frozenset(_generic)


def accepts(declared: str, column: dict[str, str]) -> bool:
    """Does a column (from the catalog) have the declared type? MySQL's BOOLEAN is TINYINT(1): accepted."""
    allowed = TYPE_NAMES[declared.lower()]
    if column["generic"] in allowed:
        return True
    return "boolean" in allowed and column["type"].upper().replace(" ", "") in ("TINYINT(1)", "TINYINT")


def _known_types(value: dict[str, str | None]) -> dict[str, str | None]:
    for column, declared in value.items():
        if declared is not None and declared.lower() != "any" and declared.lower() not in TYPE_NAMES:
            raise ValueError(f"column {column!r}: unknown type {declared!r}; known: any, "
                             + ", ".join(sorted(TYPE_NAMES)))
    return value


@options_class
class SchemaOptions(Options):
    name: str | None = option(None, min_length=1)
    severity: Severity = "fail"
    description: str | None = None
    #: column -> declared type (None or "any": the column must exist, any type)
    columns: dict[str, str | None] = option(min_length=1, after=_known_types)
    allow_extra: bool = False


@options_class
class SchemaChangesOptions(Options):
    name: str | None = option(None, min_length=1)
    severity: Severity = "fail"
    description: str | None = None


def _find(columns: list[dict[str, str]], name: str) -> dict[str, str] | None:
    exact = [c for c in columns if c["name"] == name]
    if exact:
        return exact[0]
    folded = [c for c in columns if c["name"].lower() == name.lower()]  # PostgreSQL folds unquoted names
    return folded[0] if len(folded) == 1 else None


class _CatalogCheck(Check):
    short_form = None
    row_level = False

    def _columns(self) -> Columns:
        return Columns(self.table or "")

    def metrics(self, dialect: str) -> list[Metric]:
        return [self._columns()]

    def finding_sql(self, dialect: str) -> str | None:
        return None


@register
class Schema(_CatalogCheck):
    kind = "schema"
    Options = SchemaOptions

    def measure(self, values: dict[Metric, Any], dialect: str) -> Measurement:
        actual: list[dict[str, str]] = values[self._columns()]
        declared: dict[str, str | None] = dict(self.options.columns)
        missing, mismatched, matched = [], [], set()
        for name, want in declared.items():
            column = _find(actual, name)
            if column is None:
                missing.append(name)
                continue
            matched.add(column["name"])
            if want is not None and want.lower() != "any" and not accepts(want, column):
                mismatched.append({"column": name, "expected": want.lower(), "actual": column["generic"],
                                   "actual_type": column["type"]})
        extra = [] if self.options.allow_extra else [c["name"] for c in actual if c["name"] not in matched]
        return Measurement(
            failing=len(missing) + len(mismatched) + len(extra),
            details={"missing": missing, "wrong_type": mismatched, "extra": extra, "columns": actual})


@register
class SchemaChanges(_CatalogCheck):
    kind = "schema_changes"
    Options = SchemaChangesOptions

    def _previous(self) -> tuple[str | None, list[dict[str, str]] | None]:
        for item in reversed(self.past):
            finding = item.get("finding") or {}
            columns = (finding.get("details") or {}).get("columns")
            if finding.get("status") != "error" and isinstance(columns, list):
                return item.get("run_id"), columns
        return None, None

    def measure(self, values: dict[Metric, Any], dialect: str) -> Measurement:
        actual: list[dict[str, str]] = values[self._columns()]
        run_id, before = self._previous()
        if before is None:
            return Measurement(failing=0,
                               details={"previous_run": None, "added": [], "removed": [], "type_changed": [],
                                        "columns": actual, "note": "no previous run to compare with"})
        old = {c["name"]: c for c in before}
        new = {c["name"]: c for c in actual}
        added = [n for n in new if n not in old]
        removed = [n for n in old if n not in new]
        changed = [{"column": n, "old": old[n]["generic"], "new": new[n]["generic"], "old_type": old[n]["type"],
                    "new_type": new[n]["type"]}
                   for n in new if n in old and old[n]["generic"] != new[n]["generic"]]
        return Measurement(failing=len(added) + len(removed) + len(changed),
                           details={"previous_run": run_id, "added": added, "removed": removed,
                                    "type_changed": changed, "columns": actual})
