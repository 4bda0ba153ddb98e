"""The ``slack`` and ``teams`` channels: a run posted where the team works.

Slack goes through ``slack_sdk`` (an incoming webhook, or the Web API's ``chat.postMessage`` with a token and a
channel); a 429 answer is waited out as its ``Retry-After`` says, but never past the delivery's deadline, and a
5xx is retried once. Teams posts an Adaptive Card to a Workflows webhook. Webhook URLs and tokens are credentials:
they are registered as secrets, and the channel's target (recorded in the history and the outbox, shown in logs)
is a fingerprint of the URL, never the URL.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

from watchdog import __version__ as _version
from watchdog.delivery.base import DeliveryError, RunPackage, network_reason
from watchdog.delivery.channels import SLACK_API_URL
from watchdog.delivery.routing import Select, problem_findings
from watchdog.findings import FindingsDoc
from watchdog.redact import redact, register_secret, secret_digest
from watchdog.report.chat import message


def fingerprint(kind: str, secret: str) -> str:
    return f"{kind}:{secret_digest(secret)}"


class _Deadline:
    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()


class ChatSender:
    """What the two chat channels share: the message, the deadline, the masked target."""

    kind = "chat"
    #: no key a receiver could drop a duplicate by: the outbox marks the claim ``posting`` before the request
    unkeyed = True

    def __init__(self, secret: str, *, public_url: str | None, max_checks: int, timeout_s: float,
                 select: Select | None = None, mentions: dict[str, str] | None = None):
        register_secret(secret)
        self._secret = secret
        self.public_url = public_url
        self.max_checks = max_checks
        self.timeout_s = timeout_s
        #: the problem checks the message lists (routing; set per message by the outbox)
        self.select = select or Select()
        #: owner -> how this chat names them (a Slack mention ``<@U123>``, a Teams display name)
        self.mentions = mentions or {}
        #: called right before each request that posts the message (the outbox marks the delivery ``posting``)
        self.before_post: Any = None
        self._read: tuple[str, FindingsDoc] | None = None

    def _doc(self, package: RunPackage) -> FindingsDoc:
        """The run's findings, parsed once per run (the skip decision, the message and its mentions all read them)."""
        if self._read is None or self._read[0] != package.run_id:
            self._read = (package.run_id, FindingsDoc.from_json(package.findings_bytes()))
        return self._read[1]

    def targets(self) -> list[str]:
        return [fingerprint(self.kind, self._secret)]

    def _posting(self) -> None:
        if self.before_post is not None:
            self.before_post()

    def _message(self, package: RunPackage) -> Any:
        return message(self._doc(package), audit=package.audit, run_id=package.run_id, trends=package.trends,
                       public_url=self.public_url, max_checks=self.max_checks, select=self.select)

    def _mentioned(self, package: RunPackage) -> list[str]:
        """How this chat names the owners of the problem checks the message lists (``group_by: owner``: the
        group's owner)."""
        if self.select.group is not None:
            return [self.mentions[self.select.group]] if self.select.group in self.mentions else []
        owners = [o for f in problem_findings(self._doc(package), package.trends, self.select)[:self.max_checks]
                  for o in f.owners or ()]
        return [self.mentions[o] for o in dict.fromkeys(owners) if o in self.mentions]


