"""Which columns of a table lead an index, from the database's catalogue (no table read).

Incremental tables use it twice: ``unique`` on a windowed run looks each new key up among the older rows, which
costs an index probe per key where the key leads an index (and a scan of the older rows where it does not), and
``check-config`` warns when the high-water column, a windowed ``unique`` key or a ``foreign_key``'s parent key has
no index. Known on PostgreSQL, SQLite, MySQL/MariaDB and DuckDB; elsewhere :func:`index_prefixes` returns None
(unknown), and nothing is assumed.
"""

from __future__ import annotations

from sqlglot import exp

from watchdog.sandbox import Sandbox
from watchdog.scan import sqlbuild


def index_prefixes(box: Sandbox, table: str) -> list[tuple[str, ...]] | None:
    """The column lists of the table's indexes (primary key and unique constraints included), lower-cased, in
    index order; None when this database's catalogue is not read."""
    parts = sqlbuild.split_name(table, max_parts=3)
    name, schema = parts[-1], (parts[-2] if len(parts) > 1 else None)
    lit = lambda value: exp.Literal.string(value).sql(dialect=box.dialect)  # noqa: E731
    if box.dialect == "postgres":
        where = f"c.relname = {lit(name)} AND " + (f"n.nspname = {lit(schema)}" if schema
                                                  else "pg_catalog.pg_table_is_visible(c.oid)")
        sql = ("SELECT i.indexrelid, a.attname, k.ord FROM pg_catalog.pg_index i "
               "JOIN pg_catalog.pg_class c ON c.oid = i.indrelid "
               "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
               "CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) "
               "JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum "
               f"WHERE {where} ORDER BY i.indexrelid, k.ord")
    elif box.dialect in ("sqlite", "strictsqlite"):
        sql = (f"SELECT l.name, i.name, i.seqno FROM pragma_index_list({lit(name)}) AS l "
               f"JOIN pragma_index_info(l.name) AS i ORDER BY l.name, i.seqno")
        found = _grouped(box.query(sql).rows)
        # an INTEGER PRIMARY KEY is the rowid: the table itself is its index
        pk = box.query(f"SELECT name, type FROM pragma_table_info({lit(name)}) WHERE pk > 0").rows
        if len(pk) == 1 and str(pk[0][1]).upper() == "INTEGER":
            found.append((str(pk[0][0]).lower(),))
        return found
    elif box.dialect == "mysql":
        where = f"table_name = {lit(name)} AND table_schema = " + (lit(schema) if schema else "DATABASE()")
        sql = ("SELECT index_name, column_name, seq_in_index FROM information_schema.statistics "
               f"WHERE {where} ORDER BY index_name, seq_in_index")
    elif box.dialect == "duckdb":
        scope = f" AND schema_name = {lit(schema)}" if schema else ""
        rows = box.query("SELECT constraint_index, constraint_column_names FROM duckdb_constraints() "
                         f"WHERE table_name = {lit(name)}{scope} AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')").rows
        found = [tuple(str(c).lower() for c in row[1]) for row in rows]
        for (expressions,) in box.query(f"SELECT expressions FROM duckdb_indexes() WHERE table_name = {lit(name)}"
                                        f"{scope}").rows:
            text = str(expressions).strip("[]")
            found.append(tuple(part.strip().strip('"').lower() for part in text.split(",")))
        return found
    else:
        return None
    return _grouped(box.query(sql).rows)


def _grouped(rows: list[tuple]) -> list[tuple[str, ...]]:
    indexes: dict[str, list[str]] = {}
    for index, column, _ in rows:
        indexes.setdefault(str(index), []).append(str(column).lower())
    return [tuple(cols) for cols in indexes.values()]


def covered(prefixes: list[tuple[str, ...]] | None, columns: list[str]) -> bool | None:
    """Whether some index starts with ``columns`` (in any order): a lookup by them is an index probe.
    None: not known (the catalogue was not read)."""
    if prefixes is None:
        return None
    wanted = {c.lower() for c in columns}
    return any(len(p) >= len(wanted) and set(p[:len(wanted)]) == wanted for p in prefixes)
