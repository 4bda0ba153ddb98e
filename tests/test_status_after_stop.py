"""``watchdog status`` after a ``serve`` stopped: a clean stop (``--for``, SIGTERM) is recorded in the history and
said as such, with when the next run *would* be; a crash (kill -9) is told apart. Real ``serve`` processes on a
real PostgreSQL history and on a SQLite one."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("WATCHDOG_CONFIG", "WATCHDOG_STATE_DIR")}


def _project(root: Path, history: str, schedule: str = "'0 3 * * *'") -> Path:
    with sqlite3.connect(root / "shop.db") as conn:
        conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY)")
        conn.execute("INSERT INTO items VALUES (1)")
    (root / "suite.yaml").write_text("tables:\n  items:\n    - not_null: id\n")
    config = root / "watchdog.yaml"
    config.write_text(f"""\
state_dir: state
history: {{url: "{history}"}}
scheduler: {{lease_s: 3}}
databases:
  shop: {{url: "sqlite:///shop.db"}}
audits:
  nightly:
    database: shop
    checks: [suite.yaml]
    schedule: {schedule}
    deliver: [{{file: {{dir: reports}}}}]
""")
    return config


def _watchdog(root: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "watchdog", *args], cwd=root, env=_env(), capture_output=True,
                          text=True, timeout=timeout)


def _status(root: Path, config: Path) -> tuple[str, dict]:
    text = _watchdog(root, "status", "--config", str(config))
    data = _watchdog(root, "status", "--json", "--config", str(config))
    assert text.returncode == 0 and data.returncode == 0, text.stderr + data.stderr
    return text.stdout, json.loads(data.stdout)


@pytest.fixture(params=["postgresql", "sqlite"])
def history(request, make_database, tmp_path) -> str:
    return make_database("postgresql").url if request.param == "postgresql" else f"sqlite:///{tmp_path / 'h.db'}"


def test_status_after_a_clean_stop_says_so_and_when_the_next_run_would_be(tmp_path, history):
    config = _project(tmp_path, history)
    served = _watchdog(tmp_path, "serve", "--for", "3", "--config", str(config))
    assert served.returncode == 0, served.stderr
    time.sleep(4)  # the lease it gave up is well past: today this read "expired … a standby takes over"
    text, data = _status(tmp_path, config)

    stop = data["lease"]["stopped"]
    assert data["lease"]["leader"] is None and stop["outcome"] == "clean" and stop["reason"] == "--for 3s elapsed"
    stopped_at = datetime.fromisoformat(stop["at"])
    assert 0 < (datetime.now(UTC) - stopped_at).total_seconds() < 60
    assert f"stopped cleanly at {stop['at']}" in text and "--for 3s elapsed" in text
    assert "expired" not in text and "a standby takes over" not in text
    assert "no standby is running" in text
    [audit] = data["audits"]
    next_run = datetime.fromisoformat(audit["next_run"])
    assert next_run > datetime.now(UTC) and (next_run.hour, next_run.minute) == (3, 0)
    assert audit["next_run_source"] == "forecast"
    assert "next runs (if a `watchdog serve` were running; none is):" in text
    assert f"  nightly: cron 0 3 * * * (UTC), would run {audit['next_run']} (forecast)" in text


def test_status_after_a_crash_says_the_lease_ran_out_without_a_clean_stop(tmp_path, history):
    config = _project(tmp_path, history)
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "watchdog", "serve", "--config", str(config)], cwd=tmp_path,
                            env=_env(), stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + 60
        while " leads (lease token" not in (tmp_path / "serve.log").read_text():
            assert time.monotonic() < deadline and proc.poll() is None, (tmp_path / "serve.log").read_text()
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
    time.sleep(4)  # lease_s 3: the lease ran out
    text, data = _status(tmp_path, config)
    assert "stopped" not in data["lease"]
    assert "without a clean stop: it crashed or lost the history database" in text
    assert "a standby takes over" not in text  # there is none


def test_a_stop_of_a_standby_does_not_hide_the_leaders_lease(tmp_path, make_database):
    """HA stays as it was: while a leader serves, a standby's clean stop changes nothing in what status says."""
    history = make_database("postgresql").url
    config = _project(tmp_path, history)
    log = (tmp_path / "leader.log").open("w")
    leader = subprocess.Popen([sys.executable, "-m", "watchdog", "serve", "--config", str(config)], cwd=tmp_path,
                              env=_env(), stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + 60
        while " leads (lease token" not in (tmp_path / "leader.log").read_text():
            assert time.monotonic() < deadline and leader.poll() is None
            time.sleep(0.1)
        standby = _watchdog(tmp_path, "serve", "--for", "2", "--config", str(config))
        assert standby.returncode == 0 and "was standing by; stopped cleanly" in standby.stderr, standby.stderr
        text, data = _status(tmp_path, config)
        assert data["lease"]["leader"] and "stopped" not in data["lease"]
        assert text.splitlines()[1].startswith(f"leader:   {data['lease']['leader']} (lease token")
        assert data["audits"][0]["next_run_source"] == "job store"
        leader.send_signal(signal.SIGTERM)
        assert leader.wait(timeout=60) == 0
    finally:
        if leader.poll() is None:
            leader.kill()
        log.close()
    text, data = _status(tmp_path, config)
    assert data["lease"]["stopped"]["reason"] == "SIGTERM received" and "stopped cleanly at" in text
