"""Audits that survive their host (issue 12): several ``serve`` instances on one history database, one
run per tick, no alert lost to a local fault.

Real processes (``python -m watchdog``), a real PostgreSQL history, real SMTP (aiosmtpd) and HTTP sinks
on 127.0.0.1, a real tmpfs for a full disk and a real lock on a SQLite history.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from watchdog.delivery.email import message_id
from watchdog.errors import TickTaken
from watchdog.history import HistoryStore
from watchdog.history.leases import LeaderLease, lease_state
from watchdog.testing.smtp_sink import SmtpSink

SLOW_SQL = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {n}) SELECT count(*) - {n} FROM c"


# ---- sinks and processes


class Hooks:
    """A real HTTP server on 127.0.0.1 recording every webhook POST."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        hooks = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                hooks.requests.append({"headers": dict(self.headers), "body": json.loads(body)})
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def sinks() -> Iterator[tuple[SmtpSink, Hooks]]:
    hooks = Hooks()
    with SmtpSink() as smtp:
        yield smtp, hooks
    hooks.close()


def env() -> dict[str, str]:
    out = dict(os.environ)
    for name in ("WATCHDOG_CONFIG", "WATCHDOG_STATE_DIR"):
        out.pop(name, None)
    return out


class Serve:
    """A ``watchdog serve`` subprocess logging to a file."""

    def __init__(self, root: Path, config: Path, name: str, *args: str):
        self.log_path = root / f"{name}.log"
        self._log = self.log_path.open("w")
        self.proc = subprocess.Popen([sys.executable, "-m", "watchdog", "serve", "--config", str(config), *args],
                                     cwd=root, env=env(), stdout=subprocess.DEVNULL, stderr=self._log)

    @property
    def log(self) -> str:
        return self.log_path.read_text()

    def wait(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self._log.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._log.close()


@pytest.fixture
def serves() -> Iterator[Callable[..., Serve]]:
    started: list[Serve] = []

    def start(root: Path, config: Path, name: str, *args: str) -> Serve:
        started.append(Serve(root, config, name, *args))
        return started[-1]

    yield start
    for served in started:
        served.kill()


def wait_for(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def cli(root: Path, config: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "watchdog", *args, "--config", str(config)], cwd=root, env=env(),
                          capture_output=True, text=True, timeout=timeout)


# ---- a project


def build_shop(path: Path) -> None:
    """items: 10 rows, 2 without a name: the not_null check on name fails."""
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)")
        conn.executemany("INSERT INTO items VALUES (?, ?)", [(i, None if i in (3, 7) else f"item {i}")
                                                             for i in range(10)])


def project(root: Path, *, history: str, smtp: SmtpSink | None = None, hooks: Hooks | None = None,
            schedule: str = "{every: 2s}", lease_s: float = 15, reports: str = "reports", extra: str = "",
            database: str = "sqlite:///shop.db", checks: str = "quick.yaml", history_wait_s: float = 60,
            delivery_lease_s: float = 120) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    build_shop(root / "shop.db")
    (root / "quick.yaml").write_text("tables:\n  items:\n    - not_null: id\n    - not_null: name\n")
    deliver = [f"      - file: {{dir: {reports}}}"]
    if smtp is not None:
        deliver.append("      - email: {to: [ops@example.com], on: always}")
    if hooks is not None:
        deliver.append(f"      - webhook: {{url: \"{hooks.url}\", on: always}}")
    config = root / "watchdog.yaml"
    config.write_text(f"""\
state_dir: state
history: {{url: "{history}", wait_s: {history_wait_s}}}
scheduler: {{lease_s: {lease_s}, misfire_grace_s: 30, outbox_interval_s: 60, delivery_attempts: 2,
             delivery_wait_max_s: 0.2, delivery_lease_s: {delivery_lease_s}}}
smtp: {{host: 127.0.0.1, port: {smtp.port if smtp else 1}, timeout_s: 5}}
databases:
  shop: {{url: "{database}", timeout_s: 60}}
audits:
  quick:
    database: shop
    checks: [{checks}]
    schedule: {schedule}
    deliver:
{chr(10).join(deliver)}
{extra}""")
    return config


