"""Chat models per role, and the one way the graph calls them: retried, timed, usage counted.

Any OpenAI-compatible endpoint works (OpenAI, vLLM, llama.cpp servers...). Transient failures
(rate limits, timeouts, 5xx, dropped connections) are retried with exponential backoff and jitter a
bounded number of times; authentication and bad-request errors are not. What still fails becomes
:class:`LLMUnavailable`, and the graph falls back to the deterministic report.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from tenacity import (
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)

from watchdog.errors import Terminal, Transient, WatchdogError
from watchdog.redact import redact
from watchdog.settings import LLMConfig

ROLES = ("planner", "specialist", "evaluator")


class LLMUnavailable(WatchdogError):
    """The model endpoint failed (after retries, or with an error not worth retrying)."""


class ModelBusy(LLMUnavailable, Transient):
    """One model call failed in a way worth retrying (rate limit, timeout, connection, 5xx)."""

    def __init__(self, cause: BaseException):
        super().__init__(f"{type(cause).__name__}: {redact(_short(cause))}")
        self.cause = cause


class LLMNotConfigured(WatchdogError, Terminal):
    """--llm was asked for, but no endpoint is configured."""


@dataclass
class Models:
    planner: BaseChatModel
    specialist: BaseChatModel
    evaluator: BaseChatModel

    def names(self) -> dict[str, str]:
        return {role: str(getattr(getattr(self, role), "model_name", type(getattr(self, role)).__name__))
                for role in ROLES}


def placeholder_models() -> Models:
    """Models that are never called: for building the graph only to draw it or read its checkpoints."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    fake = GenericFakeChatModel(messages=iter(()))
    return Models(fake, fake, fake)


def build_models(config: LLMConfig) -> Models:
    """ChatOpenAI per role against the configured endpoint (raises LLMNotConfigured without one)."""
    base_url, api_key = config.endpoint()
    if not base_url and not api_key:
        raise LLMNotConfigured("--llm needs a model endpoint: set OPENAI_API_KEY (and OPENAI_BASE_URL for a "
                               "non-OpenAI server) or llm.base_url / llm.api_key in the config")
    from langchain_openai import ChatOpenAI

    def make(role: str) -> BaseChatModel:
        cap = getattr(config.max_output_tokens, role)
        return ChatOpenAI(
            model=getattr(config.models, role),
            base_url=base_url,
            api_key=api_key or "not-needed",
            temperature=config.temperature,
            timeout=config.request_timeout_s,
            max_retries=0,  # tenacity retries, once, here
            # sent as max_completion_tokens; extra_body adds max_tokens, which llama.cpp's servers read
            max_tokens=cap,
            extra_body={"max_tokens": cap},
            stream_usage=True,
            use_responses_api=False,  # OpenAI-compatible servers speak Chat Completions
        )

    return Models(planner=make("planner"), specialist=make("specialist"), evaluator=make("evaluator"))


def endpoint_transient(exc: BaseException) -> bool:
    """An endpoint error worth retrying: rate limits, timeouts, connection errors, 5xx."""
    try:
        import openai
    except ImportError:  # pragma: no cover
        return False
    if isinstance(exc, (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError,
                        openai.InternalServerError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code >= 500 or exc.status_code in (408, 409, 429)
    return isinstance(exc, (TimeoutError, ConnectionError))


@dataclass
class Call:
    message: Any
    usage: dict[str, int]
    latency_s: float
    attempts: int


def usage_of(message: Any) -> dict[str, int]:
    meta = getattr(message, "usage_metadata", None) or {}
    return {"input": int(meta.get("input_tokens", 0) or 0), "output": int(meta.get("output_tokens", 0) or 0),
            "calls": 1}


def _attempt(runnable: Any, messages: list[BaseMessage]) -> Any:
    """One call; an endpoint error worth retrying becomes :class:`ModelBusy` (a ``Transient``)."""
    try:
        return runnable.invoke(messages)
    except Exception as exc:
        if endpoint_transient(exc):
            raise ModelBusy(exc) from exc
        raise


def invoke(runnable: Any, messages: list[BaseMessage], *, attempts: int = 4, max_wait_s: float = 8.0) -> Call:
    """Invoke a model (or a structured-output runnable) with retries; raise LLMUnavailable on failure."""
    start = time.monotonic()
    retrying = Retrying(stop=stop_after_attempt(attempts), reraise=True,
                        wait=wait_random_exponential(multiplier=0.25, max=max_wait_s),
                        retry=retry_if_exception_type(Transient))
    tries = 0
    try:
        for attempt in retrying:
            with attempt:
                tries += 1
                result = _attempt(runnable, messages)
    except Exception as exc:  # endpoint down, auth error, bad request...
        cause = exc.cause if isinstance(exc, ModelBusy) else exc
        kind = "after retries" if isinstance(exc, Transient) else "not retried"
        raise LLMUnavailable(f"model call failed ({kind}, {tries} attempt(s)): {type(cause).__name__}: "
                             f"{redact(_short(cause))}") from None
    raw = result.get("raw") if isinstance(result, dict) else result
    return Call(result, usage_of(raw) if isinstance(raw, AIMessage) else {"input": 0, "output": 0, "calls": 1},
                time.monotonic() - start, tries)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else ""
