"""``watchdog serve --ui``: the dashboard served live from a seeded history by a real ``watchdog serve``
subprocess, fetched over real HTTP on loopback and rendered in a real headless Chromium.

One server (scheduler and pages) is started for the module; the tests read it, one adds a run and reloads,
and the last stops it with SIGTERM. A second, pages-only server on 0.0.0.0 checks the token."""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

import pytest

from tests.test_dashboard import chromium
from tests.test_report_html import Structure

REPO = Path(__file__).resolve().parent.parent
AUDIT = "hostile<b>audit"
RUNS = 3
#: runs the audit once per line read (the line: how many extra null bodies), answering "ran <status>": one
#: interpreter for every run of the module (much faster than a `watchdog run` each)
SEEDER = """
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from tests.test_dashboard import write_notes
from watchdog.run.audit import execute_audit
from watchdog.settings import load_settings
config = Path(sys.argv[2])
settings = load_settings(config)
for line in sys.stdin:
    write_notes(config.parent / "notes.db", extra_bad=int(line))
    print("ran", execute_audit(settings, "hostile<b>audit").status, flush=True)
"""


class Seeder:
    """The audit's runs, made on request by one subprocess."""

    def __init__(self, root: Path):
        self.log = root / "seeder.log"
        with self.log.open("w") as stderr:
            self.proc = subprocess.Popen([sys.executable, "-c", SEEDER, str(REPO), str(root / "watchdog.yaml")],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True,
                                         cwd=root)
        self.made = 0

    def run(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{self.made}\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        assert answer.startswith("ran "), self.log.read_text()[-3000:]
        self.made += 1

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@dataclass
class Server:
    proc: subprocess.Popen
    port: int
    root: Path
    log: Path
    seeder: Seeder

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fetch(port: int, target: str, method: str = "GET",
          headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """One raw request (the target exactly as given: no client-side normalisation of ``..``)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest(method, target, skip_host="Host" in (headers or {}), skip_accept_encoding=True)
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        conn.endheaders()
        reply = conn.getresponse()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read()
    finally:
        conn.close()


def start(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, Path]:
    log = root / f"serve-{len(list(root.glob('serve-*.log')))}.log"
    with log.open("w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "watchdog", "serve", *args, "--config",
                                 str(root / "watchdog.yaml")], cwd=root, stdout=subprocess.DEVNULL,
                                stderr=stderr, env={**os.environ, **(env or {})})
    return proc, log


def wait_until_serving(proc: subprocess.Popen, port: int, log: Path, headers: dict[str, str] | None = None) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()[-3000:]
        try:
            fetch(port, "/", "HEAD", headers)
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the pages never came up: " + log.read_text()[-3000:])


def stop(proc: subprocess.Popen) -> int:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise


def history_runs(root: Path) -> list[tuple[str, str]]:
    """(id, folder) of every run, oldest first, read straight from the history database."""
    with sqlite3.connect(root / "history.db") as conn:
        return list(conn.execute("SELECT id, out_dir FROM wd_runs ORDER BY started_at"))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("serve-ui") / "project"
    (root / "checks").mkdir(parents=True)
    (root / "checks" / "notes.yaml").write_text(
        "tables:\n  notes:\n    - accepted_values: {column: status, values: [ok]}\n"
        "    - not_null: {column: body, max_count: 2}\n    - row_count: {min: 1}\n")
    (root / "watchdog.yaml").write_text(
        f"databases:\n  notes: {{url: 'sqlite:///{root / 'notes.db'}'}}\n"
        f"audits:\n  {AUDIT}:\n    database: notes\n    checks: [checks/notes.yaml]\n    sample: 9\n"
        "    schedule: '0 0 1 1 *'\n"
        f"history: {{url: 'sqlite:///{root / 'history.db'}'}}\n")
    (root / "secret.txt").write_text("not for the web\n")
    seeder = Seeder(root)
    proc = None
    try:
        for _ in range(RUNS):
            seeder.run()
        port = free_port()
        proc, log = start(root, "--ui", f"127.0.0.1:{port}", "--grace", "5")
        wait_until_serving(proc, port, log)
        yield Server(proc, port, root, log, seeder)
    finally:
        seeder.close()
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()


def audit_page(server: Server) -> str:
    return f"{server.url}{quote(AUDIT, safe='')}.html"


def test_the_live_pages_render_in_chromium_with_one_point_per_run(server, tmp_path):
    dom, log = chromium(audit_page(server), tmp_path)
    assert "CONSOLE" not in log and "Uncaught" not in log, log[-2000:]
    charts = dom.split('<div class="check"')[1:]
    assert len(charts) == 2 and all(chart.count('<circle class="point"') == RUNS for chart in charts)
    assert "notes.row_count</code>: " in dom.split('<ul class="flat">', 1)[1]  # unchanged, passing: one line
    assert "Live from the history" in dom
    page = Structure(dom)
    assert page.count("a", **{"class": "file"}) == 3 * RUNS   # report.html, report.md, findings.json of each run
    # the hostile-values corpus in the samples stays text in the DOM Chromium built
    assert not {"script", "img", "b"} & {tag for tag, _ in page.tags}
    text = "".join(page.text)
    assert "<script>alert('x')</script>" in text and "<h2>Injected</h2>" in text and AUDIT in text
    index, log = chromium(server.url, tmp_path, screenshot=None)
    assert "CONSOLE" not in log, log[-2000:]
    assert Structure(index).count("span", role="listitem") == RUNS
    assert Structure(index).count("a", href=quote(AUDIT, safe="") + ".html") == 1


def test_every_reply_carries_the_no_script_headers(server):
    status, headers, body = fetch(server.port, "/")
    assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
    assert "default-src 'none'" in headers["content-security-policy"] and "script" not in \
        headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff" and headers["cache-control"] == "no-store"
    assert headers["server"].startswith("watchdog") and "Python" not in headers["server"]
    assert int(headers["content-length"]) == len(body) and b"<script" not in body


def test_each_runs_filed_files_are_served_with_their_types(server):
    status, _, body = fetch(server.port, "/" + quote(AUDIT, safe="") + ".html")
    hrefs = re.findall(r'<a class="file" href="([^"]+)">', body.decode())
    assert len(hrefs) == 3 * RUNS
    types = {"report.html": "text/html; charset=utf-8", "report.md": "text/markdown; charset=utf-8",
             "findings.json": "application/json"}
    folders = dict(history_runs(server.root))
    for href in hrefs:
        _, run_id, name = href.split("/")
        status, headers, body = fetch(server.port, "/" + href)
        assert status == 200 and headers["content-type"] == types[name], href
        assert body == (Path(folders[unquote(run_id)]) / name).read_bytes()
        if name == "findings.json":
            assert {f["name"] for f in json.loads(body)["findings"]} >= {"notes.body.not_null"}


def test_only_get_and_head_are_answered(server):
    before = history_runs(server.root)
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "BREW"):
        status, headers, _ = fetch(server.port, "/index.html", method)
        assert status == 405 and headers["allow"] == "GET, HEAD", method
    status, headers, body = fetch(server.port, "/", "HEAD")
    assert status == 200 and body == b"" and int(headers["content-length"]) > 1000
    for target in ("/?delete=1", "/index.html?run=now&audit=x", "/runs/x/report.md?write=1"):
        assert fetch(server.port, target)[0] in (200, 404)
    assert history_runs(server.root) == before


def test_nothing_outside_the_runs_files_is_reachable(server):
    run_id, folder = history_runs(server.root)[0]
    rid = quote(run_id, safe="")
    (Path(folder) / "secret.txt").write_text("planted beside the report\n")
    for target in ("/../secret.txt", "/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/history.db",
                   "/notes.db", "/watchdog.yaml", "/runs/../secret.txt", f"/runs/{rid}/../../../secret.txt",
                   f"/runs/{rid}/..%2F..%2F..%2Fsecret.txt", f"/runs/{rid}/secret.txt", f"/runs/{rid}/audit.json",
                   f"/runs/{quote('../..', safe='')}/report.md", f"/runs/{rid}%2F..%2F..%2F../report.md",
                   "/runs/%ff%fe/report.md", f"/runs/{rid}/report.md/", f"/{quote('no such audit')}.html",
                   "/%2e%2e%2fsecret.txt", "http://127.0.0.1/../secret.txt", "/runs/%20/report.md",
                   "/runs/%00/report.md"):
        status, _, body = fetch(server.port, target)
        assert status == 404, (target, status)
        assert b"not for the web" not in body and b"planted" not in body
    # a filed file that is a symbolic link out of its run's folder is not followed
    findings = Path(folder) / "findings.json"
    kept = findings.read_bytes()
    findings.unlink()
    findings.symlink_to(server.root / "secret.txt")
    try:
        assert fetch(server.port, f"/runs/{rid}/findings.json")[0] == 404
    finally:
        findings.unlink()
        findings.write_bytes(kept)


def test_a_page_asked_for_another_host_name_is_refused(server):
    """DNS rebinding: a page of evil.example that resolves to 127.0.0.1 cannot read the dashboard."""
    assert fetch(server.port, "/", headers={"Host": "evil.example"})[0] == 403
    assert fetch(server.port, "/", headers={"Host": f"evil.example:{server.port}"})[0] == 403
    assert fetch(server.port, "/", headers={"Host": f"localhost:{server.port}"})[0] == 200


def test_a_port_in_use_is_one_line(server):
    done = subprocess.run([sys.executable, "-m", "watchdog", "serve", "--ui", f"127.0.0.1:{server.port}",
                           "--no-schedule", "--config", str(server.root / "watchdog.yaml")],
                          capture_output=True, text=True, cwd=server.root, timeout=60)
    assert done.returncode == 3
    assert done.stderr.strip().splitlines()[-1] == (
        f"error: cannot serve the pages on 127.0.0.1:{server.port}: the address is already in use")
    assert "Traceback" not in done.stderr


def test_a_non_loopback_bind_needs_a_token(server):
    config = str(server.root / "watchdog.yaml")
    env = {k: v for k, v in os.environ.items() if k != "WATCHDOG_UI_TOKEN"}
    refused = subprocess.run([sys.executable, "-m", "watchdog", "serve", "--ui", "0.0.0.0:1", "--no-schedule",
                              "--config", config], capture_output=True, text=True, cwd=server.root, timeout=60,
                             env=env)
    assert refused.returncode == 3 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().splitlines()[-1].startswith(
        "error: serving the pages on 0.0.0.0 (not loopback) needs a token: set $WATCHDOG_UI_TOKEN")
    token = "tok-" + base64.b32encode(os.urandom(10)).decode()
    port = free_port()
    proc, log = start(server.root, "--ui", f"0.0.0.0:{port}", "--no-schedule",
                      env={"WATCHDOG_UI_TOKEN": token})
    try:
        wait_until_serving(proc, port, log)
        status, headers, body = fetch(port, "/")
        assert status == 401 and headers["www-authenticate"].startswith("Basic") and token.encode() not in body
        assert fetch(port, "/", headers={"Authorization": "Bearer wrong"})[0] == 401
        assert fetch(port, "/", headers={"Authorization": f"Bearer {token}x"})[0] == 401
        status, _, body = fetch(port, "/", headers={"Authorization": f"Bearer {token}"})
        assert status == 200 and b"hostile" in body and token.encode() not in body
        basic = base64.b64encode(f"anyone:{token}".encode()).decode()
        assert fetch(port, "/", headers={"Authorization": f"Basic {basic}", "Host": "dq.example"})[0] == 200
        assert fetch(port, "/", "POST", headers={"Authorization": f"Bearer {token}"})[0] == 405
    finally:
        code = stop(proc)
    text = log.read_text()
    assert code == 0 and "stopped cleanly" in text and token not in text, text[-2000:]


def test_a_new_run_appears_on_reload(server, tmp_path):
    server.seeder.run()
    dom, log = chromium(audit_page(server), tmp_path)
    assert "CONSOLE" not in log, log[-2000:]
    charts = dom.split('<div class="check"')[1:]
    assert charts and all(chart.count('<circle class="point"') == RUNS + 1 for chart in charts)
    index = fetch(server.port, "/")[2].decode()
    assert Structure(index).count("span", role="listitem") == RUNS + 1


def test_sigterm_stops_the_scheduler_and_the_pages_cleanly(server):
    assert server.proc.poll() is None
    started = time.monotonic()
    assert stop(server.proc) == 0
    assert time.monotonic() - started < 15
    text = server.log.read_text()
    assert "pages: serving the dashboard at http://127.0.0.1:" in text and "stopped cleanly" in text
    assert "pages: stopped serving" in text and "Traceback" not in text
    with pytest.raises(OSError):
        fetch(server.port, "/")
