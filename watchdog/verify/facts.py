"""A finding's facts: the figures a claimed number may equal, and the facts in words for messages.

:meth:`Facts.values` says which facts a kind of claim allows: ``failing`` (also the duplicate figures
and ``max_count``), ``total`` (or ``observed``), ``dup`` (``details.duplicate_values``), ``excess``
(``details.excess_rows``), ``generic`` (any count, parameter or derived figure: ``total - failing``,
the size of an accepted-values list, a ``row_count``'s distance to a bound), ``rate`` (in percent, also
``1 - rate``, ``max_rate`` and a duplicate figure over total) and ``age`` (freshness).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from watchdog.findings import Finding
from watchdog.report.escape import duration as format_duration
from watchdog.report.escape import percent as format_percent
from watchdog.verify.numbers import format_count, parse_duration

if TYPE_CHECKING:
    from watchdog.verify.locate import IndexedFinding

__all__ = ["Facts", "actual_label", "actual_text", "as_float", "counts_text", "describe"]


def as_float(value: Any) -> float | None:
    """A number from a fact or parameter (not a bool), else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


@dataclass
class Facts:
    """The figures of one finding that a claimed number may equal."""

    failing: float | None
    total: float | None
    observed: float | None
    dup: float | None
    excess: float | None
    rate: float | None
    params: list[float]
    max_rate: float | None
    max_age: float | None
    derived: list[float]
    check: str = ""
    list_sizes: list[float] = field(default_factory=list)
    #: an ``anomaly:``'s value, expected value and band (a rate as a fraction when ``anomaly_rate``)
    anomaly: list[float] = field(default_factory=list)
    anomaly_rate: bool = False

    @classmethod
    def of(cls, f: Finding) -> Facts:
        p = f.params or {}
        params = [v for v in (as_float(p.get("max_count")), as_float(p.get("min")), as_float(p.get("max")))
                  if v is not None]
        list_sizes = [float(len(p["values"]))] if isinstance(p.get("values"), list) else []
        max_age = parse_duration(p["max_age"]) if p.get("max_age") is not None else None
        derived: list[float] = []
        failing, total, observed = as_float(f.failing), as_float(f.total), as_float(f.observed)
        if failing is not None and total is not None:
            derived.append(total - failing)
        if f.check == "row_count" and observed is not None:
            for bound in (as_float(p.get("min")), as_float(p.get("max"))):
                if bound is not None:
                    derived.append(abs(observed - bound))
        rate = f.rate
        if rate is None and failing is not None and total:
            rate = failing / total
        a = f.details.get("anomaly")
        band = [v for v in (as_float(a.get(k)) for k in ("value", "expected", "low", "high")) if v is not None] \
            if isinstance(a, dict) else []
        return cls(failing, total, observed, as_float(f.details.get("duplicate_values")),
                   as_float(f.details.get("excess_rows")), rate, params, as_float(p.get("max_rate")), max_age, derived,
                   f.check, list_sizes, band, isinstance(a, dict) and a.get("metric") == "rate")

    def values(self, kind: str) -> list[float]:
        """The figures a claim of ``kind`` may equal. Parameters (thresholds) are never among them: a number
        worded as a threshold is a claim of kind ``threshold`` (see :func:`~watchdog.verify.consistency.compare`)."""
        rule = _VALUE_RULES.get(kind)
        return rule(self) if rule is not None else []

    def _failing_strict(self) -> list[float]:
        return [self.failing] if self.failing is not None else self._generic()

    def _failing(self) -> list[float]:
        if self.failing is None:
            return self._generic()
        out = [v for v in (self.failing, self.dup, self.excess) if v is not None]
        if self.total is not None and self.total == self.failing:
            out.append(self.total)
        return out

    def _dup(self) -> list[float]:
        return [self.dup] if self.dup is not None else self._failing()

    def _excess(self) -> list[float]:
        return [self.excess] if self.excess is not None else self._failing()

    def _group_rows(self) -> list[float]:
        """"10 rows in all" of a unique check: the rows of the duplicated groups (or, read so, the table's rows)."""
        if self.failing is None:
            return self._generic()
        return [self.failing] + ([self.total] if self.total is not None else [])

    def _total(self) -> list[float]:
        out = [v for v in (self.total, self.observed if self.check == "row_count" else None) if v is not None]
        if out and self.failing is not None and self.failing == self.total:
            out.append(self.failing)
        return out

    def _passing(self) -> list[float]:
        """"1,248 of 1,250 books have an ISBN": the rows that pass (or all of them)."""
        if self.failing is None or self.total is None:
            return self._generic()
        return [self.total - self.failing, self.total]

    def _generic(self) -> list[float]:
        counts = [v for v in (self.failing, self.total, self.observed, self.dup, self.excess) if v is not None]
        return counts + self.list_sizes + self.derived + ([] if self.anomaly_rate else self.anomaly)

    def _rate(self) -> list[float]:
        if self.rate is None:
            return []
        out = [self.rate * 100, (1 - self.rate) * 100]
        if self.anomaly_rate:
            out += [v * 100 for v in self.anomaly]
        if self.max_rate is not None:
            out.append(self.max_rate * 100)
        for v in (self.dup, self.excess):
            if v is not None and self.total:
                out.append(v / self.total * 100)
        return out

    def _age(self) -> list[float]:
        out = [v for v in (self.observed, self.max_age) if v is not None] + self.anomaly
        if self.observed is not None and self.max_age is not None:
            out.append(self.observed - self.max_age)
        return out

    def thresholds(self) -> list[float]:
        """The parameters a number worded as a threshold may equal."""
        return self.params + self.list_sizes + ([self.max_rate * 100] if self.max_rate is not None else [])


