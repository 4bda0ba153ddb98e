"""The configuration of delivery channels: one item of an audit's ``deliver:`` list.

Kept apart from :mod:`watchdog.settings` (which imports it) so that module stays one readable size. Webhook URLs
are credentials (whoever holds one can post): they are registered as secrets when the settings are loaded, and
the chat channels show and record them only as a fingerprint.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

DeliverOn = Literal["always", "problems", "changes"]
#: what routed channels send on; ``new``: only problems that were not problems in the previous run
RoutedOn = Literal["always", "problems", "changes", "new"]
ChatOn = RoutedOn
#: problem checks listed in one message at most (then "and K more"); Slack allows 50 blocks a message
DEFAULT_CHAT_CHECKS = 20
#: where the Slack Web API answers (GovSlack: https://slack-gov.com/api/)
SLACK_API_URL = "https://slack.com/api/"


_EVERY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd])\s*$")


def every_seconds(text: str) -> float:
    """An interval as the configuration writes it (``schedule: {every: 15m}``, ``remind_after: 24h``), in seconds."""
    match = _EVERY.match(str(text))
    if not match:
        raise ValueError(f"{text!r} is not an interval like 30s, 15m, 6h or 1d")
    return float(match.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Routing(_Strict):
    """What one destination hears about (e-mail, webhook, Slack, Teams; see :mod:`watchdog.delivery.routing`):
    problem checks with one of ``tags``, of one of ``owners``, of ``severity`` (fail: failing and erroring
    checks; warn: warnings too); unset: every problem check. ``group_by: owner``: one message per owner.
    ``remind_after``: an unchanged problem already announced is not announced again before this interval."""

    tags: list[str] | None = Field(default=None, min_length=1)
    owners: list[str] | None = Field(default=None, min_length=1)
    severity: Literal["fail", "warn"] | None = None
    group_by: Literal["owner"] | None = None
    remind_after: str | None = None

    @field_validator("remind_after")
    @classmethod
    def _interval(cls, value: str | None) -> str | None:
        if value is not None and every_seconds(value) <= 0:
            raise ValueError("remind_after must be a positive interval such as 30m, 24h or 7d")
        return value


Selection = Routing


class SlackChannel(Routing):
    """An incoming webhook (``webhook_url``), or the Web API (``token`` and ``channel``)."""

    webhook_url: SecretStr | None = None
    token: SecretStr | None = None
    channel: str | None = Field(default=None, min_length=1)
    #: the Web API's address
    api_url: str = Field(default=SLACK_API_URL, pattern=r"^https?://.*/$")
    on: ChatOn = "problems"
    max_checks: int = Field(default=DEFAULT_CHAT_CHECKS, ge=1, le=40)
    timeout_s: float = Field(default=10.0, gt=0)

    @model_validator(mode="after")
    def _one_way(self) -> SlackChannel:
        if (self.webhook_url is None) == (self.token is None):
            raise ValueError("give webhook_url (an incoming webhook) or token and channel (the Web API), not both")
        if self.token is not None and not self.channel:
            raise ValueError("token needs channel (e.g. '#data-quality' or a channel id)")
        url = self.webhook_url.get_secret_value() if self.webhook_url is not None else None
        if url is not None and not url.startswith(("https://", "http://")):
            raise ValueError("webhook_url must be an http(s):// URL")
        return self


class TeamsChannel(Routing):
    """A Teams Workflows (Power Automate) webhook that posts an Adaptive Card to a channel or chat."""

    webhook_url: SecretStr
    on: ChatOn = "problems"
    max_checks: int = Field(default=DEFAULT_CHAT_CHECKS, ge=1, le=40)
    timeout_s: float = Field(default=10.0, gt=0)

    @model_validator(mode="after")
    def _http(self) -> TeamsChannel:
        if not self.webhook_url.get_secret_value().startswith(("https://", "http://")):
            raise ValueError("webhook_url must be an http(s):// URL")
        return self


class OwnerContacts(_Strict):
    """Who an owner (``"@data-platform"``) is on each channel: a Slack mention, a Teams name, an e-mail."""

    slack: str | None = Field(default=None, min_length=1)
    teams: str | None = Field(default=None, min_length=1)
    email: str | None = Field(default=None, min_length=3)


class FileChannel(_Strict):
    dir: str = "reports"
    on: DeliverOn = "always"


class EmailChannel(Routing):
    to: list[str] = Field(min_length=1)
    on: RoutedOn = "problems"
    attach_findings: bool = True
    #: the owners of the listed problem checks (``owners:`` entries with ``email:``) get the message too
    mail_owners: bool = True


class WebhookChannel(Routing):
    url: str = Field(pattern=r"^https?://")
    on: RoutedOn = "problems"
    headers: dict[str, SecretStr] = Field(default_factory=dict)  # values often carry tokens
    timeout_s: float = Field(default=10.0, gt=0)


CHANNELS = ("file", "email", "webhook", "slack", "teams")


class DeliveryChannel(_Strict):
    """One delivery channel: exactly one of file, email, webhook, slack, teams."""

    file: FileChannel | None = None
    email: EmailChannel | None = None
    webhook: WebhookChannel | None = None
    slack: SlackChannel | None = None
    teams: TeamsChannel | None = None

    @model_validator(mode="after")
    def _one_channel(self) -> DeliveryChannel:
        given = [name for name in CHANNELS if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"each deliver item names exactly one channel: {', '.join(CHANNELS)}")
        return self

    @property
    def kind(self) -> str:
        return next(name for name in CHANNELS if getattr(self, name) is not None)

    @property
    def channel(self) -> FileChannel | EmailChannel | WebhookChannel | SlackChannel | TeamsChannel:
        return getattr(self, self.kind)
