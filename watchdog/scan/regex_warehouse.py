"""Pattern checks on Trino, Snowflake, BigQuery and Databricks SQL (generated SQL only, not tested live).

The suite's regex (PostgreSQL ARE, searched: see :mod:`watchdog.scan.regex`) keeps its meaning:

* **Trino** ``regexp_like`` and **Databricks** ``REGEXP_LIKE`` (= ``RLIKE``) search the value with a Java-syntax
  engine (Joni / java.util.regex): the pattern is written as for PCRE, which Java reads the same way
  (``(?s)``, ``\\z``, ``\\xHH``, lookarounds for word boundaries).
* **BigQuery** ``REGEXP_CONTAINS`` searches with RE2: the same spelling, but RE2 has no lookaround, so
  ``\\b``/``\\B`` use RE2's own (ASCII) word boundaries, and ``\\m``, ``\\M`` and lookaheads are refused.
* **Snowflake** ``REGEXP_LIKE`` / ``RLIKE`` match the WHOLE value (implicit anchors) with POSIX extended
  regexes, with the parameters ``'cs'`` (case-sensitive; ``.`` matches newlines too). The pattern is
  written in plain ERE (no ``(?:``, control characters as themselves, bracket expressions with no
  escapes) and searched as ``.*(p).*``. ``^`` and ``$`` are never written: engines disagree on whether
  they match next to a newline inside the value (glibc's ERE does; PostgreSQL's ``$`` does not). A branch
  that starts with ``^`` drops its leading ``.*`` instead, and the branches that end with ``$`` are
  matched against the value with a ``#`` appended, as ``.*(p)#``: the ``#`` can only be the appended
  one, so ``p`` ends exactly at the value's end whatever the value holds. An anchor anywhere else
  (inside a group, mid-branch), word boundaries and lookaheads are refused.

A refusal is a :class:`~watchdog.scan.regex.RegexError`: the check's status is ``error`` with the reason,
never a different answer.
"""

from __future__ import annotations

from sqlglot import exp

from watchdog.scan import regex
from watchdog.scan.regex import Node, RegexError

#: the regex engine behind each warehouse dialect
ENGINE = {"trino": "java", "databricks": "java", "bigquery": "re2", "snowflake": "posix"}
#: DuckDB (tested live, not a warehouse) uses the same RE2 spelling: ``search(value, pattern, "duckdb")``
_RE2_TOO = {"duckdb": "re2"}
_LABEL = {"trino": "Trino", "databricks": "Databricks", "bigquery": "BigQuery (RE2)", "snowflake": "Snowflake",
          "duckdb": "DuckDB (RE2)"}
_TEXT = {"trino": "varchar", "databricks": "string", "bigquery": "string", "snowflake": "varchar",
         "duckdb": "varchar"}
_ERE_META = set("\\^$.|?*+()[]{}")


#: appended to the value for the branches that end with ``$`` (Snowflake); any character would do
SENTINEL = "#"


def translate(pattern: str, dialect: str) -> str:
    """``pattern`` for Trino, Databricks or BigQuery (raises RegexError when it cannot mean the same)."""
    engine = ENGINE.get(dialect) or _RE2_TOO[dialect]
    if engine == "posix":
        raise ValueError("Snowflake's spelling is snowflake_regexes(): one or two whole-value matches")
    if engine == "re2":
        _refuse_lookaround(regex.parse(pattern), dialect, allow_boundaries=True)
    return regex.translate(pattern, engine)


def snowflake_regexes(pattern: str) -> list[tuple[bool, str]]:
    """``(sentinel, ere)`` pairs: the value (with :data:`SENTINEL` appended when ``sentinel``) matches any
    ``ere`` as a whole exactly when ``pattern`` is found in it (see the module's notes)."""
    tree = regex.parse(pattern)
    _refuse_lookaround(tree, "snowflake", allow_boundaries=False)
    plain: list[str] = []
    ended: list[str] = []
    for branch in tree.children if tree.kind == "alt" else [tree]:
        items = list(branch.children)
        starts = bool(items) and items[0].kind == "start"
        items = items[1:] if starts else items
        ends = bool(items) and items[-1].kind == "end"
        items = items[:-1] if ends else items
        if any(_anchored(item) for item in items):
            raise RegexError("on Snowflake, ^ and $ (and \\A, \\Z) are supported only at the start and end of the "
                             "pattern or of one of its top-level | alternatives; the pattern check is refused there")
        body = "".join(_ere(item) for item in items)
        body = f"({body})" if body else ""
        if ends:
            ended.append(("" if starts else ".*") + body + SENTINEL)
        else:
            plain.append(("" if starts else ".*") + body + ".*")
    return [(sentinel, "(" + "|".join(texts) + ")") for sentinel, texts in ((False, plain), (True, ended)) if texts]


