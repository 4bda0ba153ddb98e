"""Cancel, on the server, the statements this process is running (a daemon stopping or losing the lead).

Each session registers a cancel function while a statement runs (PostgreSQL: a cancel request, as
``pg_cancel_backend`` does; MySQL / MariaDB: ``KILL QUERY`` from a second connection).
:func:`cancel_running` calls them all and makes the sandbox refuse new statements until
:func:`resume`, so a scan being abandoned does not start its next query.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

_lock = threading.Lock()
_running: dict[int, Callable[[], None]] = {}
_ids = itertools.count(1)
_stopping = threading.Event()


def register(cancel: Callable[[], None]) -> int:
    with _lock:
        key = next(_ids)
        _running[key] = cancel
    return key


def unregister(key: int) -> None:
    with _lock:
        _running.pop(key, None)


def stopping() -> bool:
    return _stopping.is_set()


def cancel_running() -> int:
    """Refuse new statements and cancel every running one on its server; returns how many were running."""
    _stopping.set()
    with _lock:
        cancels = list(_running.values())
    for cancel in cancels:
        try:
            cancel()
        except Exception as exc:  # noqa: BLE001 -- the connection may be gone already: nothing runs then
            log.debug("cancel failed: %s", exc)
    return len(cancels)


def resume() -> None:
    """Accept statements again (a daemon that leads again)."""
    _stopping.clear()
