"""Incremental tables under ``serve``: two real ``watchdog serve`` processes share one PostgreSQL history, one
leads (the leader lease); the high-water mark lives in the history, so whichever instance runs continues from
the last recorded run's mark, also after the leader is killed (-9) and the standby takes over."""

from __future__ import annotations

import os
import signal
import sqlite3
from pathlib import Path

from tests.test_high_availability import all_runs, lease_holder, serves, wait_for  # noqa: F401 (fixture)
from watchdog.history import HistoryStore


def add_rows(db: Path, first: int, last: int, missing: int) -> None:
    with sqlite3.connect(db) as conn:
        conn.executemany("INSERT INTO events VALUES (?, ?)",
                         [(i, None if i == missing else f"u{i}@x.io") for i in range(first, last + 1)])


def windows(history: str) -> list[tuple]:
    """(run id, from, to, failing, total) of each recorded run's not_null finding, oldest first."""
    runs = [r for r in all_runs(history, "events") if r.status not in ("running", "interrupted")]
    store = HistoryStore(history)
    try:
        found = store.findings_of_runs([r.id for r in runs])
    finally:
        store.close()
    out = []
    for run in runs:
        finding = next((f for f in found[run.id] if f.get("check") == "not_null"), None)
        if finding is not None:
            w = finding["window"]
            out.append((run.id, w["from"], w["to"], finding["failing"], finding["total"]))
    return out


def test_two_serves_share_the_mark_under_the_leader_lease(tmp_path: Path, make_database, serves) -> None:  # noqa: F811
    history = make_database("postgresql").url
    data = tmp_path / "events.db"
    with sqlite3.connect(data) as conn:
        conn.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, email TEXT)")
    add_rows(data, 1, 10, missing=2)
    (tmp_path / "events.yaml").write_text(
        "tables:\n  events:\n    incremental: {column: id}\n    checks:\n      - not_null: email\n")
    config = tmp_path / "watchdog.yaml"
    config.write_text(f"""\
state_dir: state
history: {{url: "{history}", wait_s: 60}}
scheduler: {{lease_s: 3, misfire_grace_s: 30}}
databases:
  main: {{url: "sqlite:///{data}"}}
audits:
  events:
    database: main
    checks: [events.yaml]
    schedule: {{every: 2s}}
    diagnose: false
    deliver:
      - file: {{dir: reports}}
""")
    first = serves(tmp_path, config, "first")
    wait_for(lambda: lease_holder(history), 60, "a leader")
    second = serves(tmp_path, config, "second")
    wait_for(lambda: "serving" in second.log, 60, "the standby to start")
    wait_for(lambda: windows(history), 60, "a first run")
    add_rows(data, 11, 20, missing=15)
    wait_for(lambda: any(w[2] == 20 for w in windows(history)), 60, "a run that saw ids 11..20")
    holder = lease_holder(history)
    assert holder is not None
    leader, standby = (first, second) if holder[0].split(":")[1] == str(first.proc.pid) else (second, first)
    os.kill(leader.proc.pid, signal.SIGKILL)
    wait_for(lambda: (lambda h: h if h and h[0] != holder[0] else None)(lease_holder(history)), 30, "a new leader")
    add_rows(data, 21, 30, missing=25)
    wait_for(lambda: any(w[2] == 30 for w in windows(history)), 60, "a run of the new leader that saw ids 21..30")
    standby.proc.send_signal(signal.SIGTERM)
    assert standby.wait(timeout=60) == 0, standby.log
    seen = windows(history)
    # the first run judged every row; each later run starts at the mark the run before it recorded, whichever
    # instance ran it: the chain never skips or restarts
    assert seen[0][1:3] == (None, 10)
    for before, after in zip(seen, seen[1:], strict=False):
        assert after[1] == before[2], seen
    # each missing email (ids 2, 15, 25) failed exactly once; a run with no new rows judged the mark's row only
    assert sum(w[3] for w in seen) == 3, seen
    assert all(w[4] == (w[2] - w[1] + 1 if w[1] is not None else 10) for w in seen), seen
