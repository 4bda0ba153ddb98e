"""Tables read from files (CSV, Parquet, JSON) through DuckDB: names, formats and the reader for each.

Pure functions and no heavy imports (no pydantic): :class:`watchdog.database.DatabaseConfig` and the
settings model validate a database's ``files:`` with them, the CLI parses ``--file [name=]path`` with
them, and :mod:`watchdog.sandbox.duckdb_session` builds one view per table with them.
"""

from __future__ import annotations

import glob
import re
from pathlib import Path

from watchdog.errors import ConfigError

#: a table name: a plain identifier, the same on every database
TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: DuckDB's reader for each file kind (a trailing compression suffix is skipped)
READERS = {".csv": "read_csv", ".tsv": "read_csv", ".parquet": "read_parquet", ".json": "read_json",
           ".jsonl": "read_json", ".ndjson": "read_json"}
COMPRESSIONS = (".gz", ".zst")
IN_MEMORY = "duckdb:///:memory:"


class FileTableError(ConfigError, ValueError):
    """A ``files:`` entry or ``--file`` value that cannot be a table (the message says why; a ValueError for
    the settings model, which reports it at the entry's line)."""


def is_duckdb_url(url: str) -> bool:
    return url.split(":", 1)[0].split("+", 1)[0].lower() == "duckdb"


def reader_for(path: str) -> str:
    """The DuckDB table function that reads ``path`` (by its suffix), or FileTableError."""
    name = Path(path).name.lower()
    for compression in COMPRESSIONS:
        name = name.removesuffix(compression)
    suffix = Path(name).suffix
    if suffix not in READERS:
        kinds = ", ".join(sorted(READERS))
        raise FileTableError(f"{path!r}: unknown file kind {suffix or '(no suffix)'!r} (known: {kinds}, "
                             f"optionally {' or '.join(COMPRESSIONS)})")
    return READERS[suffix]


def check_files(url: str, files: dict[str, str]) -> None:
    """A ``files:`` mapping belongs under a DuckDB database (each entry is checked by its own type below)."""
    if files and not is_duckdb_url(url):
        raise FileTableError(f"files: needs a DuckDB database (url: {IN_MEMORY} or duckdb:///path.duckdb)")


def check_table_name(name: str) -> str:
    if not TABLE_NAME.fullmatch(name):
        raise FileTableError(f"{name!r} cannot be a table name: letters, digits and _ (not starting with a digit)")
    return name


def check_file_path(path: str) -> str:
    if not path.strip():
        raise FileTableError("the path is empty")
    reader_for(path)
    return path


def parse_spec(spec: str) -> tuple[str, str]:
    """``name=path`` or ``path`` (the name is then the file's stem) -> (name, path)."""
    name, sep, path = spec.partition("=")
    if not sep or not TABLE_NAME.fullmatch(name):
        name, path = _stem(spec), spec
        if not TABLE_NAME.fullmatch(name):
            raise FileTableError(f"--file {spec!r}: cannot make a table name from the file name; "
                                 f"write --file NAME={spec}")
    reader_for(path)
    return name, path


def _stem(path: str) -> str:
    name = Path(path).name
    for compression in COMPRESSIONS:
        name = name.removesuffix(compression)
    return Path(name).stem


def expand(pattern: str) -> list[str]:
    """The files ``pattern`` names (a glob is expanded, sorted); FileTableError when there is none."""
    if glob.has_magic(pattern):
        found = sorted(p for p in glob.glob(pattern, recursive=True) if Path(p).is_file())
    else:
        found = [pattern] if Path(pattern).is_file() else []
    if not found:
        raise FileTableError(f"no file matches {pattern!r}")
    return [str(Path(p).resolve()) for p in found]
