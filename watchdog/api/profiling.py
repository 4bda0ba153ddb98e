"""The Python API of ``watchdog profile`` and ``watchdog suggest``.

>>> import watchdog
>>> [orders] = watchdog.profile_database("sqlite:///shop.db", ["orders"], null_markers=["?", "N/A"])  # doctest: +SKIP
>>> orders.column("volume").numeric_text                                                          # doctest: +SKIP
0.98
>>> print(watchdog.suggest("sqlite:///shop.db").text)                                              # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from watchdog.api.secrets import CallSecrets
from watchdog.database import DatabaseConfig
from watchdog.errors import ConfigError

if TYPE_CHECKING:
    from watchdog.profile.stats import TableProfile
    from watchdog.profile.suggest import Suggestion

__all__ = ["profile_database", "suggest"]


def _markers(null_markers: Iterable[str] | str | None) -> tuple[str, ...] | None:
    from watchdog.scan.table_options import null_values_of

    if null_markers is None:
        return None
    try:
        return null_values_of(null_markers if isinstance(null_markers, str) else list(null_markers))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"null_markers: {exc}") from None


def _tables(tables: Iterable[str] | str | None) -> list[str] | None:
    if tables is None:
        return None
    names = [tables] if isinstance(tables, str) else list(tables)
    if not all(isinstance(n, str) and n for n in names):
        raise ConfigError(f"tables: table names (text), not {tables!r}")
    return names or None


def profile_database(db: str | DatabaseConfig, tables: Iterable[str] | str | None = None, *,
                     null_markers: Iterable[str] | str | None = None,
                     timeout: float | None = None) -> list[TableProfile]:
    """Profile ``tables`` (default: every table) as ``watchdog profile`` does, through the read-only sandbox.

    ``null_markers`` are the text values counted as markers of a missing value in text columns (compared exactly;
    default ``?``, ``N/A``, ``n/a``, ``NA``, ``NULL``, ``null``, ``None``, ``none``, ``-``; ``[]``: none). Each
    returned :class:`~watchdog.profile.stats.TableProfile` has per column, among others, ``blank_rate``,
    ``marker_rate``, ``markers`` (rows per marker found) and ``numeric_text`` (the share of non-null values that are
    numbers stored as text). ``profile.to_dict()`` is what ``watchdog profile --json`` prints per table.
    """
    from watchdog.profile.suggest import profile_database as run
    from watchdog.sandbox import Sandbox

    secrets = CallSecrets()
    secrets.add_url(db.url if isinstance(db, DatabaseConfig) else str(db))
    with secrets.guard():
        markers, names = _markers(null_markers), _tables(tables)
        target = (db if isinstance(db, DatabaseConfig) else DatabaseConfig(url=db)).with_limits(timeout_s=timeout)
        with Sandbox.for_database(target) as box:
            return secrets.mask(run(box, names, null_markers=markers))


def suggest(db: str | DatabaseConfig, tables: Iterable[str] | str | None = None, *,
            null_markers: Iterable[str] | str | None = None, strictness: str = "normal",
            kinds: Iterable[str] | None = None, timeout: float | None = None) -> Suggestion:
    """A starter suite for ``tables`` (default: every table), as ``watchdog suggest`` writes it: ``.text`` is the
    YAML, ``.candidates`` each proposed check with its evidence and how it did on today's data, ``.notes`` what
    was dropped and why. ``null_markers`` as for :func:`profile_database`; ``strictness`` ``loose``, ``normal`` or
    ``strict``; ``kinds`` only these check kinds."""
    from watchdog.profile.rules import KINDS, STRICTNESS
    from watchdog.profile.suggest import profile_database as run
    from watchdog.profile.suggest import suggest_suite
    from watchdog.sandbox import Sandbox

    secrets = CallSecrets()
    secrets.add_url(db.url if isinstance(db, DatabaseConfig) else str(db))
    with secrets.guard():
        if strictness not in STRICTNESS:
            raise ConfigError(f"strictness: one of {', '.join(STRICTNESS)}, not {strictness!r}")
        wanted = None if kinds is None else [kinds] if isinstance(kinds, str) else list(kinds)
        unknown = [k for k in wanted or [] if k not in KINDS]
        if unknown:
            raise ConfigError(f"kinds: unknown kind(s) {', '.join(map(str, unknown))}; expected some of "
                              f"{', '.join(KINDS)}")
        markers, names = _markers(null_markers), _tables(tables)
        target = (db if isinstance(db, DatabaseConfig) else DatabaseConfig(url=db)).with_limits(timeout_s=timeout)
        with Sandbox.for_database(target) as box:
            profiles = run(box, names, null_markers=markers)
            return secrets.mask(suggest_suite(box, profiles, strictness=strictness, kinds=wanted))