def tick_rows(url: str) -> list[Any]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return conn.exec_driver_sql("SELECT audit, scheduled_at, run_id, claimed_by, token FROM wd_ticks "
                                        "ORDER BY scheduled_at").all()
    finally:
        engine.dispose()


def all_runs(url: str, audit: str = "quick") -> list[Any]:
    store = HistoryStore(url)
    try:
        return list(reversed(store.list_runs(audit, limit=1000)))
    finally:
        store.close()


# ---- the lease itself, on every kind of history database


def test_the_lease_has_one_holder_expires_and_fences_the_old_leader(database):
    store = HistoryStore(database.url)
    try:
        first, second = LeaderLease(store, lease_s=1.0), LeaderLease(store, lease_s=1.0)
        assert first.acquire_or_renew() and first.leading and first.token == 1
        assert not second.acquire_or_renew() and not second.leading
        assert first.acquire_or_renew() and first.token == 1          # renewed, same token
        time.sleep(1.3)                                                # the leader stops renewing (dies)
        assert not first.leading                                       # its own clock says so too
        assert second.acquire_or_renew() and second.token == 2         # taken over, a new fencing token
        assert not first.acquire_or_renew() and first.token == 0       # the old leader is fenced off
        state = lease_state(store)
        assert state is not None and state.holder == second.instance and state.token == 2
        # a tick is claimed once, and never by a fenced leader
        store.start_run("r-new", "quick", tick="2026-01-01T00:00:00.000000Z", claimed_by=second.instance, token=2)
        with pytest.raises(TickTaken, match="already claimed by run r-new"):
            store.start_run("r-dup", "quick", tick="2026-01-01T00:00:00.000000Z", claimed_by=second.instance,
                            token=2)
        with pytest.raises(TickTaken, match="no longer leads"):
            store.start_run("r-old", "quick", tick="2026-01-01T00:00:02.000000Z", claimed_by=first.instance,
                            token=1)
        assert [r.id for r in store.list_runs("quick")] == ["r-new"]
        second.release()
        assert first.acquire_or_renew() and first.token == 3           # a released lease is free at once
    finally:
        store.close()


# ---- SQLite history: one serve per history


def test_a_second_serve_on_a_sqlite_history_refuses_to_start_with_one_line(tmp_path, serves):
    config = project(tmp_path, history="sqlite:///history.db", schedule="{every: 1h}")
    first = serves(tmp_path, config, "first")
    wait_for(lambda: "INFO watchdog.scheduler: serving " in first.log, 60, "the first serve to start")
    second = cli(tmp_path, config, "serve", "--for", "5")
    assert second.returncode == 3, second
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1, second.stderr
    assert re.fullmatch(rf"error: another `watchdog serve` \(pid {first.proc.pid} on \S+\) already serves the SQLite "
                        rf"history {re.escape(str(tmp_path / 'history.db'))}; .*PostgreSQL.*", lines[0]), lines[0]
    assert first.proc.poll() is None                                    # the first one serves on
    first.proc.send_signal(signal.SIGTERM)
    assert first.wait(timeout=30) == 0, first.log
    assert cli(tmp_path, config, "serve", "--for", "0.5").returncode == 0  # the lock went with its process


# ---- a locked history database is waited for


