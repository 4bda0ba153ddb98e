"""Chat models per role, and the one way the graph calls them: streamed, retried, every attempt's tokens counted.

Any OpenAI-compatible endpoint works (OpenAI, vLLM, llama.cpp servers...). Every call is streamed: a
call may wait ``llm.request_timeout_s`` for its first token (a local server reads the whole prompt
first) and is cut when no token arrives for ``llm.idle_timeout_s`` after that, however long the answer
is. Transient failures (rate limits, timeouts, cut streams, 5xx, dropped connections) are retried with
exponential backoff and jitter a bounded number of times; authentication and bad-request errors are
not. Every attempt is recorded with its tokens, also the failed and cut ones. What still fails becomes
:class:`LLMUnavailable`, and the graph falls back to the deterministic report.
"""

from __future__ import annotations

import queue
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.utils import message_chunk_to_message
from pydantic import SecretStr
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_random_exponential

from watchdog.errors import Terminal, Transient, WatchdogError
from watchdog.redact import redact
from watchdog.settings import LLMConfig

ROLES = ("planner", "specialist", "evaluator")


class LLMUnavailable(WatchdogError):
    """The model endpoint failed (after retries, or with an error not worth retrying)."""

    def __init__(self, message: str, usage: dict[str, int] | None = None,
                 attempts: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.usage = usage or {}
        self.attempts = attempts or []


class ModelBusy(LLMUnavailable, Transient):
    """One model call failed in a way worth retrying (rate limit, timeout, cut stream, connection, 5xx)."""

    def __init__(self, cause: BaseException):
        super().__init__(f"{type(cause).__name__}: {redact(clean_error(cause))}")
        self.cause = cause


class LLMNotConfigured(WatchdogError, Terminal):
    """--llm was asked for, but no endpoint is configured."""


class StreamCut(WatchdogError, Transient):
    """A streamed answer stopped: no first token in time, or no next token for the idle timeout."""

    def __init__(self, message: str, chunks: int) -> None:
        super().__init__(message)
        self.chunks = chunks


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


def build_models(config: LLMConfig, base_url: str | None = None) -> Models:
    """ChatOpenAI per role against the configured endpoint (raises LLMNotConfigured without one).

    ``base_url`` overrides the configured endpoint (a local server started for the run)."""
    configured_url, api_key = config.endpoint()
    base_url = base_url or configured_url
    if config.local is not None and not base_url:
        base_url = "http://127.0.0.1:9/v1"  # only to check the configuration: the run starts the server first
    if not base_url and not api_key:
        raise LLMNotConfigured("--llm needs a model endpoint: set OPENAI_API_KEY (and OPENAI_BASE_URL for a "
                               "non-OpenAI server), llm.base_url / llm.api_key, or llm.local.model in the config")
    from langchain_openai import ChatOpenAI
    from openai import Timeout  # the HTTP client's own Timeout class (openai 3 moved from httpx to httpx2)

    # the socket read limit only backs the stream's own first-token and idle limits up
    read_s = max(config.request_timeout_s, config.idle_timeout_s) + 5
    timeout = Timeout(read_s, connect=min(30.0, read_s))

    def make(role: str) -> BaseChatModel:
        cap = getattr(config.max_output_tokens, role)
        return ChatOpenAI(
            model=getattr(config.models, role),
            base_url=base_url,
            api_key=SecretStr(api_key or "not-needed"),
            temperature=config.temperature,
            timeout=timeout,
            max_retries=0,  # tenacity retries, once, here
            # sent as max_completion_tokens; extra_body adds max_tokens, which llama.cpp's servers read
            max_tokens=cap,  # type: ignore[call-arg]  # an alias of max_completion_tokens
            extra_body={"max_tokens": cap},
            stream_usage=True,
            use_responses_api=False,  # OpenAI-compatible servers speak Chat Completions
        )

    return Models(planner=make("planner"), specialist=make("specialist"), evaluator=make("evaluator"))


def endpoint_transient(exc: BaseException) -> bool:
    """An endpoint error worth retrying: rate limits, timeouts, cut streams, connection errors, 5xx."""
    if isinstance(exc, StreamCut):
        return True
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
    message: AIMessage
    usage: dict[str, int]             # summed over every attempt, the failed ones too
    latency_s: float
    attempts: int
    finish_reason: str | None = None  # "stop", "length" (cut by the token cap), "tool_calls"...
    log: list[dict[str, Any]] = field(default_factory=list)

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


@dataclass
class Limits:
    """How long a streamed call may wait: for its first token, then between tokens."""

    first_token_s: float = 600.0
    idle_s: float = 60.0
    attempts: int = 4
    max_wait_s: float = 8.0

    @classmethod
    def of(cls, config: LLMConfig) -> Limits:
        return cls(config.request_timeout_s, config.idle_timeout_s, config.max_attempts, config.retry_wait_max_s)


def usage_of(message: Any) -> dict[str, int]:
    meta = getattr(message, "usage_metadata", None) or {}
    return {"input": int(meta.get("input_tokens", 0) or 0), "output": int(meta.get("output_tokens", 0) or 0),
            "calls": 1}


def _has_token(chunk: Any) -> bool:
    return bool(getattr(chunk, "content", None) or getattr(chunk, "tool_call_chunks", None))


def stream_once(runnable: Any, messages: list[BaseMessage], limits: Limits) -> tuple[Any, int]:
    """One streamed attempt: the whole message and how many token chunks came. Raises StreamCut when the
    first token does not come within ``first_token_s`` or the next one within ``idle_s``."""
    events: queue.Queue[tuple[str, Any]] = queue.Queue()
    stop = threading.Event()

    def pump() -> None:
        try:
            for chunk in runnable.stream(messages):
                events.put(("chunk", chunk))
                if stop.is_set():
                    return  # leaving the loop closes the HTTP stream; the server stops generating
            events.put(("end", None))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread as it is
            events.put(("error", exc))

    threading.Thread(target=pump, name="llm-stream", daemon=True).start()
    acc: AIMessageChunk | None = None
    whole: Any = None
    tokens = 0
    while True:
        wait = limits.first_token_s if tokens == 0 else limits.idle_s
        try:
            kind, item = events.get(timeout=wait)
        except queue.Empty:
            stop.set()
            what = (f"no first token within {wait:g} s (raise llm.request_timeout_s)" if tokens == 0 else
                    f"no token for {wait:g} s after {tokens} token(s) (raise llm.idle_timeout_s)")
            raise StreamCut(what, tokens) from None
        if kind == "error":
            raise item
        if kind == "end":
            break
        if isinstance(item, AIMessageChunk):
            acc = item if acc is None else acc + item
        else:  # a whole AIMessage (a runnable that does not stream), or a structured-output runnable's ever
            whole = item  # more complete objects: the last one is the answer
        tokens += 1 if _has_token(item) else 0
    if whole is not None:
        return whole, tokens
    message = message_chunk_to_message(acc) if acc is not None else AIMessage(content="")
    assert isinstance(message, AIMessage)
    return message, tokens


def _estimate_tokens(messages: list[BaseMessage]) -> int:
    return sum(len(str(m.content)) for m in messages) // 4


def invoke(runnable: Any, messages: list[BaseMessage], limits: Limits | None = None, *,
           attempts: int | None = None, max_wait_s: float | None = None) -> Call:
    """Stream a model's answer with retries; raise LLMUnavailable (carrying the attempts' tokens) on failure."""
    limits = limits or Limits()
    if attempts is not None or max_wait_s is not None:
        limits = Limits(limits.first_token_s, limits.idle_s, attempts or limits.attempts,
                        limits.max_wait_s if max_wait_s is None else max_wait_s)
    start = time.monotonic()
    retrying = Retrying(stop=stop_after_attempt(limits.attempts),
                        wait=wait_random_exponential(multiplier=0.25, max=limits.max_wait_s),
                        retry=retry_if_exception_type(Transient), reraise=True)
    log: list[dict[str, Any]] = []
    try:
        for attempt in retrying:
            with attempt:
                began = time.monotonic()
                try:
                    message, _ = stream_once(runnable, messages, limits)
                except StreamCut as cut:
                    # the server counted these tokens even though no usage came back: estimate them
                    log.append({"outcome": "cut", "why": str(cut), "input": _estimate_tokens(messages),
                                "output": cut.chunks, "estimated": True, "seconds": round(time.monotonic() - began, 3)})
                    raise ModelBusy(cut) from cut
                except Exception as exc:
                    log.append({"outcome": "error", "why": f"{type(exc).__name__}: {clean_error(exc)}", "input": 0,
                                "output": 0, "seconds": round(time.monotonic() - began, 3)})
                    if endpoint_transient(exc):
                        raise ModelBusy(exc) from exc
                    raise
                usage = usage_of(message)
                finish = (getattr(message, "response_metadata", None) or {}).get("finish_reason")
                log.append({"outcome": "ok", "finish_reason": finish, "input": usage["input"],
                            "output": usage["output"], "seconds": round(time.monotonic() - began, 3)})
    except Exception as exc:  # endpoint down, auth error, bad request, cut stream...
        cause = exc.cause if isinstance(exc, ModelBusy) else exc
        kind = "after retries" if isinstance(exc, Transient) else "not retried"
        raise LLMUnavailable(f"model call failed ({kind}, {len(log)} attempt(s)): {type(cause).__name__}: "
                             f"{redact(clean_error(cause))}", total_usage(log), log) from None
    return Call(message, total_usage(log), time.monotonic() - start, len(log), finish, log)


def total_usage(log: list[dict[str, Any]]) -> dict[str, int]:
    out = {"input": sum(int(a["input"]) for a in log), "output": sum(int(a["output"]) for a in log),
           "calls": len(log)}
    failed = sum(1 for a in log if a["outcome"] != "ok")
    if failed:
        out["failed_calls"] = failed
    return out


_USAGE_DUMP = re.compile(r"\s*-?\s*\b[A-Z][A-Za-z]*Usage\((?:[^()]|\([^()]*\))*\)")


def clean_error(exc: BaseException) -> str:
    """The first line of an error, without client objects dumped into it (``CompletionUsage(...)``)."""
    text = str(exc).strip().splitlines()
    return _USAGE_DUMP.sub("", text[0])[:300].strip() if text else ""