class SlackSender(ChatSender):
    kind = "slack"

    def __init__(self, *, webhook_url: str | None = None, token: str | None = None, channel: str | None = None,
                 public_url: str | None = None, max_checks: int = 20, timeout_s: float = 10.0,
                 api_url: str = SLACK_API_URL, **routing: Any):
        super().__init__(webhook_url or token or "", public_url=public_url, max_checks=max_checks,
                         timeout_s=timeout_s, **routing)
        self.channel = channel
        self.web_api = webhook_url is None
        #: the Web API's address (GovSlack's, or a receiver on loopback in tests)
        self.api_url = api_url

    def _client(self, handlers: list[Any] | None = None) -> Any:
        from slack_sdk import WebClient

        return WebClient(token=self._secret, base_url=self.api_url, timeout=max(1, int(self.timeout_s)),
                         retry_handlers=handlers)

    def posted(self, package: RunPackage, target: str, *, since: str | None) -> bool | None:
        """Whether the run's message is in the channel (Web API: its metadata names the run and the destination);
        None for an incoming webhook, which cannot be asked."""
        if not self.web_api:
            return None
        from datetime import datetime

        from slack_sdk.errors import SlackApiError

        oldest = datetime.fromisoformat(since.replace("Z", "+00:00")).timestamp() - 300 if since else 0
        client = self._client()
        try:
            channel = self._channel_id(client)
            cursor = None
            while True:
                page = client.conversations_history(channel=channel, oldest=str(oldest), limit=200, cursor=cursor,
                                                    include_all_metadata=True)
                for item in page.get("messages") or []:
                    payload = (item.get("metadata") or {}).get("event_payload") or {}
                    if payload.get("run_id") == package.run_id and payload.get("destination") == target:
                        return True
                cursor = (page.get("response_metadata") or {}).get("next_cursor")
                if not cursor:
                    return False
        except SlackApiError as exc:
            raise DeliveryError(f"Slack could not be asked about run {package.run_id}: "
                                f"{exc.response.get('error', 'error')}") from None
        except Exception as exc:  # noqa: BLE001 - a network failure, said without the token
            reason = network_reason(exc, self.timeout_s, "Slack endpoint") or type(exc).__name__
            raise DeliveryError(f"Slack {target}: {redact(reason)}") from None

    def _channel_id(self, client: Any) -> str:
        """The channel's id (conversations.history takes no ``#name``): as configured, or looked up by name."""
        name = (self.channel or "").lstrip("#")
        if self.channel and not self.channel.startswith("#") and name[:1] in "CGD" and name.isupper():
            return name
        cursor = None
        while True:
            page = client.conversations_list(types="public_channel,private_channel", limit=1000, cursor=cursor,
                                             exclude_archived=True)
            for found in page.get("channels") or []:
                if found.get("name") == name:
                    return str(found["id"])
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                raise DeliveryError(f"Slack has no channel named #{name} that the token can see")

    def payload(self, package: RunPackage) -> tuple[str, list[dict[str, Any]]]:
        from watchdog.report.slack_blocks import blocks

        return blocks(self._message(package), self._mentioned(package))

    def send(self, package: RunPackage, target: str) -> None:
        text, body = self.payload(package)
        deadline = _Deadline(self.timeout_s)
        handlers = _retry_handlers(deadline)
        self._posting()  # nothing is sent before this line; from here on the message may reach Slack
        try:
            if self.web_api:
                from slack_sdk.errors import SlackApiError

                client = self._client(handlers)
                metadata = {"event_type": "watchdog_run", "event_payload": {"run_id": package.run_id,
                                                                            "destination": target}}
                try:
                    client.chat_postMessage(channel=self.channel or "", text=text, blocks=body, metadata=metadata)
                except SlackApiError as exc:
                    raise DeliveryError(f"Slack refused the message: {exc.response.get('error', 'error')}") from None
                return
            from slack_sdk.webhook import WebhookClient

            hook = WebhookClient(self._secret, timeout=max(1, int(self.timeout_s)), retry_handlers=handlers)
            answer = hook.send(text=text, blocks=body)
        except DeliveryError:
            raise
        except Exception as exc:  # noqa: BLE001 - a network failure, said without the URL
            reason = network_reason(exc, self.timeout_s, "Slack endpoint") or type(exc).__name__
            raise DeliveryError(f"Slack webhook {target}: {redact(reason)}") from None
        if answer.status_code != 200:
            raise DeliveryError(f"Slack webhook {target} answered HTTP {answer.status_code}: "
                                f"{redact(str(answer.body))[:200]}")


def _retry_handlers(deadline: _Deadline) -> list[Any]:
    from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler, ServerErrorRetryHandler

    class WithinDeadline(RateLimitErrorRetryHandler):
        """Waits out a 429 as Retry-After says, if the delivery's deadline leaves the time."""

        def _can_retry(self, *, state: Any, request: Any, response: Any = None, error: Any = None) -> bool:
            if response is None or response.status_code != 429:
                return False
            wait = next((v for k, v in response.headers.items() if k.lower() == "retry-after"), ["1"])
            try:
                seconds = float(wait[0] if isinstance(wait, list) else wait)
            except ValueError:
                seconds = 1.0
            return seconds + 1 < deadline.left()

    return [WithinDeadline(max_retry_count=3), ServerErrorRetryHandler(max_retry_count=1)]


class TeamsSender(ChatSender):
    kind = "teams"

    def payload(self, package: RunPackage) -> dict[str, Any]:
        from watchdog.report.teams_card import card

        return card(self._message(package), self._mentioned(package))

    def send(self, package: RunPackage, target: str) -> None:
        body = json.dumps(self.payload(package), ensure_ascii=False).encode("utf-8")
        deadline = _Deadline(self.timeout_s)
        request = urllib.request.Request(self._secret, data=body, method="POST", headers={
            "Content-Type": "application/json; charset=utf-8", "User-Agent": f"watchdog/{_version}"})
        for attempt in (1, 2):
            self._posting()
            try:
                with urllib.request.urlopen(request, timeout=max(0.5, deadline.left())) as answer:  # noqa: S310
                    answer.read(65536)
                    return
            except urllib.error.HTTPError as exc:
                if exc.code >= 500 and attempt == 1 and deadline.left() > 1:
                    continue
                raise DeliveryError(f"Teams webhook {target} answered HTTP {exc.code}") from None
            except Exception as exc:  # noqa: BLE001 - a network failure, said without the URL
                reason = network_reason(exc, self.timeout_s, "Teams endpoint") or type(exc).__name__
                raise DeliveryError(f"Teams webhook {target}: {redact(reason)}") from None
