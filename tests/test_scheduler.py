"""The daemon (``watchdog serve``) and the forecast (``watchdog schedule``), through the real CLI.

Each test writes its own project into a temporary folder (SQLite databases built with sqlite3, a tiny
suite, the history in ``history.db``) and runs ``python -m watchdog`` in a subprocess; the history
database is polled through HistoryStore rather than sleeping blindly.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from watchdog.cli import cli
from watchdog.daemon.apscheduler_wiring import JOBS_TABLE, OUTBOX_JOB_ID, create_scheduler, sync_jobs
from watchdog.daemon.cron import cron_trigger, crontab_weekdays
from watchdog.daemon.triggers import next_fire_times
from watchdog.history import HistoryStore, RunRecord
from watchdog.settings import load_settings

PG_PASSWORD = "s3cret-pw-9"
COUNT_TO = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {n}) SELECT count(*) - {n} FROM c"


# ---- helpers


def build_shop(path: Path) -> None:
    """items: 10 rows, 2 without a name (a not_null check on name fails)."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)")
    conn.executemany("INSERT INTO items VALUES (?, ?)", [(i, None if i in (3, 7) else f"item {i}") for i in range(10)])
    conn.commit()
    conn.close()


def write_project(root: Path, audits: str, *, slow_rows: int = 1000) -> Path:
    """A config (returned), the shop database and two suites: ``quick.yaml`` (fails: names missing)
    and ``slow.yaml`` (one custom_sql counting to ``slow_rows``; passes)."""
    root.mkdir(parents=True, exist_ok=True)
    build_shop(root / "shop.db")
    (root / "quick.yaml").write_text("tables:\n  items:\n    - not_null: id\n    - unique: id\n    - not_null: name\n")
    (root / "slow.yaml").write_text(f"custom_sql:\n  - name: count_up\n    sql: {COUNT_TO.format(n=slow_rows)}\n")
    config = root / "watchdog.yaml"
    config.write_text(f"""\
state_dir: state
history: {{url: "sqlite:///history.db"}}
scheduler: {{misfire_grace_s: 30, outbox_interval_s: 60}}
databases:
  shop: {{url: "sqlite:///shop.db"}}
  gone: {{url: "sqlite:///missing/nothing.db"}}
  pgdown: {{url: "postgresql+psycopg://u:{PG_PASSWORD}@127.0.0.1:1/x", timeout_s: 3}}
audits:
{audits}""")
    return config


def history(root: Path) -> HistoryStore:
    return HistoryStore(f"sqlite:///{root / 'history.db'}")


def runs_of(root: Path, audit: str | None = None) -> list[RunRecord]:
    """Runs, oldest first (an empty list before the history database exists)."""
    if not (root / "history.db").exists():
        return []
    store = history(root)
    try:
        return list(reversed(store.list_runs(audit, limit=500)))
    finally:
        store.close()


def wait_for(predicate: Callable[[], Any], timeout: float, what: str, proc: subprocess.Popen | None = None) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the daemon exited ({proc.returncode}) while waiting for {what}")
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def instant(text: str | None) -> datetime:
    assert text, "a time stamp is missing"
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def clean_env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("WATCHDOG_CONFIG", "WATCHDOG_STATE_DIR"):
        env.pop(name, None)
    return env