def search(value: exp.Expr, pattern: str, dialect: str) -> exp.Expr:
    """True when ``pattern`` is found in ``value`` on the warehouse (see the module's notes)."""
    text = exp.Cast(this=value, to=exp.DataType.build(_TEXT[dialect], dialect=dialect))
    if dialect != "snowflake":
        return exp.RegexpLike(this=text, expression=exp.Literal.string(translate(pattern, dialect)))
    calls: list[exp.Expr] = []
    for sentinel, ere in snowflake_regexes(pattern):
        subject = exp.Concat(expressions=[text.copy(), exp.Literal.string(SENTINEL)]) if sentinel else text.copy()
        calls.append(exp.RegexpLike(this=subject, expression=exp.Literal.string(ere), flag=exp.Literal.string("cs")))
    return calls[0] if len(calls) == 1 else exp.Paren(this=exp.or_(*calls, copy=False))


def _anchored(node: Node) -> bool:
    return node.kind in ("start", "end") or any(_anchored(child) for child in node.children)


def _refuse_lookaround(node: Node, dialect: str, *, allow_boundaries: bool) -> None:
    if node.kind == "look":
        raise RegexError(f"lookaheads (?= ...) and (?! ...) cannot be written for {_LABEL[dialect]}, "
                         "whose regex engine has no lookaround; the pattern check is refused there")
    if node.kind == "boundary" and not (allow_boundaries and node.value in ("b", "B")):
        which = "\\b \\B \\y \\Y \\m \\M" if not allow_boundaries else "\\m and \\M (start / end of a word)"
        raise RegexError(f"word boundaries ({which}) cannot be written for {_LABEL[dialect]}, whose regex "
                         "engine has no lookaround; the pattern check is refused there")
    for child in node.children:
        _refuse_lookaround(child, dialect, allow_boundaries=allow_boundaries)


def _ere(node: Node) -> str:
    """``node`` in POSIX ERE as Snowflake reads it (lookarounds were refused)."""
    kind = node.kind
    if kind in ("seq", "alt"):
        return ("" if kind == "seq" else "|").join(_ere(c) for c in node.children)
    if kind == "any":
        return "."
    if kind == "char":
        return "\\" + node.value if node.value in _ERE_META else node.value
    if kind == "class":
        return _ere_class(node.ranges, node.negated)
    if kind == "group":
        return "(" + _ere(node.children[0]) + ")"  # capturing: back-references are refused anyway
    if kind == "repeat":
        inner = node.children[0]
        text = _ere(inner)
        if inner.kind in ("seq", "alt"):
            text = "(" + text + ")"
        return text + _count(node.low, node.high)
    raise RegexError(f"cannot write {kind} for Snowflake")  # pragma: no cover - anchors, lookarounds refused before


def _count(low: int, high: int | None) -> str:
    short = {(0, None): "*", (1, None): "+", (0, 1): "?"}
    if (low, high) in short:
        return short[(low, high)]
    if high is None:
        return f"{{{low},}}"
    return f"{{{low}}}" if low == high else f"{{{low},{high}}}"


def _ere_class(ranges: list[tuple[int, int]], negated: bool) -> str:
    """A bracket expression with no backslash escapes, so POSIX and Perl-style readers agree: ``]`` first,
    then the plain ranges, ``\\\\`` (one backslash either way), ``[``, ``^`` and ``-`` last."""
    merged = regex.class_ranges(ranges)
    specials = {chr(low) for low, high in merged if low == high and chr(low) in "\\]^-["}
    plain = "".join(chr(low) if low == high else f"{chr(low)}-{chr(high)}"
                    for low, high in merged if not (low == high and chr(low) in specials))
    body = ("]" if "]" in specials else "") + plain + ("\\\\" if "\\" in specials else "") \
        + ("[" if "[" in specials else "")
    if "^" in specials:
        if not body and not negated:  # [^] would negate: ^ goes after the -, or stands alone
            return "[-^]" if "-" in specials else "\\^"
        body += "^"
    body += "-" if "-" in specials else ""
    return "[" + ("^" if negated else "") + body + "]"
