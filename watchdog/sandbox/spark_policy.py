"""What the parser refuses on Spark SQL beyond the common rules (:mod:`watchdog.sandbox.policy`).

Spark has no read-only transaction, so the parser is the guard (see SECURITY.md). On top of the
statement roots, the forbidden nodes (INSERT, CREATE ... AS, SET, CACHE, UNCACHE, REFRESH, ADD JAR
as a raw command...) and the function allowlist (:mod:`watchdog.sandbox.functions.spark`), a Spark
statement may not

* run a script on the server: ``SELECT TRANSFORM(...) USING 'cmd'``;
* read files by path: ``parquet.`/etc/x```, ``csv.`...```, ``text.`...``` and any other two-part name
  whose first part names a data source (Spark reads such a name as ``format.`path``` when no table of
  that name exists), and any name part that looks like a path or URL;
* call a function through a qualified name (``db.f(x)``: a user function, whatever the last part says);
* carry hints (``/*+ REPARTITION(100000) */``): they only steer the engine, and can make it split one
  scan into as many tasks as a number says;
* write two string literals side by side: Spark joins them (``'o''hare'`` is ``'ohare'`` there, not
  ``o'hare`` as in standard SQL), so the same ``where`` would count other rows than on PostgreSQL.
  Spark's spelling is ``'o\\'hare'`` (or ``"o'hare"``).
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from watchdog.errors import QueryRefused

#: sqlglot dialect names that speak Spark SQL
SPARK_DIALECTS = frozenset({"spark", "spark2", "databricks"})

#: data sources Spark (and Databricks, Delta, Iceberg, Hudi) can read a path with, as ``source.`path```
DATA_SOURCES = frozenset({
    "parquet", "csv", "json", "text", "orc", "avro", "binaryfile", "xml", "jdbc", "libsvm", "image", "delta",
    "iceberg", "hudi", "kafka", "hive", "noop", "console", "rate", "socket", "cloudfiles", "protobuf", "file",
})
#: a name part that looks like a path or a URL
_PATH_LIKE = re.compile(r"[/\\:]|^\.|^~")


def vet_spark_node(node: exp.Expr) -> None:
    """Raise QueryRefused when ``node`` is one of the Spark hazards above."""
    if isinstance(node, exp.QueryTransform):
        raise QueryRefused("TRANSFORM ... USING (a script run on the server) is not allowed")
    if isinstance(node, exp.Hint):
        raise QueryRefused("hints (/*+ ... */) are not allowed")
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func):
        raise QueryRefused(f"qualified function calls are not allowed: {node.sql('spark')[:80]}")
    if isinstance(node, exp.Table):
        _vet_table(node)


def _vet_table(node: exp.Table) -> None:
    parts = [p for p in (node.args.get("catalog"), node.args.get("db"), node.this) if isinstance(p, exp.Identifier)]
    for part in parts:
        if _PATH_LIKE.search(part.name):
            raise QueryRefused(f"reading files by path is not allowed: {node.sql('spark')[:80]}")
    db = node.args.get("db")
    if isinstance(db, exp.Identifier) and (db.name.lower() in DATA_SOURCES or "." in db.name):
        raise QueryRefused(f"a table named like a file source ({db.name}.`...`) is not allowed: Spark may read "
                           f"it as a path; name the table through another schema")


def vet_spark_tokens(tokens: list[Token]) -> None:
    """Refuse string literals written side by side (Spark concatenates them; standard SQL reads a quote)."""
    for first, second in zip(tokens, tokens[1:], strict=False):
        if first.token_type in _STRINGS and second.token_type in _STRINGS:
            raise QueryRefused(f"two string literals side by side ({first.text!r} {second.text!r}): Spark SQL joins "
                               "them into one; write a quote inside a string as \\' (e.g. 'o\\'hare')")


_STRINGS = frozenset({TokenType.STRING, TokenType.RAW_STRING, TokenType.NATIONAL_STRING, TokenType.BYTE_STRING})