class Served:
    """A ``watchdog serve`` subprocess; stderr goes to a file (no pipe to fill up)."""

    def __init__(self, root: Path, config: Path, *args: str):
        self.root = root
        self.log_path = root / "serve.log"
        self._log = self.log_path.open("w")
        self.started = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, "-m", "watchdog", "serve", "--config", str(config), *args],
                                     cwd=root, env=clean_env(), stdout=subprocess.DEVNULL, stderr=self._log)

    def signal(self, signum: int = signal.SIGTERM) -> None:
        self.proc.send_signal(signum)

    def wait(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self._log.close()

    @property
    def log(self) -> str:
        return self.log_path.read_text()

    def runs(self, audit: str | None = None) -> list[RunRecord]:
        """Runs so far, once the daemon has set up its history database (before that, opening it
        here could race the daemon creating its tables)."""
        return runs_of(self.root, audit) if "INFO watchdog.scheduler: serving " in self.log else []

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._log.close()


@pytest.fixture
def serve_process() -> Iterator[Callable[..., Served]]:
    started: list[Served] = []

    def start(root: Path, config: Path, *args: str) -> Served:
        served = Served(root, config, *args)
        started.append(served)
        return served

    yield start
    for served in started:
        served.kill()


@pytest.fixture(scope="module")
def rows_per_second() -> int:
    """How far the counting CTE gets in one second on this machine (so slow runs last what we ask)."""
    conn = sqlite3.connect(":memory:")
    n, best = 300_000, float("inf")
    for _ in range(3):           # the best of three: a busy machine must not make the runs too short
        began = time.perf_counter()
        conn.execute(COUNT_TO.format(n=n)).fetchone()
        best = min(best, time.perf_counter() - began)
    return int(n / max(best, 1e-3))


def assert_filed(run: RunRecord, root: Path) -> None:
    assert run.out_dir, run
    run_dir = Path(run.out_dir)
    assert run_dir.parent == root / "reports" / run.audit
    for name in ("findings.json", "report.md", "report.html", "audit.json"):
        assert (run_dir / name).is_file(), f"{run.id}: {name} missing"
    assert json.loads((run_dir / "audit.json").read_text())["run_id"] == run.id


# ---- serve: a fleet of audits for a few seconds


FLEET = """\
  quick:
    database: shop
    checks: [quick.yaml]
    schedule: {every: 1s}
    deliver:
      - file: {dir: reports}
  gone:
    database: gone
    checks: [quick.yaml]
    schedule: {every: 1s}
  pgdown:
    database: pgdown
    checks: [quick.yaml]
    schedule: {every: 1s}
  manual:
    database: shop
    checks: [quick.yaml]
"""
FLEET_SECONDS = 4.5


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``serve --for 4.5`` with an every-second audit, two whose databases are unreachable and one
    without a schedule; beforehand, a run left ``running`` by a crash and the job of an audit since
    removed from the config."""
    root = tmp_path_factory.mktemp("fleet")
    config = write_project(root, FLEET)
    store = history(root)
    store.start_run("crashed-1", "quick", started_at="2026-01-01T00:00:00Z")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a process that has exited: the run's owner crashed
    with store.engine.begin() as conn:
        conn.exec_driver_sql(f"UPDATE wd_runs SET pid = {gone.pid} WHERE id = 'crashed-1'")
    store.close()
    scheduler = create_scheduler(load_settings(config))
    scheduler.start(paused=True)
    scheduler.add_job("watchdog.scheduler:run_audit_job", "interval", args=[str(config), "old"], id="audit:old",
                      hours=1)
    scheduler.shutdown(wait=False)
    served = Served(root, config, "--for", str(FLEET_SECONDS))
    try:
        code = served.wait(timeout=60)
    finally:
        served.kill()
    return {"root": root, "code": code, "log": served.log, "elapsed": time.monotonic() - served.started}


def fleet_runs(fleet: dict[str, Any], audit: str | None = None) -> list[RunRecord]:
    return [r for r in runs_of(fleet["root"], audit) if r.id != "crashed-1"]


def test_serve_runs_an_interval_audit_on_time_and_files_every_run(fleet):
    assert fleet["code"] == 0, fleet["log"]
    runs = fleet_runs(fleet, "quick")
    # first fire one interval after start, then each second: 4 runs in 4.5 s (one more or less: timing)
    assert 3 <= len(runs) <= 5, (len(runs), fleet["log"])
    for run in runs:
        assert run.status == "failed", run          # the suite finds the two missing names
        assert run.finished_at is not None
        assert_filed(run, fleet["root"])
        assert [(d.channel, d.status) for d in run.deliveries] == [("file", "sent")]
    assert (fleet["root"] / "reports" / "quick" / "latest").exists()
    log = fleet["log"]
    assert log.count("audit quick: run started") == len(runs)
    for run in runs:
        assert f"audit quick: run {run.id} failed in " in log


def test_an_unreachable_database_fails_only_its_own_audit(fleet):
    root = fleet["root"]
    for audit in ("gone", "pgdown"):
        runs = runs_of(root, audit)
        assert len(runs) >= 2, (audit, fleet["log"])      # scheduled again after failing
        assert {r.status for r in runs} == {"error"}, runs
    first_failure = min(instant(r.finished_at) for r in runs_of(root, "gone") + runs_of(root, "pgdown"))
    later = [r for r in fleet_runs(fleet, "quick") if instant(r.started_at) >= first_failure]
    assert later and all(r.status == "failed" for r in later)      # the healthy audit kept its pace
    assert runs_of(root, "manual") == []                           # no schedule: not run
    assert all(r.status != "running" for r in runs_of(root))
    assert fleet["code"] == 0                                      # and the daemon kept going to the end


def test_serve_logs_runs_one_line_each_without_secrets(fleet):
    log = fleet["log"]
    lines = log.splitlines()
    assert all(line[:4].isdigit() for line in lines), log        # every line a log record: no tracebacks
    assert "audit manual: not scheduled" in log
    assert "audit pgdown: run " in log and " error in " in log
    assert "stopping (--for 4.5s elapsed)" in log and "stopped cleanly" in log
    assert PG_PASSWORD not in log
    for run in runs_of(fleet["root"], "pgdown"):
        assert PG_PASSWORD not in json.dumps(run.to_json_dict())


def test_the_job_store_is_kept_in_the_history_database(fleet):
    engine = sa.create_engine(f"sqlite:///{fleet['root'] / 'history.db'}")
    try:
        with engine.connect() as conn:
            ids = {row.id for row in conn.execute(sa.text(f"SELECT id FROM {JOBS_TABLE}"))}
    finally:
        engine.dispose()
    assert ids == {"audit:quick", "audit:gone", "audit:pgdown", OUTBOX_JOB_ID}    # audit:old removed
    assert "removed job audit:old: no longer configured" in fleet["log"]


def test_start_up_marks_runs_left_running_by_a_crash_as_interrupted(fleet):
    crashed = history(fleet["root"]).get_run("crashed-1")
    assert crashed is not None and crashed.status == "interrupted" and crashed.finished_at
    assert "marked 1 run(s) left running by an earlier stop as interrupted: crashed-1" in fleet["log"]


# ---- serve: slow runs, overlap and stopping


def slow_audit(seconds: float, rows_per_second: int) -> tuple[str, int]:
    return ("  slow:\n    database: shop\n    checks: [slow.yaml]\n    schedule: {every: 1s}\n"
            "    deliver:\n      - file: {dir: reports}\n", max(int(seconds * rows_per_second), 100_000))


def test_a_run_longer_than_its_interval_never_overlaps_and_sigterm_lets_it_finish(tmp_path, serve_process,
                                                                                    rows_per_second):
    audits, rows = slow_audit(2.5, rows_per_second)  # margin: the machine may be quicker than when timed
    config = write_project(tmp_path, audits, slow_rows=rows)
    served = serve_process(tmp_path, config)
    # one run finished, the next one under way: stop now, in the middle of it
    running = wait_for(lambda: [r for r in served.runs("slow") if r.status == "running" and len(served.runs()) >= 2],
                       40, "a finished run and a running one", served.proc)[0]
    served.signal(signal.SIGTERM)
    stopped_at = time.monotonic()
    assert served.wait(timeout=30) == 0, served.log
    waited = time.monotonic() - stopped_at
    runs = runs_of(tmp_path, "slow")
    assert len(runs) >= 2 and {r.status for r in runs} == {"passed"}, runs   # all finished: a clean stop
    assert running.id in [r.id for r in runs]
    for earlier, later in pairwise(runs):
        assert instant(later.started_at) >= instant(earlier.finished_at), (earlier, later)
    for run in runs:
        assert instant(run.finished_at) - instant(run.started_at) >= timedelta(seconds=1)   # longer than 1s
        assert_filed(run, tmp_path)
    assert "audit slow: skipped the run due at" in served.log       # fires during a run were skipped
    assert "stopping (SIGTERM received): waiting up to 60s for running audit(s) slow" in served.log
    assert waited < 15, waited


def test_a_stop_that_cannot_wait_records_the_running_run_interrupted(tmp_path, serve_process, rows_per_second):
    """Two daemons side by side, each with an 8 s run under way: one gets a second signal, the other
    runs out of --grace. Both leave at once (exit 130) with the run recorded ``interrupted``."""
    audits, rows = slow_audit(8.0, rows_per_second)
    twice = serve_process(tmp_path / "twice", write_project(tmp_path / "twice", audits, slow_rows=rows))
    graceless = serve_process(tmp_path / "grace", write_project(tmp_path / "grace", audits, slow_rows=rows),
                              "--grace", "0.5")
    running = {}
    for served in (twice, graceless):
        running[served] = wait_for(lambda s=served: [r for r in s.runs("slow") if r.status == "running"], 30,
                                   "a running run", served.proc)[0]
    twice.signal(signal.SIGTERM)
    graceless.signal(signal.SIGTERM)
    time.sleep(0.3)
    twice.signal(signal.SIGINT)
    began = time.monotonic()
    assert twice.wait(timeout=10) == 130, twice.log
    assert graceless.wait(timeout=10) == 130, graceless.log
    assert time.monotonic() - began < 6
    for served in (twice, graceless):
        records = runs_of(served.root, "slow")
        assert [(r.id, r.status) for r in records] == [(running[served].id, "interrupted")], served.log
        assert records[0].finished_at is not None
    assert "stopped without waiting (signal received again): 1 run(s) recorded as interrupted" in twice.log
    assert "stopped without waiting (0.5s grace over): 1 run(s) recorded as interrupted" in graceless.log


# ---- serve: start-up


@pytest.mark.parametrize("change, line, message", [
    ('schedule: "0 6 * * * *"', 12, "audits.nightly.schedule: expected a 5-field cron string"),
    ("schedule: {every: 1s}\n    colour: blue", 13, "audits.nightly.colour: unknown field"),
])
def test_a_bad_config_stops_serve_at_start_with_one_line(tmp_path, run_cli, change, line, message):
    config = write_project(tmp_path, f"  nightly:\n    database: shop\n    checks: [quick.yaml]\n    {change}\n")
    result = run_cli("serve", "--config", str(config), timeout=30)
    assert result.returncode == 3
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {config}:{line}: {message}"), result.stderr
    assert not (tmp_path / "history.db").exists()          # nothing started



# ---- schedule


SCHEDULES = """\
  daily:
    database: shop
    checks: [quick.yaml]
    schedule: "0 6 * * *"
  mondays:
    database: shop
    checks: [quick.yaml]
    schedule: "30 7 * * 1"
    timezone: Europe/Paris
  often:
    database: shop
    checks: [quick.yaml]
    schedule: {every: 15m}
  manual:
    database: shop
    checks: [quick.yaml]
"""


def next_six_am(after: datetime) -> list[datetime]:
    first = after.replace(hour=6, minute=0, second=0, microsecond=0)
    if first <= after:
        first += timedelta(days=1)
    return [first + timedelta(days=i) for i in range(3)]


def test_schedule_shows_the_next_run_times_of_each_audit(tmp_path, run_cli):
    config = write_project(tmp_path, SCHEDULES)
    before = datetime.now(UTC)
    result = run_cli("schedule", "--config", str(config), "--json", timeout=30)
    after = datetime.now(UTC)
    assert result.returncode == 0, result.stderr
    entries = {e["audit"]: e for e in json.loads(result.stdout)}
    daily = [datetime.fromisoformat(t) for t in entries["daily"]["next_runs"]]
    assert daily in (next_six_am(before), next_six_am(after))
    mondays = [datetime.fromisoformat(t).astimezone(ZoneInfo("Europe/Paris")) for t in entries["mondays"]["next_runs"]]
    assert [(m.strftime("%a %H:%M")) for m in mondays] == ["Mon 07:30"] * 3     # crontab's 1 is Monday
    assert [b - a for a, b in pairwise(mondays)] == [timedelta(days=7)] * 2
    often = [datetime.fromisoformat(t) for t in entries["often"]["next_runs"]]
    assert before + timedelta(minutes=15) <= often[0] <= after + timedelta(minutes=15)
    assert [b - a for a, b in pairwise(often)] == [timedelta(minutes=15)] * 2
    assert entries["often"]["schedule"] == "every 15m"
    assert entries["manual"] == {"audit": "manual", "schedule": "not scheduled", "scheduled": False,
                                 "timezone": "UTC", "next_runs": []}

    text = CliRunner().invoke(cli, ["schedule", "--config", str(config), "--count", "2"])
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    assert lines[0] == "daily: cron 0 6 * * * (UTC)"
    assert all(line.endswith("06:00:00 UTC") for line in lines[1:3])
    assert "manual: not scheduled" in lines
    assert len(lines) == 4 * 1 + 3 * 2


# ---- triggers and the job store (in process)


@pytest.mark.parametrize("field, expected", [
    ("*", "*"), ("1", "mon"), ("0", "sun"), ("7", "sun"), ("1-5", "mon,tue,wed,thu,fri"), ("0-2", "sun,mon,tue"),
    ("5-7", "sun,fri,sat"), ("*/2", "sun,tue,thu,sat"), ("mon-fri", "mon,tue,wed,thu,fri"), ("SAT,sun", "sun,sat"),
])
def test_crontab_weekdays_count_from_sunday(field, expected):
    assert crontab_weekdays(field) == expected


def test_cron_triggers_mean_what_crontab_means():
    now = datetime(2026, 11, 29, 12, tzinfo=UTC)    # a Sunday

    def names(expr: str, n: int = 4) -> list[str]:
        return [t.strftime("%a %d %H:%M") for t in next_fire_times(cron_trigger(expr), n, now)]

    assert names("0 6 * * 1") == ["Mon 30 06:00", "Mon 07 06:00", "Mon 14 06:00", "Mon 21 06:00"]
    assert names("0 6 * * 7", 1) == names("0 6 * * 0", 1) == ["Sun 06 06:00"]
    # day of month and day of week both restricted: either matches (Monday the 30th, Tuesday the 1st)
    assert names("0 0 1 * 1") == ["Mon 30 00:00", "Tue 01 00:00", "Mon 07 00:00", "Mon 14 00:00"]
    paris = next_fire_times(cron_trigger("30 2 * * *", "Europe/Paris"), 3, datetime(2026, 3, 27, tzinfo=UTC))
    assert [t.isoformat() for t in paris][:2] == ["2026-03-27T02:30:00+01:00", "2026-03-28T02:30:00+01:00"]


def test_sync_keeps_an_unchanged_schedule_and_replaces_a_changed_one(tmp_path):
    config = write_project(tmp_path, "  a:\n    database: shop\n    checks: [quick.yaml]\n    schedule: {every: 1h}\n"
                                     "  b:\n    database: shop\n    checks: [quick.yaml]\n    schedule: '0 6 * * *'\n")
    settings = load_settings(config)

    def synced(settings: Any) -> tuple[Any, dict[str, Any]]:
        scheduler = create_scheduler(settings)
        scheduler.start(paused=True)
        try:
            result = sync_jobs(scheduler, settings)
            return result, {job.id: job.next_run_time for job in scheduler.get_jobs()}
        finally:
            scheduler.shutdown(wait=False)

    first, times = synced(settings)
    assert sorted(first.added) == ["audit:a", "audit:b", "outbox"] and not first.kept and not first.removed
    time.sleep(0.05)
    again, times_again = synced(settings)
    assert sorted(again.kept) == ["audit:a", "audit:b", "outbox"] and times_again == times

    config.write_text(config.read_text().replace("{every: 1h}", "{every: 2h}").replace("  b:\n", "  c:\n"))
    changed, _ = synced(load_settings(config))
    assert changed.added == ["audit:a", "audit:c"] and changed.kept == ["outbox"] and changed.removed == ["audit:b"]


def test_the_job_wrapper_never_raises_and_never_leaves_a_run_running(tmp_path, monkeypatch, caplog):
    import watchdog.run.audit
    from watchdog.daemon.jobs import run_audit_job

    config = write_project(tmp_path, "  quick:\n    database: shop\n    checks: [quick.yaml]\n")

    def disk_full(*_args: Any, **_kwargs: Any) -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(watchdog.run.audit.TolerantFiling, "run", disk_full)  # fails after the scan, unguarded
    caplog.set_level("INFO", logger="watchdog.scheduler")
    assert run_audit_job(str(config.resolve()), "quick") is None
    assert [r.status for r in runs_of(tmp_path)] == ["error"]
    assert "audit quick: run failed after" in caplog.text and "No space left on device" in caplog.text
    assert run_audit_job(str(tmp_path / "nowhere.yaml"), "quick") is None          # even without a config
