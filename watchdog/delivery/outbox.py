"""DeliveryChannel a filed run through its channels: policy, retries, idempotency and the outbox.

* Policy per channel (``on:``): ``always``; ``problems`` (any fail, warn or error); ``changes`` (only
  when the findings differ from the last run delivered to the same target); ``new``.
* Routing (:mod:`watchdog.delivery.routing`) turns each routed channel into its messages (a selection, one per
  owner with ``group_by``, ``remind_after``); each message's route is kept in the delivery's ``spec`` so a retry
  from the outbox sends the same message, and a sent one records what it announced.
* Each target (a recipient, a folder, a URL) is delivered and recorded apart; a run already ``sent``
  to a target is never sent there again (idempotent by run id, also after a crash or a resume).
* A failed delivery is retried with backoff (tenacity); if it still fails it waits in the outbox
  (status ``pending``) and :func:`flush_outbox` retries it on the daemon's next tick and on the next
  ``watchdog run``.
* A process that dies while sending leaves the delivery ``sending``: that claim is a lease
  (``scheduler.delivery_lease_s``, default 2 min); past it, the outbox retries it with the same
  Message-ID / Idempotency-Key (derived from the run id). So a delivery is exactly once, except across a
  crash at the very moment of sending, where it is at least once (and the receiver can drop the duplicate).
* Chat messages (Slack, Teams) carry no key a receiver could drop a duplicate by, so their claim is marked
  ``posting`` just before the request. A claim abandoned while ``sending`` was never posted: it is sent.
  One abandoned while ``posting`` may have arrived: the Slack Web API is asked (the message carries the run
  in its metadata) and it is posted only if it is not there; an incoming webhook or a Teams workflow cannot
  be asked, so it is not posted again and the delivery reads ``unconfirmed``. Never two messages.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from tenacity import (
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)

from watchdog.delivery.base import DeliveryError, RunPackage, Sender
from watchdog.delivery.routing import Route, Select, narrowed, plan
from watchdog.errors import Transient
from watchdog.history import DeliveryRecord, HistoryStore
from watchdog.redact import redact
from watchdog.settings import DeliveryChannel, Settings

log = logging.getLogger(__name__)


def build_channel(kind: str, config: dict[str, Any], settings: Settings) -> Sender:
    """A channel from its (stored) configuration; SMTP settings always come from the current config."""
    from watchdog.delivery.routing import Select

    if kind == "file":
        from watchdog.delivery.file import FileSender

        return FileSender(settings.path(config.get("dir") or "reports"))
    select = Select.of(config)
    if kind == "email":
        from watchdog.delivery.email import EmailSender

        return EmailSender(settings.smtp, list(config["to"]), attach_findings=config.get("attach_findings", True),
                           public_url=settings.public_url, select=select)
    if kind == "webhook":
        from watchdog.delivery.webhook import WebhookSender

        return WebhookSender(config["url"], headers=config.get("headers") or {},
                              timeout_s=config.get("timeout_s", 10.0), public_url=settings.public_url, select=select)
    if kind in ("slack", "teams"):
        from watchdog.delivery.chat import SlackSender, TeamsSender

        secret = {k: v.get_secret_value() if hasattr(v, "get_secret_value") else v for k, v in config.items()}
        mentions = {name: getattr(who, kind) for name, who in settings.owners.items() if getattr(who, kind)}
        common = {"public_url": settings.public_url, "max_checks": config["max_checks"],
                  "timeout_s": config["timeout_s"], "select": select, "mentions": mentions}
        if kind == "teams":
            return TeamsSender(secret["webhook_url"], **common)
        return SlackSender(webhook_url=secret.get("webhook_url"), token=secret.get("token"),
                           channel=config.get("channel"), api_url=config["api_url"], **common)
    raise ValueError(f"unknown delivery channel {kind!r}")


def routes(kind: str, config: dict[str, Any], channel: Sender, package: RunPackage, settings: Settings,
           store: HistoryStore, *, taken: set[str], index: int) -> list[Route]:
    """The messages one configured channel sends for a run (the file channel: the whole run, once)."""
    if kind == "file":
        return [Route(target, Select()) for target in channel.targets()]
    from watchdog.findings import FindingsDoc
    from watchdog.history.alerts import announced

    def destinations(owners: list[str]) -> list[str]:
        found = channel.targets()
        if kind == "email" and config.get("mail_owners", True):
            found += [settings.owners[o].email or "" for o in owners if o in settings.owners]
        unique: dict[str, str] = {}
        for address in found:
            if address:
                unique.setdefault(address.lower(), address)
        return list(unique.values())

    try:
        doc = FindingsDoc.from_json(package.findings_bytes())
    except (OSError, ValueError):  # unreadable findings: one message each way, whose sending says what is wrong
        return [Route(target, Select.of(config)) for target in channel.targets()]
    return plan(config, doc, package.trends or {}, destinations,
                announced=lambda target: announced(store, package.audit, f"{kind}:{target}"),
                taken=taken, mark=f" · deliver {index + 1}")


def _fingerprint(findings: list[dict[str, Any]]) -> dict[str, tuple[Any, ...]]:
    """What counts as a change for ``on: changes``: status and failing count (row counts: the count)."""
    return {f["name"]: (f.get("status"), f.get("failing"), f.get("observed") if f.get("check") == "row_count" else None)
            for f in findings}


def wanted(policy: str, package: RunPackage, kind: str, target: str, store: HistoryStore) -> tuple[bool, str]:
    """Whether the policy sends this run to this target, and why not."""
    if policy == "always":
        return True, ""
    s = package.summary
    problems = bool(s.get("failed") or s.get("warned") or s.get("errors"))
    if policy in ("problems", "new"):  # new: the channel keeps only the new problems (and may then skip)
        return (True, "") if problems else (False, f"no problems (on: {policy})")
    last = store.last_delivered_run(package.audit, kind, target, package.run_id)
    if last is None:
        return True, ""
    same = _fingerprint(store.findings_of(last)) == _fingerprint(package.findings()["findings"])
    return (False, f"no change since run {last} (on: changes)") if same else (True, "")


def send_once(channel: Sender, package: RunPackage, target: str, store: HistoryStore, *, attempts: int,
              wait_max_s: float, spec: dict[str, Any], lease_s: float = 120.0) -> DeliveryRecord:
    """Send to one target unless it was already sent; retry; record sent or pending (outbox).

    The delivery is claimed first (one atomic update), so a daemon tick and a ``watchdog run`` flushing
    the outbox at the same moment cannot both send it.
    """
    claimed = store.claim_delivery(package.run_id, channel.kind, target, spec, lease_s=lease_s)
    if claimed is None:  # already sent, or being sent by another process
        current = store.delivery(package.run_id, channel.kind, target)
        assert current is not None
        return current
    tries = claimed
    if getattr(channel, "unkeyed", False):  # called just before the request: the message may reach the chat
        channel.before_post = lambda: store.move_delivery(package.run_id, channel.kind, target,  # type: ignore[attr-defined]
                                                          from_status="sending", to_status="posting")
    error: str | None = None
    retrying = Retrying(stop=stop_after_attempt(attempts), wait=wait_random_exponential(multiplier=0.2, max=wait_max_s),
                        retry=retry_if_exception_type(Transient), reraise=True)
    try:
        for attempt in retrying:
            with attempt:
                tries += 1
                channel.send(package, target)
    except DeliveryError as exc:
        error = redact(exc)
    record = DeliveryRecord(run_id=package.run_id, channel=channel.kind, target=target,
                            status="sent" if error is None else "pending", attempts=tries, last_error=error, spec=spec)
    store.record_delivery(record)
    if error is None and "statuses" in spec:  # remind_after: what this destination has now been told
        from watchdog.history.alerts import remember

        remember(store, package.audit, f"{channel.kind}:{target}", package.run_id, statuses=spec["statuses"],
                 drop=list(spec.get("resolved") or ()) + list(spec.get("forget") or ()))
    if error:
        log.warning("delivery %s to %s for run %s failed (%d attempts), kept in the outbox: %s",
                    channel.kind, target, package.run_id, tries, error)
    return record


def deliver_package(package: RunPackage, items: list[DeliveryChannel], settings: Settings,
                    store: HistoryStore) -> list[DeliveryRecord]:
    """DeliveryChannel a filed run through every configured channel (policy first)."""
    records = []
    if any(item.kind == "email" for item in items) and not package.sparklines:
        from watchdog.report.dashboard import sparklines

        package.sparklines = sparklines(store, package.audit)
    taken_by: dict[str, set[str]] = {}  # the targets of each kind already routed in this run
    for index, item in enumerate(items):
        config = item.channel.model_dump()
        channel = build_channel(item.kind, config, settings)
        # the outbox keeps a reference to the configured channel, never its settings (URLs and headers
        # may hold tokens): a retry rebuilds the channel from the current configuration
        spec = {"kind": item.kind, "index": index}
        taken = taken_by.setdefault(item.kind, set())
        for route in routes(item.kind, config, channel, package, settings, store, taken=taken, index=index):
            target = route.target
            ok, reason = wanted(item.channel.on, package, item.kind, target, store)
            if not ok and route.spec.get("resolved") and item.channel.on in ("problems", "new"):
                ok = True  # remind_after: problems announced before and passing now are announced once
            if ok and route.skip:
                ok, reason = False, route.skip
            if not ok:
                record = DeliveryRecord(run_id=package.run_id, channel=item.kind, target=target, status="skipped",
                                        last_error=reason, spec={**spec, **route.spec})
                if store.delivery(package.run_id, item.kind, target) is None:
                    store.record_delivery(record)
                records.append(record)
                continue
            if hasattr(channel, "select"):
                channel.select = route.select
            if hasattr(channel, "route"):  # who the message goes to, as routed (never parsed from the target)
                channel.route = route.spec
            records.append(send_once(channel, package, target, store, attempts=settings.scheduler.delivery_attempts,
                                     wait_max_s=settings.scheduler.delivery_wait_max_s, spec={**spec, **route.spec},
                                     lease_s=settings.scheduler.delivery_lease_s))
    return records


def flush_outbox(settings: Settings, store: HistoryStore) -> list[DeliveryRecord]:
    """Retry every delivery waiting in the outbox (once each; failures stay pending)."""
    done = []
    for pending in store.outbox(settings.scheduler.delivery_lease_s):
        run = store.get_run(pending.run_id)
        if run is None or not run.out_dir or not Path(run.out_dir, "audit.json").is_file():
            continue
        package = RunPackage.load(Path(run.out_dir))
        item = _configured_item(settings, run.audit, pending)
        if item is None:
            log.warning("run %s: its %s channel is no longer configured; left in the outbox", run.id, pending.channel)
            continue
        config = item.channel.model_dump()
        channel = build_channel(item.kind, config, settings)
        if hasattr(channel, "select"):  # the same message as the first attempt: its group, its checks
            channel.select = narrowed(Select.of(config), pending.spec)
        if hasattr(channel, "route"):
            channel.route = pending.spec
        if pending.status == "posting":
            settled = _settle_posting(channel, package, pending, store)
            if settled is not None:
                done.append(settled)
                continue
        done.append(send_once(channel, package, pending.target, store, attempts=1, wait_max_s=0, spec=pending.spec,
                              lease_s=settings.scheduler.delivery_lease_s))
    return done


UNCONFIRMED = ("the process stopped while the message was being posted, and this endpoint cannot be asked "
               "whether it arrived: not posted again, so the channel never gets it twice")


def _settle_posting(channel: Sender, package: RunPackage, pending: DeliveryRecord,
                    store: HistoryStore) -> DeliveryRecord | None:
    """A chat message abandoned in flight: recorded ``sent`` when the chat has it, ``unconfirmed`` when the chat
    cannot tell; None (after putting it back in the outbox) when the chat says it never arrived."""
    confirm = getattr(channel, "posted", None)
    try:
        arrived = confirm(package, pending.target, since=pending.updated_at) if confirm is not None else None
    except DeliveryError as exc:  # the chat could not be asked now: ask again on the next flush
        log.warning("run %s: cannot tell whether the %s message arrived: %s", package.run_id, pending.channel,
                    redact(exc))
        return DeliveryRecord(run_id=package.run_id, channel=pending.channel, target=pending.target,
                              status="posting", attempts=pending.attempts, last_error=redact(exc), spec=pending.spec)
    key = (package.run_id, pending.channel, pending.target)
    if arrived is False:
        store.move_delivery(*key, from_status="posting", to_status="pending")
        return None
    status, note = ("sent", None) if arrived else ("unconfirmed", UNCONFIRMED)
    store.move_delivery(*key, from_status="posting", to_status=status, last_error=note)
    return DeliveryRecord(run_id=package.run_id, channel=pending.channel, target=pending.target, status=status,
                          attempts=pending.attempts, last_error=note, spec=pending.spec)


def _configured_item(settings: Settings, audit: str, pending: DeliveryRecord) -> DeliveryChannel | None:
    """The configured channel a pending delivery belongs to (by position, else the first of its kind)."""
    if audit not in settings.audits:
        return None
    items = settings.audits[audit].deliver
    index = pending.spec.get("index")
    if isinstance(index, int) and index < len(items) and items[index].kind == pending.channel:
        return items[index]
    return next((item for item in items if item.kind == pending.channel), None)
