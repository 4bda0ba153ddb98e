"""sqlglot dialects tuned for watchdog.

``strictsqlite``: SQLite, but identifiers are written with backticks. SQLite reads an unknown
"double-quoted" name as a string literal, so ``"nope" IS NULL`` on a missing column would
silently count nothing; a backticked name is always an identifier, and a typo is an error.
"""

from sqlglot.dialects.sqlite import SQLite


class StrictSQLite(SQLite):
    class Tokenizer(SQLite.Tokenizer):
        IDENTIFIERS = ["`", '"', ("[", "]")]