_VALUE_RULES = {"failing_strict": Facts._failing_strict, "failing": Facts._failing, "dup": Facts._dup,
                "excess": Facts._excess, "group_rows": Facts._group_rows, "total": Facts._total,
                "generic": Facts._generic,
                "passing": Facts._passing, "rate": Facts._rate,
                "age": Facts._age}


def describe(item: IndexedFinding) -> str:
    """The finding's facts in words, for messages (no parentheses: they go inside one)."""
    f = item.f
    if f.status == "error":
        return f"it could not run: {(f.error or 'error').strip()[:160]}"
    if f.check == "custom_sql":
        return f"the query returned {format_count(f.failing)}"
    if f.check == "row_count":
        bounds = []
        if f.params.get("min") is not None:
            bounds.append(f"at least {format_count(as_float(f.params['min']))}")
        if f.params.get("max") is not None:
            bounds.append(f"at most {format_count(as_float(f.params['max']))}")
        return f"{format_count(f.observed)} rows, expected {' and '.join(bounds) or 'at least 1'}"
    if f.check == "freshness":
        if f.observed is None:
            return "no value at all"
        allowed = f", allowed {f.params['max_age']}" if f.params.get("max_age") is not None else ""
        return f"the newest value is {format_duration(f.observed)} old, {format_count(f.observed)} s{allowed}"
    text = counts_text(item)
    if f.details.get("duplicate_values") is not None:
        text += (f", {format_count(f.details['duplicate_values'])} distinct duplicated values, "
                 f"{format_count(f.details.get('excess_rows'))} rows beyond the first of each")
    return text


def counts_text(item: IndexedFinding) -> str:
    """The counts in words: "37 failing of 2,000 rows, 1.85%"."""
    f = item.f
    if f.total is None:
        return f"{format_count(f.failing)} failing"
    return f"{format_count(f.failing)} failing of {format_count(f.total)} rows, {format_percent(f.rate)}"


def actual_text(item: IndexedFinding, kind: str) -> str:
    """The true value, as text, of the fact a claim of ``kind`` is about (see :func:`actual_label`)."""
    f = item.f
    facts = item.facts
    if kind in ("dup", "excess") and facts.dup is not None:
        return format_count(facts.dup if kind == "dup" else facts.excess)
    if kind == "total":
        return format_count(f.total if f.total is not None else f.observed)
    if kind == "passing" and f.failing is not None and f.total is not None:
        return format_count(f.total - f.failing)
    if kind == "rate":
        return format_percent(facts.rate)
    if kind == "age":
        return format_duration(f.observed)
    if f.failing is not None:
        return format_count(f.failing)
    # row_count: the rows it counted; freshness: the rows it looked at (its observed value is an age)
    if f.check == "row_count":
        return format_count(f.observed if f.observed is not None else f.total)
    return format_count(f.total)


def actual_label(item: IndexedFinding, kind: str) -> str:
    """What :func:`actual_text` is, in words: the check's own quantity."""
    f = item.f
    if kind == "dup" and item.facts.dup is not None:
        return "distinct duplicated values"
    if kind == "excess" and item.facts.dup is not None:
        return "rows beyond the first of each duplicate group"
    if kind == "passing" and f.failing is not None and f.total is not None:
        return "rows that pass"
    if kind == "group_rows" and f.failing is not None:
        return "rows in the duplicated groups"
    if f.failing is not None:
        return "failing rows" if f.check != "custom_sql" else "rows returned"
    return "rows"
