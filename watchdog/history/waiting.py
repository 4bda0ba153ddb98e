"""Waiting out a locked or unreachable history database: which errors are worth waiting for, and the
decorator that makes a :class:`~watchdog.history.HistoryStore` method wait (``history.wait_s``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import sqlalchemy as sa

from watchdog.redact import redact

if TYPE_CHECKING:
    from watchdog.history.store import HistoryStore

T = TypeVar("T")


def transient(exc: BaseException) -> bool:
    """A locked, busy or unreachable database (worth waiting for), not a wrong statement."""
    if isinstance(exc, sa.exc.DBAPIError) and exc.connection_invalidated:
        return True
    return isinstance(exc, (sa.exc.OperationalError, sa.exc.InterfaceError)) and not isinstance(
        exc, sa.exc.ProgrammingError)


def first_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(orig).splitlines() if line.strip()]
    return redact(lines[0] if lines else type(orig).__name__)[:300]


def waits(method: Callable[..., T]) -> Callable[..., T]:
    """Run a store method, waiting out a locked or unreachable database (see :meth:`HistoryStore.call`)."""

    @functools.wraps(method)
    def wrapper(self: HistoryStore, *args: Any, **kwargs: Any) -> T:
        return self.call(method, self, *args, **kwargs)

    return wrapper
