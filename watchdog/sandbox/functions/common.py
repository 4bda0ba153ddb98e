"""Functions every supported database has and that only compute a value from their arguments.

Names are lower case, as the database knows them. A name is allowed on a database only when it is in
this set or in the database's own set (``sqlite.py``, ``postgres.py``, ``mysql.py``).
"""

from __future__ import annotations

#: aggregates and window functions
AGGREGATES = frozenset({
    "count", "sum", "avg", "min", "max",
    "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile",
    "lag", "lead", "first_value", "last_value", "nth_value",
})

#: string, math and conditional functions with the same name everywhere
SCALARS = frozenset({
    "abs", "coalesce", "nullif", "lower", "upper", "length", "substr", "substring", "trim", "ltrim", "rtrim",
    "replace", "round", "sign", "ceil", "ceiling", "floor", "sqrt", "exp", "ln", "log", "log10", "mod", "pi",
    "power", "pow", "degrees", "radians", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "concat",
    "concat_ws", "like", "char_length", "character_length", "octet_length", "cast",
})

#: words sqlglot reads as a function when a parenthesis follows, and that are plain syntax
SYNTAX_WORDS = frozenset({
    "cast", "extract", "position", "case", "if", "exists", "any", "all", "some", "array", "row", "values",
    "interval", "in", "not", "and", "or", "collate", "filter", "over", "within", "distinct", "lateral",
})

COMMON = AGGREGATES | SCALARS