def hold_sqlite_lock(path: Path, seconds: float) -> subprocess.Popen:
    """Another process holding an exclusive write lock on ``path`` for ``seconds``; prints 'locked'."""
    code = ("import sqlite3, sys, time\n"
            f"c = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
            "c.execute('BEGIN EXCLUSIVE')\n"
            "print('locked', flush=True)\n"
            f"time.sleep({seconds})\n"
            "c.execute('COMMIT')\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def test_a_run_waits_for_a_locked_history_and_completes(tmp_path):
    config = project(tmp_path, history="sqlite:///history.db", schedule="{every: 1h}")
    assert cli(tmp_path, config, "run", "quick").returncode == 1           # creates the history; findings fail
    holder = hold_sqlite_lock(tmp_path / "history.db", 10)
    began = time.monotonic()
    done = cli(tmp_path, config, "run", "quick")
    waited = time.monotonic() - began
    holder.wait(timeout=30)
    assert done.returncode == 1, done.stderr                            # the findings decide, not the lock
    assert waited >= 8, waited                                          # it did wait for the lock
    runs = all_runs(f"sqlite:///{tmp_path / 'history.db'}")
    assert [r.status for r in runs] == ["failed", "failed"]
    assert runs[-1].deliveries and {d.status for d in runs[-1].deliveries} == {"sent"}


def test_a_history_locked_longer_than_wait_s_is_one_clear_line(tmp_path):
    config = project(tmp_path, history="sqlite:///history.db", schedule="{every: 1h}", history_wait_s=2)
    assert cli(tmp_path, config, "run", "quick").returncode == 1
    holder = hold_sqlite_lock(tmp_path / "history.db", 600)          # held until the run gave up
    try:
        done = cli(tmp_path, config, "run", "quick")
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert done.returncode == 3
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert re.fullmatch(r"error: the history database sqlite:///\S+history\.db stayed unavailable \(waited \d+s, "
                        r"history\.wait_s 2\): database is locked", lines[0]), lines[0]
    assert "INSERT" not in done.stderr and "Traceback" not in done.stderr


# ---- a full reports disk: the alert still goes out


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs, filled up to the last block."""
    mount = tmp_path / "reports"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], check=True)
    try:
        with open(mount / "filler", "wb", buffering=0) as handle:
            try:
                while True:
                    handle.write(b"x" * 4096)
            except OSError:
                pass
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_reports_disk_still_records_the_findings_and_sends_the_alert(tmp_path, full_disk, sinks):
    smtp, hooks = sinks
    config = project(tmp_path, history="sqlite:///history.db", smtp=smtp, hooks=hooks, schedule="{every: 1h}")
    done = cli(tmp_path, config, "run", "quick")
    assert done.returncode == 1, done.stderr                              # failed findings, not an error
    assert "No space left on device" in done.stderr + done.stdout
    runs = all_runs(f"sqlite:///{tmp_path / 'history.db'}")
    assert len(runs) == 1
    run = runs[0]
    assert run.status == "failed" and run.summary == {"checks": 2, "passed": 1, "warned": 0, "failed": 1, "errors": 0}
    assert "cannot file the run" in (run.error or "") and "No space left on device" in (run.error or "")
    store = HistoryStore(f"sqlite:///{tmp_path / 'history.db'}")
    try:
        findings = {f["name"]: f for f in store.findings_of(run.id)}
    finally:
        store.close()
    assert findings["items.name.not_null"]["failing"] == 2
    # the e-mail arrived, saying filing failed, with the findings attached from memory
    [message] = smtp.messages
    assert message["X-Watchdog-Run"] == run.id
    text = message.get_body(("plain",)).get_content()
    assert "FILING FAILED" in text and "No space left on device" in text
    attached = [part for part in message.iter_attachments() if part.get_filename() == "findings.json"]
    assert json.loads(attached[0].get_content())["run_id"] == run.id
    # the webhook too, carrying the findings
    [hook] = hooks.requests
    assert hook["headers"]["Idempotency-Key"] == run.id
    assert "No space left on device" in hook["body"]["filing_error"] and hook["body"]["findings"]["run_id"] == run.id
    assert {(d.channel, d.status) for d in run.deliveries} >= {("email", "sent"), ("webhook", "sent")}
    leftovers = [p for p in full_disk.rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".latest")]
    assert leftovers == []                                                # no temporary file left behind


# ---- delivery across a crash


def test_a_send_cut_by_a_crash_is_retried_after_its_lease_with_the_same_message_id(tmp_path, sinks):
    """kill -9 while the e-mail is being sent: the claim stays ``sending`` for its lease (no other
    process sends it meanwhile), then the outbox retries it with the same Message-ID."""
    from watchdog.delivery.outbox import flush_outbox
    from watchdog.settings import load_settings

    LEASE_S = 8  # noqa: N806
    smtp, _hooks = sinks
    import socket

    silent = socket.socket()                      # an SMTP server that accepts and never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    config = project(tmp_path, history="sqlite:///history.db", schedule="{every: 1h}", delivery_lease_s=LEASE_S)
    config.write_text(config.read_text().replace("port: 1,", f"port: {silent.getsockname()[1]},")
                      .replace("      - file: {dir: reports}", "      - file: {dir: reports}\n"
                               "      - email: {to: [ops@example.com], on: always}"))
    history_url = f"sqlite:///{tmp_path / 'history.db'}"
    proc = subprocess.Popen([sys.executable, "-m", "watchdog", "run", "quick", "--config", str(config)], cwd=tmp_path,
                            env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def sending() -> list[Any]:
        if not (tmp_path / "history.db").exists():
            return []
        return [d for r in all_runs(history_url) for d in r.deliveries
                if d.status == "sending" and d.channel == "email"]

    try:
        [claim] = wait_for(sending, 90, "the e-mail being sent")
        claimed_at = time.monotonic()
    finally:
        proc.kill()                                # kill -9 in the middle of the SMTP conversation
        proc.wait()
        silent.close()
    crashed = claim.run_id
    config.write_text(re.sub(r"port: \d+,", f"port: {smtp.port},", config.read_text()))   # the server is back
    settings = load_settings(config)
    store = HistoryStore(history_url)
    try:
        assert flush_outbox(settings, store) == []             # within the lease: nobody else sends it
        assert time.monotonic() < claimed_at + LEASE_S, "too slow to test within the lease"
        assert smtp.messages == []
        time.sleep(max(0.0, claimed_at + LEASE_S + 0.5 - time.monotonic()))   # past scheduler.delivery_lease_s
        [retried] = wait_for(lambda: flush_outbox(settings, store), 10,   # what every run and the daemon do first
                             "the outbox to retry the abandoned claim")
        assert (retried.run_id, retried.channel, retried.status) == (crashed, "email", "sent")
        assert flush_outbox(settings, store) == []             # sent: never again
    finally:
        store.close()
    [message] = smtp.messages
    assert message["X-Watchdog-Run"] == crashed
    assert message["Message-ID"] == message_id(crashed, "ops@example.com")   # the receiver can drop a duplicate
    [run] = all_runs(history_url)
    assert [(d.channel, d.status) for d in run.deliveries if d.channel == "email"] == [("email", "sent")]


# ---- several serve instances on one PostgreSQL history


def stamp_of(line: str) -> datetime:
    return datetime.fromisoformat(line.split(" ", 1)[0].replace("Z", "+00:00"))


def due_times(log: str, pattern: str) -> set[str]:
    """The due times (to the second) named by log lines matching ``pattern``."""
    return {m.group(1) for m in re.finditer(pattern + r" (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)", log)}


SERVE_S = 62


def test_three_serves_on_one_postgresql_history_run_every_tick_once(tmp_path, make_database, serves, sinks):
    """Three ``serve`` for 62 s of ticks of an every-2s audit, plus a manual ``watchdog run`` in the middle: one
    instance leads; every tick is run once, and every run is delivered once by e-mail and webhook,
    into a folder of its own."""
    smtp, hooks = sinks
    history = make_database("postgresql").url
    config = project(tmp_path, history=history, smtp=smtp, hooks=hooks, lease_s=6)
    started = [serves(tmp_path, config, f"serve{i}") for i in range(3)]
    wait_for(lambda: tick_rows(history) if all("serving" in s.log for s in started) else [], 60, "a first tick")
    began = time.monotonic()
    shown = cli(tmp_path, config, "status", "--json")
    assert shown.returncode == 0, shown.stderr
    status = json.loads(shown.stdout)
    leader = status["lease"]["leader"]
    assert leader and status["lease"]["token"] >= 1 and status["lease"]["lease_expires_in_s"] > 0
    assert sorted(m["role"] for m in status["members"]) == ["leader", "standby", "standby"], status
    assert [a["audit"] for a in status["audits"]] == ["quick"] and status["audits"][0]["next_run_source"] == "job store"
    text = cli(tmp_path, config, "status").stdout
    assert f"leader:   {leader} (lease token" in text and "standbys: 2" in text and "quick: every 2s, next" in text
    manual = cli(tmp_path, config, "run", "quick")                  # a manual run during the ticks
    assert manual.returncode == 1, manual.stderr
    time.sleep(max(0.0, began + SERVE_S - time.monotonic()))
    # stop the standbys first, then the leader: no hand-over at the end (kill -9 below tests that)
    by_pid = {served.proc.pid: served for served in started}
    chief = by_pid[int(leader.split(":")[1])]
    for served in [*(s for s in started if s is not chief), chief]:
        served.proc.send_signal(signal.SIGTERM)
        assert served.wait(timeout=60) == 0, served.log
    logs = {served.log_path.name: served.log for served in started}
    leaders = [name for name, log in logs.items() if " leads (lease token" in log]
    assert len(leaders) == 1, logs                                  # nobody took over: one leader all along
    log = logs[leaders[0]]

    ticks = tick_rows(history)
    runs = all_runs(history)
    by_tick = {t.run_id: t for t in ticks}
    scheduled = [r for r in runs if r.id in by_tick]
    manual_runs = [r for r in runs if r.id not in by_tick]
    assert len(manual_runs) == 1 and len(scheduled) == len(ticks)  # one run per claimed tick, one manual run
    assert {t.claimed_by for t in ticks} == {leader} and len({t.token for t in ticks}) == 1
    # every due time from the first tick to the last was run, or skipped because the previous run was still going
    due = sorted(datetime.fromisoformat(t.scheduled_at.replace("Z", "+00:00")) for t in ticks)
    gaps = [round((b - a).total_seconds(), 3) for a, b in zip(due, due[1:], strict=False)]
    assert all(gap % 2 == 0 and gap > 0 for gap in gaps), gaps
    overlapped = due_times(log, "skipped the run due at")
    expected = int((due[-1] - due[0]).total_seconds() // 2) + 1
    print(f"{len(started)} serves, {(due[-1] - due[0]).total_seconds():.0f}s of ticks: {len(ticks)} runs, "
          f"{len(overlapped)} due times skipped (previous run still going), {expected} due times expected")
    assert len(ticks) + len(overlapped) in range(expected - 1, expected + 2), (len(ticks), overlapped, expected)
    # the edges: the first tick within one interval of leading, the last within one of stopping
    lead_at = stamp_of(next(line for line in log.splitlines() if " leads (lease token" in line))
    stop_at = stamp_of(next(line for line in log.splitlines() if "stopping (" in line))
    assert (due[0] - lead_at).total_seconds() <= 2 * 2 + 1 and (stop_at - due[-1]).total_seconds() <= 2 * 2 + 1
    assert len(ticks) + len(overlapped) >= (stop_at - lead_at).total_seconds() // 2 - 1
    # each run delivered exactly once, by e-mail and by webhook; each in a folder of its own
    assert Counter(m["X-Watchdog-Run"] for m in smtp.messages) == Counter(r.id for r in runs)
    assert Counter(h["headers"]["Idempotency-Key"] for h in hooks.requests) == Counter(r.id for r in runs)
    assert len({m["Message-ID"] for m in smtp.messages}) == len(runs)
    for run in runs:
        assert run.status == "failed", run
        assert sorted((d.channel, d.status) for d in run.deliveries) == [
            ("email", "sent"), ("file", "sent"), ("webhook", "sent")], run
    folders = [Path(r.out_dir or "") for r in runs]
    assert len(set(folders)) == len(runs)
    assert all(f.name == r.id and (f / "findings.json").is_file() and (f / "audit.json").is_file()
               for f, r in zip(folders, runs, strict=True))
    latest = (tmp_path / "reports" / "quick" / "latest").resolve()
    finished = max(runs, key=lambda r: r.finished_at or "")
    assert latest == Path(finished.out_dir or "").resolve()


def test_kill_9_of_the_leader_mid_run_a_standby_leads_within_the_bound(tmp_path, make_database, serves, sinks):
    """Two serves, lease 3 s (bound: 3 + 3/3 = 4 s): kill -9 the leader while its run counts (~3 s); the standby
    leads within the bound, records the run ``interrupted`` (never delivered), and runs on."""
    smtp, hooks = sinks
    history = make_database("postgresql").url
    conn = sqlite3.connect(":memory:")
    began = time.perf_counter()
    conn.execute(SLOW_SQL.format(n=300_000)).fetchone()
    rows = int(300_000 / max(time.perf_counter() - began, 1e-3) * 3)            # a run of about 3 s
    config = project(tmp_path, history=history, smtp=smtp, hooks=hooks, lease_s=3, checks="slow.yaml")
    (tmp_path / "slow.yaml").write_text(f"custom_sql:\n  - name: count_up\n    sql: {SLOW_SQL.format(n=rows)}\n")
    first = serves(tmp_path, config, "first")
    wait_for(lambda: lease_holder(history), 60, "a leader")
    second = serves(tmp_path, config, "second")
    wait_for(lambda: "serving" in second.log, 60, "the standby to start")
    by_pid = {first.proc.pid: first, second.proc.pid: second}

    def running_tick() -> Any:
        running = {r.id for r in all_runs(history) if r.status == "running"}
        return next((t for t in tick_rows(history) if t.run_id in running), None)

    tick = wait_for(running_tick, 60, "a scheduled run under way")
    leader = by_pid[int(tick.claimed_by.split(":")[1])]
    standby = second if leader is first else first
    os.kill(leader.proc.pid, signal.SIGKILL)
    killed_at = time.monotonic()
    new = wait_for(lambda: (lambda h: h if h and h[0] != tick.claimed_by else None)(lease_holder(history)), 30,
                   "a new leader")
    took = time.monotonic() - killed_at
    assert new[0].split(":")[1] == str(standby.proc.pid) and new[1] > tick.token
    print(f"kill -9 of the leader -> a standby leads after {took:.2f}s (bound {3 + 3 / 3:g}s)")
    assert took <= 3 + 3 / 3 + 1.5, took                                       # the bound, plus polling slack
    interrupted = wait_for(lambda: [r for r in all_runs(history) if r.id == tick.run_id and r.status == "interrupted"],
                           30, "the killed run to be marked interrupted")[0]
    wait_for(lambda: [t for t in tick_rows(history) if t.token == new[1] and
                      any(r.id == t.run_id and r.status == "passed" for r in all_runs(history))], 60,
             "a run by the new leader")
    standby.proc.send_signal(signal.SIGTERM)
    assert standby.wait(timeout=60) == 0, standby.log
    runs = all_runs(history)
    assert interrupted.deliveries == [] and "stopped leading" in (interrupted.error or "")
    assert tick.run_id not in [m["X-Watchdog-Run"] for m in smtp.messages]
    delivered = [r.id for r in runs if r.status != "interrupted"]
    assert Counter(m["X-Watchdog-Run"] for m in smtp.messages) == Counter(delivered)     # nothing twice
    assert Counter(h["headers"]["Idempotency-Key"] for h in hooks.requests) == Counter(delivered)
    ticks = tick_rows(history)
    assert len({(t.audit, t.scheduled_at) for t in ticks}) == len(ticks) == len({t.run_id for t in ticks})
    assert f"marked 1 run(s) of the previous leader as interrupted: {tick.run_id}" in standby.log


def lease_holder(url: str) -> tuple[str, int] | None:
    """(holder, token) of a live lease."""
    store = HistoryStore(url)
    try:
        state = lease_state(store)
    finally:
        store.close()
    return (state.holder, state.token) if state and state.holder and (state.expires_in or 0) > 0 else None


# ---- stopping: statements cancelled on the server


def active_watchdog_queries(db: Any) -> list[str]:
    with db.engine.connect() as conn:
        return [row[0] for row in conn.execute(sa.text(
            "SELECT query FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' "
            "AND application_name = 'watchdog' AND pid <> pg_backend_pid()")).all()]


def test_losing_the_lease_or_a_forced_stop_cancels_the_running_statement_on_the_server(tmp_path, make_database,
                                                                                         serves, sinks):
    """A PostgreSQL statement that would run for minutes (timeout_s 60): when the lease is taken away,
    the daemon stops leading and cancels it on the server at once; the run is ``interrupted`` and not
    delivered. Leading again, a forced stop (SIGTERM twice) cancels the next one the same way."""
    smtp, hooks = sinks
    history = make_database("postgresql").url
    audited = make_database("postgresql")
    audited.run("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)")
    config = project(tmp_path, history=history, smtp=smtp, hooks=hooks, lease_s=3, checks="slow.yaml",
                     database=audited.url, schedule="{every: 1s}")
    (tmp_path / "slow.yaml").write_text(f"custom_sql:\n  - name: count_up\n    sql: {SLOW_SQL.format(n=10**9)}\n")
    served = serves(tmp_path, config, "serve")
    first = wait_for(lambda: active_watchdog_queries(audited), 90, "the slow statement on the server")
    assert first
    engine = sa.create_engine(history)
    with engine.begin() as conn:           # another instance takes the lease (a split brain, or a long pause)
        conn.exec_driver_sql("UPDATE wd_leases SET holder = 'elsewhere:1:abc', token = token + 1, "
                             "expires_at = EXTRACT(EPOCH FROM clock_timestamp()) + 600")
    taken = time.monotonic()
    wait_for(lambda: not active_watchdog_queries(audited), 30, "the statement to be cancelled")
    assert time.monotonic() - taken <= 3 + 3 / 3 + 2                         # the lease's bound, not the 60 s timeout
    [run] = wait_for(lambda: [r for r in all_runs(history) if r.status != "running"], 30, "the run to end")
    assert run.status == "interrupted" and run.deliveries == [], run
    assert "stopped leading" in served.log and "cancelled 1 running statement(s)" in served.log
    with engine.begin() as conn:           # the other instance goes away: this one leads again
        conn.exec_driver_sql("UPDATE wd_leases SET expires_at = 0")
    wait_for(lambda: active_watchdog_queries(audited), 60, "the next slow statement")
    served.proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    served.proc.send_signal(signal.SIGTERM)
    stopped = time.monotonic()
    assert served.wait(timeout=30) == 130, served.log
    wait_for(lambda: not active_watchdog_queries(audited), 10, "the statement to be cancelled at stop")
    assert time.monotonic() - stopped < 10
    runs = all_runs(history)
    assert [r.status for r in runs] == ["interrupted", "interrupted"], runs
    assert smtp.messages == [] and hooks.requests == []
    assert "1 running statement(s) cancelled on the server" in served.log
    engine.dispose()


# ---- cron / Kubernetes CronJob: `watchdog run AUDIT --tick auto`


def test_a_cron_job_started_twice_for_one_time_runs_once(tmp_path, sinks):
    smtp, hooks = sinks
    config = project(tmp_path, history="sqlite:///history.db", smtp=smtp, hooks=hooks, schedule='"0 0 1 1 *"')
    assert cli(tmp_path, config, "run", "quick").returncode == 1          # the history exists; a plain run
    year = datetime.now(UTC).year
    command = [sys.executable, "-m", "watchdog", "run", "quick", "--tick", "auto", "--config", str(config)]
    both = [subprocess.Popen(command, cwd=tmp_path, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for _ in range(2)]
    outcomes = sorted((proc.wait(timeout=120), proc.stderr.read() if proc.stderr else "") for proc in both)
    assert [code for code, _ in outcomes] == [0, 1], outcomes                 # one ran (failed findings), one did not
    assert re.search(rf"skipped: audit quick: the run due at {year}-01-01T00:00:00.000000Z was already claimed by "
                     r"run \S+", outcomes[0][1]), outcomes[0][1]
    [tick] = tick_rows(f"sqlite:///{tmp_path / 'history.db'}")
    assert tick.scheduled_at == f"{year}-01-01T00:00:00.000000Z" and tick.claimed_by.startswith("run:")
    runs = all_runs(f"sqlite:///{tmp_path / 'history.db'}")
    assert len(runs) == 2 and tick.run_id in [r.id for r in runs]
    assert Counter(m["X-Watchdog-Run"] for m in smtp.messages) == Counter(r.id for r in runs)
    unscheduled = project(tmp_path / "plain", history="sqlite:///history.db", schedule="null")
    refused = cli(tmp_path / "plain", unscheduled, "run", "quick", "--tick", "auto")
    assert refused.returncode == 3 and "--tick auto: audit 'quick' has no schedule" in refused.stderr
