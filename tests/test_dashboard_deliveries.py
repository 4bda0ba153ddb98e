"""The audit page of ``watchdog serve --ui`` lists each run's deliveries — sent, skipped with the reason, failed
with the error — rendered in a real headless Chromium, with no webhook URL or token anywhere on the page
(chat destinations by fingerprint, a webhook by host and fingerprint)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_chat_delivery import Receiver
from tests.test_chat_routing import make_project
from tests.test_dashboard import chromium
from tests.test_report_html import Structure
from watchdog.run.audit import execute_audit
from watchdog.settings import load_settings
from watchdog.testing.smtp_sink import unused_port

SECRETS = ("slack-secret-1", "slack-secret-2", "s3cr3tpath", "tok-secret", "teams-secret", "/services/T0",
           "/hooks/catch", "/workflows/")


def rows(dom: str) -> list[tuple[str, ...]]:
    """The deliveries table as text: (run, channel, to, status, why) per row."""
    table = dom.split('<table class="deliveries">', 1)[1].split("</table>", 1)[0]
    out = []
    for row in re.findall(r"<tr class=\"delivery[^\"]*\">(.*?)</tr>", table, re.S):
        cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        out.append(tuple(c.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">") for c in cells))
    return out


def test_the_audit_page_shows_each_runs_deliveries_without_secrets(tmp_path: Path) -> None:
    from watchdog.daemon.ui import start_ui

    slack, hook, teams = Receiver(), Receiver(answers=[(500, {})] * 50), Receiver()
    try:
        deliver = "\n".join([
            f'      - slack: {{webhook_url: "{slack.url}/services/T0/B0/slack-secret-1", remind_after: 24h}}',
            f'      - slack: {{webhook_url: "{slack.url}/services/T0/B1/slack-secret-2", tags: [marketing]}}',
            f'      - webhook: {{url: "{hook.url}/hooks/catch/123/s3cr3tpath?token=tok-secret"}}',
            f'      - teams: {{webhook_url: "{teams.url}/workflows/x?sig=teams-secret", group_by: owner}}',
        ]) + "\n"
        config = make_project(tmp_path, deliver)
        config.write_text("scheduler: {delivery_attempts: 1, delivery_wait_max_s: 0}\n" + config.read_text())
        settings = load_settings(config)
        first = execute_audit(settings, "shop")
        second = execute_audit(settings, "shop")
        port = unused_port()
        ui = start_ui(settings, f"127.0.0.1:{port}")
        try:
            dom, log = chromium(f"http://127.0.0.1:{port}/shop.html", tmp_path)
            shot = Path(__file__).resolve().parent.parent / "reports" / "test-artifacts" / "dashboard-deliveries.png"
            shot.parent.mkdir(parents=True, exist_ok=True)
            chromium(f"http://127.0.0.1:{port}/shop.html", tmp_path, screenshot=shot)
        finally:
            ui.stop()
    finally:
        for receiver in (slack, hook, teams):
            receiver.close()
    assert "CONSOLE" not in log and "Uncaught" not in log, log[-2000:]
    assert not {"script", "img"} & {tag for tag, _ in Structure(dom).tags}
    for secret in SECRETS:
        assert secret not in dom, secret
    got = rows(dom)
    by_run = {run.run_id: [r[1:] for r in got if r[0] == run.run_id] for run in (first, second)}
    assert len(by_run[first.run_id]) == len(by_run[second.run_id]) == 1 + 1 + 1 + 3
    for lines in by_run.values():
        statuses = {(channel, status) for channel, _, status, _ in lines}
        assert ("webhook", "failed") in statuses and ("teams", "sent") in statuses
        failed = next(line for line in lines if line[0] == "webhook")
        assert re.fullmatch(r"127\.0\.0\.1 \([0-9a-f]{12}\)", failed[1]) and "HTTP 500" in failed[3]
        assert "waiting in the outbox" in failed[3]
        skipped = [line for line in lines if line[2] == "skipped"]
        assert any("tags: marketing" in line[3] and "matched no problem check" in line[3] for line in skipped)
        owners = sorted(line[1].rpartition(" · owner ")[2] for line in lines if line[0] == "teams")
        assert owners == ["@alice", "@bob", "@data-platform"]                # one card per owner, each shown
        assert all(re.match(r"(slack|teams):[0-9a-f]{12}", line[1]) for line in lines if line[0] != "webhook")
    # the second run: the remind_after destination had announced everything already
    remind = [line for line in by_run[second.run_id] if line[0] == "slack" and "remind_after" in line[3]]
    assert len(remind) == 1 and remind[0][2] == "skipped"
    assert re.search(r"\d+ unchanged problem checks? already announced within remind_after", remind[0][3])
    assert any(line[0] == "slack" and line[2] == "sent" for line in by_run[first.run_id])
    assert len(slack.requests) == 1 and len(teams.requests) == 6
