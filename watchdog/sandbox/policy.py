"""The parser half of the sandbox: accept exactly one read statement, refuse anything else.

Each statement is parsed with sqlglot in the database's dialect. It must be a
single SELECT / set operation (UNION, INTERSECT, EXCEPT) / VALUES, and nothing
anywhere in its tree may write or change state: DML or DDL (also inside a CTE or a
sub-query), SELECT INTO, locking reads, commands sqlglot can only keep as raw text,
session-variable assignment, ``@@global`` variables, or reads of server files and password hashes.

Functions are checked against an allowlist per database (``watchdog/sandbox/functions/``): every
function name as written in the statement -- also names sqlglot does not know (``exp.Anonymous``),
table functions in FROM and names read by sqlglot's dedicated parsers (DECODE, CONVERT...) -- must
be on it, or the statement is refused with ``function 'x' is not allowed``.
The database's own read-only mode (see ``sessions.py``) backs this up.

Where the parser and the server could read the same text differently, the text is refused:
MySQL executable comments (``/*! ... */``, ``/*M! ... */``) and PostgreSQL unicode-escaped
identifiers (``U&"pg\\005fsleep"`` is ``pg_sleep`` to the server, an unknown name to the parser).
Statements longer than :data:`MAX_STATEMENT_CHARS` or nested too deeply to parse are refused too.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import cache

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from watchdog.errors import QueryRefused
from watchdog.sandbox import dialects  # noqa: F401  (registers strictsqlite)
from watchdog.sandbox.functions import DENIED_RELATIONS, SYNTAX_WORDS, allowed_functions
from watchdog.sandbox.spark_policy import SPARK_DIALECTS, vet_spark_node, vet_spark_tokens

logging.getLogger("sqlglot").setLevel(logging.ERROR)

#: statement roots that are reads
READ_ROOTS: tuple[type[exp.Expr], ...] = (exp.Select, exp.SetOperation, exp.Values, exp.Subquery)

#: node types that write, lock or change session state, wherever they appear in the tree
FORBIDDEN_NODES: dict[type[exp.Expr], str] = {
    exp.Insert: "INSERT",
    exp.Update: "UPDATE",
    exp.Delete: "DELETE",
    exp.Merge: "MERGE",
    exp.Create: "CREATE",
    exp.Drop: "DROP",
    exp.Alter: "ALTER",
    exp.TruncateTable: "TRUNCATE",
    exp.Command: "a raw command",
    exp.Set: "SET",
    exp.Pragma: "PRAGMA",
    exp.Copy: "COPY",
    exp.Into: "SELECT INTO",
    exp.Lock: "a locking read (FOR UPDATE / FOR SHARE)",
    exp.Transaction: "a transaction statement",
    exp.Commit: "COMMIT",
    exp.Rollback: "ROLLBACK",
    exp.Use: "USE",
    exp.Attach: "ATTACH",
    exp.Detach: "DETACH",
    exp.LoadData: "LOAD DATA",
    exp.Grant: "GRANT",
    exp.Revoke: "REVOKE",
    exp.Analyze: "ANALYZE",
    exp.Kill: "KILL",
    exp.Cache: "CACHE",
    exp.Uncache: "UNCACHE",
    exp.Refresh: "REFRESH",
    exp.Declare: "DECLARE",
}

#: MySQL executes the body of /*! ... */ and MariaDB of /*M! ... */ comments: never accept them
_EXECUTABLE_COMMENT = re.compile(r"/\*[!M]")
#: a PostgreSQL unicode-escaped identifier, U&"...": the server decodes it, the parser does not
_UNICODE_IDENTIFIER = re.compile(r'[uU]&"')

#: a called name as it may stand in the text
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
#: tokens that are values, never a called name
_LITERAL_TOKENS = frozenset(t for t in TokenType if t.name.endswith("STRING") or t.name == "NUMBER")

#: longer statements are refused: parsing them would take seconds (the planner stays under 60 000)
MAX_STATEMENT_CHARS = 200_000

_DIALECTS = {"postgresql": "postgres", "mariadb": "mysql", "mssql": "tsql", "sqlite": "strictsqlite", "mysql": "mysql",
             "hive": "spark", "databricks": "databricks"}  # hive://: the Spark Thrift server (HiveServer2)


def sqlglot_dialect(sqlalchemy_dialect: str) -> str:
    """The sqlglot dialect name for a SQLAlchemy dialect name (``postgresql`` -> ``postgres``)."""
    return _DIALECTS.get(sqlalchemy_dialect, sqlalchemy_dialect)


@dataclass(frozen=True)
class ReadOnlyPolicy:
    """Accepts one read statement in ``dialect`` and raises :class:`QueryRefused` for anything else."""

    dialect: str

    def vet(self, sql: str) -> exp.Expr:
        """Return the parsed statement, or raise QueryRefused saying why it was refused."""
        if len(sql) > MAX_STATEMENT_CHARS:
            raise QueryRefused(f"the statement is too long ({len(sql)} characters, at most {MAX_STATEMENT_CHARS})")
        if _EXECUTABLE_COMMENT.search(sql):
            raise QueryRefused("executable comments (/*! ... */) are not allowed")
        try:
            if self.dialect == "postgres" and _UNICODE_IDENTIFIER.search(sql) and _has_unicode_identifier(sql):
                raise QueryRefused('unicode-escaped identifiers (U&"...") are not allowed')
            dialect = Dialect.get_or_raise(self.dialect)
            tokens = dialect.tokenize(sql)
            statements = [s for s in dialect.parser().parse(tokens, sql) if s is not None]
        except (ParseError, TokenError) as exc:
            raise QueryRefused(f"could not parse the statement: {_first_line(exc)}") from None
        except RecursionError:
            raise QueryRefused("the statement is nested too deeply to check") from None
        statements = [s for s in statements if not isinstance(s, exp.Semicolon)]
        if not statements:
            raise QueryRefused("empty statement")
        if len(statements) > 1:
            raise QueryRefused(f"exactly one statement is allowed, got {len(statements)}")
        tree = statements[0]
        if not isinstance(tree, READ_ROOTS):
            raise QueryRefused("only a read (SELECT, UNION, WITH ... SELECT, VALUES) is allowed, "
                               f"got {_describe(tree)}")
        allowed = _allowed(self.dialect)
        _vet_parser_words(tokens, dialect, allowed)
        if self.dialect in SPARK_DIALECTS:
            vet_spark_tokens(tokens)
        try:
            for node in tree.walk():
                self._vet_node(node, sql, allowed)
        except RecursionError:
            raise QueryRefused("the statement is nested too deeply to check") from None
        return tree

    def _vet_node(self, node: exp.Expr, sql: str, allowed: frozenset[str]) -> None:
        for kind, label in FORBIDDEN_NODES.items():
            if isinstance(node, kind):
                raise QueryRefused(f"{label} is not allowed")
        if isinstance(node, exp.PropertyEQ) and isinstance(node.this, (exp.Parameter, exp.SessionParameter)):
            raise QueryRefused("assigning to a variable is not allowed")
        if isinstance(node, (exp.Parameter, exp.SessionParameter)) and isinstance(node.parent, exp.EQ) and (
            isinstance(node.parent.parent, exp.Set)
        ):
            raise QueryRefused("assigning to a variable is not allowed")
        if isinstance(node, exp.SessionParameter) and str(node.args.get("kind") or "").lower() == "global":
            raise QueryRefused("@@global variables are not allowed")
        if isinstance(node, exp.Table) and node.name.lower() in DENIED_RELATIONS.get(self.dialect, ()):
            raise QueryRefused(f"reading '{node.name}' is not allowed")
        if self.dialect in SPARK_DIALECTS:
            vet_spark_node(node)
        if isinstance(node, exp.Func):
            name = _called_name(node, sql)
            if name is not None and name not in allowed:
                raise QueryRefused(f"function '{name}' is not allowed")


def _has_unicode_identifier(sql: str) -> bool:
    """True when the PostgreSQL tokens hold ``U&"..."``: U, & and a quoted name with nothing in between."""
    tokens = sqlglot.tokenize(sql, read="postgres")
    for u, amp, name in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if (u.token_type == TokenType.VAR and u.text in ("u", "U") and amp.token_type == TokenType.AMP
                and name.token_type == TokenType.IDENTIFIER and amp.start == u.end + 1 and name.start == amp.end + 1):
            return True
    return False


@cache
def _allowed(dialect: str) -> frozenset[str]:
    return allowed_functions(dialect) | SYNTAX_WORDS


def _called_name(node: exp.Expr, sql: str) -> str | None:
    """The function name as the statement spells it, or None for a node built from syntax.

    sqlglot records where a called name stands in the text; a node without that position comes
    from syntax (an operator, ``x::int``, CURRENT_DATE, a dedicated parser checked by
    :func:`_vet_parser_words`) or is built by sqlglot around the user's arguments.
    """
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    start, end = node.meta.get("start"), node.meta.get("end")
    if isinstance(start, int) and isinstance(end, int):
        word = sql[start:end + 1].strip('"`[]')
        if _NAME.fullmatch(word):
            return word.lower()
    return None


def _vet_parser_words(tokens: list[Token], dialect: Dialect, allowed: frozenset[str]) -> None:
    """Check the names sqlglot reads with dedicated parsers (CAST, DECODE, CONVERT...) from the tokens."""
    special = dialect.parser_class.FUNCTION_PARSERS
    for token, nxt in zip(tokens, tokens[1:], strict=False):
        if nxt.token_type != TokenType.L_PAREN or token.token_type in _LITERAL_TOKENS:
            continue
        if token.text.upper() in special and token.text.lower() not in allowed:
            raise QueryRefused(f"function '{token.text.lower()}' is not allowed")


def _describe(tree: exp.Expr) -> str:
    if isinstance(tree, exp.Command):
        return str(tree.this).upper()
    return tree.key.upper()


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
