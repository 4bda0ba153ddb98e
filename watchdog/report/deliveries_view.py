"""A run's deliveries as the dashboard shows them: where each message went, and whether it was sent, skipped
(and why) or failed (and why).

Where a message went is shown without its credentials: a chat destination is recorded as a fingerprint already
(``slack:3f2a9c1e0b7d``); a webhook is shown as its host and a fingerprint of its URL, never the URL (its path
or query may hold a token); every text passes through :func:`watchdog.redact.redact` once more.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from watchdog.delivery.routing import destination_of
from watchdog.redact import redact, secret_digest

#: a delivery's status as the page says it
WORDS = {"sent": "sent", "skipped": "skipped", "pending": "failed", "unconfirmed": "unconfirmed",
         "sending": "sending", "posting": "sending"}


@dataclass(frozen=True)
class DeliveryLine:
    channel: str
    to: str
    group: str | None
    status: str          # sent | skipped | failed | unconfirmed | sending
    why: str             # the skip's reason, the failure's error ("" when sent)


def _shown_target(record: Any) -> tuple[str, str]:
    """(the destination as shown, the recorded target text to replace by it in messages)."""
    spec = record.spec or {}
    destination = destination_of(record.target, spec)
    if record.channel != "webhook":
        return destination, destination
    host = urlsplit(destination).hostname or "?"
    return f"{host} ({secret_digest(destination)})", destination


def delivery_lines(run: Any) -> list[DeliveryLine]:
    lines = []
    for record in run.deliveries or []:
        shown, recorded = _shown_target(record)
        group = (record.spec or {}).get("group")
        why = (record.last_error or "").replace(recorded, shown) if record.status != "sent" else ""
        if record.status == "pending" and why:
            why = f"{why} (waiting in the outbox, retried)"
        lines.append(DeliveryLine(record.channel, redact(shown), redact(group) if group is not None else None,
                                  WORDS.get(record.status, record.status), redact(why)))
    return lines

