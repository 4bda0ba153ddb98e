"""A scripted, OpenAI-compatible HTTP server for tests and benchmarks (standard library only).

It is a real server: it binds ``127.0.0.1`` on a free port, speaks HTTP/1.1 through
``http.server.ThreadingHTTPServer`` in a background thread, and answers the Chat Completions
API the way the ``openai`` client (and therefore ``langchain_openai.ChatOpenAI``) expects,
both as one JSON document and, when the request asks for ``"stream": true``, as an SSE stream.

What it answers is scripted by the caller, one *step* per request::

    from watchdog.testing.openai_stub import StubOpenAI, reply, tool_call, structured, error, slow, drop

    with StubOpenAI([reply("hello", usage=(12, 3)), error(429, "slow down")]) as stub:
        llm = ChatOpenAI(base_url=stub.base_url, api_key="sk-test", model="gpt-test", max_retries=0)
        ...
        stub.requests[0]["max_completion_tokens"]

Routing
    * ``script=[...]`` is a FIFO queue: each request takes the next step.
    * ``by_marker={"[role:evaluator]": [...], ...}`` adds one queue per marker. A request goes to
      the queue of the marker found in its messages' text (system/developer messages are searched
      first, then all messages; the earliest occurrence wins). Requests without a known marker go
      to ``script``.
    * A step may carry ``when=`` (a predicate on the JSON body, or a string that must occur in the
      messages' text). Within a queue, the earliest pending step whose ``when`` accepts the
      request is served first; otherwise the earliest pending step without ``when``.
    * When a queue is exhausted, its last served step is repeated (``when_empty="repeat"``, the
      default) or the request is answered ``500`` with a message saying which queue ran dry
      (``when_empty="error"``).

Everything received is recorded in ``stub.requests`` (the Authorization header's value never is:
it is stored as ``"present"``).

Modules
    * :mod:`.steps` - the scripted answers (:class:`Step`) and their builders.
    * :mod:`.routing` - which queued step answers a request (markers, ``when=``, ``when_empty``).
    * :mod:`.request_body` - reading messages' text and tools from a request body.
    * :mod:`.responses` - chat-completion JSON, SSE chunks, usage, error bodies.
    * :mod:`.recording` - what is recorded per request (secret headers masked).
    * :mod:`.server` - :class:`StubOpenAI` (lifecycle, queues, recorded requests).
    * :mod:`.http_handler` - the HTTP server and request handler.
    * :mod:`.cli` / ``__main__`` - ``python -m watchdog.testing.openai_stub --port 8099 --reply "text"``.
"""

from __future__ import annotations

from .cli import main  # noqa: F401 - public before the split into a package
from .server import StubOpenAI
from .steps import Matcher, Step, Usage, drop, error, reply, slow, structured, tool_call  # noqa: F401

__all__ = [
    "Step",
    "StubOpenAI",
    "drop",
    "error",
    "reply",
    "slow",
    "structured",
    "tool_call",
]
