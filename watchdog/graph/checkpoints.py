"""LangGraph's durable checkpointer (langgraph-checkpoint-sqlite) in watchdog's state directory.

Report runs (thread = run id) and delivery/review gates (thread = ``deliver:<run id>``) live here,
so any later process can resume them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHECKPOINT_FILE = "checkpoints.sqlite"


@contextmanager
def checkpointer(state_dir: Path) -> Iterator[Any]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    state_dir.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(state_dir / CHECKPOINT_FILE, check_same_thread=False, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()
