"""Which database a ``reconcile`` check's ``with:`` names: a URL, or a database of the configuration in use.

The run that knows its configuration (an audit, ``scan --config``) says so with :func:`using`; a check reads it
when it is planned (on the scan's own thread), so the statements that run later on helper threads keep it.
Without one, the default configuration file is read ($WATCHDOG_CONFIG or config/watchdog.yaml).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from watchdog.database import DatabaseConfig

Resolver = Callable[[str], "DatabaseConfig"]

_RESOLVER: ContextVar[Resolver | None] = ContextVar("watchdog_reconcile_resolver", default=None)


@contextmanager
def using(resolver: Resolver | None) -> Iterator[None]:
    """Resolve ``with:`` names with ``resolver`` (e.g. ``settings.database``) inside the block."""
    token = _RESOLVER.set(resolver)
    try:
        yield
    finally:
        _RESOLVER.reset(token)


def current() -> Resolver:
    """The resolver in force now: the run's, else the default configuration's."""
    found = _RESOLVER.get()
    if found is not None:
        return found
    return _default


def _default(name: str) -> DatabaseConfig:
    from watchdog.settings import load_settings

    return load_settings(None).database(name)


def resolve(name_or_url: str, resolver: Resolver) -> DatabaseConfig:
    if "://" in name_or_url:
        from watchdog.database import DatabaseConfig

        return DatabaseConfig(url=name_or_url)
    return resolver(name_or_url)
