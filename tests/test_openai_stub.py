"""The scripted OpenAI-compatible stub, exercised over real HTTP by the real clients
(``openai`` and ``langchain_openai.ChatOpenAI``)."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import time

import openai
import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from watchdog.testing.openai_stub import StubOpenAI, drop, error, reply, slow, structured, tool_call

API_KEY = "sk-test-secret-value"


class Verdict(BaseModel):
    ok: bool
    reason: str


class Lookup(BaseModel):
    """Look a table up."""

    table: str


def chat(stub: StubOpenAI, **kwargs) -> ChatOpenAI:
    return ChatOpenAI(base_url=stub.base_url, api_key=API_KEY, model="gpt-test", max_retries=0, **kwargs)


def test_plain_invoke_returns_text_and_usage_and_records_the_request():
    with StubOpenAI([reply("hello there", usage=(12, 3))]) as stub:
        msg = chat(stub, temperature=0.2).invoke("say hello")
    assert msg.content == "hello there"
    assert msg.usage_metadata["input_tokens"] == 12
    assert msg.usage_metadata["output_tokens"] == 3
    assert msg.usage_metadata["total_tokens"] == 15
    assert msg.response_metadata["model_name"] == "gpt-test"
    assert msg.response_metadata["finish_reason"] == "stop"
    [rec] = stub.requests
    assert rec["path"] == "/v1/chat/completions"
    assert rec["model"] == "gpt-test" and rec["temperature"] == 0.2
    assert rec["authorization"] == "present" and rec["headers"]["authorization"] == "present"
    assert rec["has_tools"] is False and rec["has_response_format"] is False and rec["stream"] is False
    assert rec["body"]["messages"] == [{"role": "user", "content": "say hello"}]
    assert API_KEY not in json.dumps(stub.requests)


def test_default_usage_is_a_rough_word_count_and_ids_are_unique():
    client = None
    with StubOpenAI([reply("one two three")]) as stub:
        client = openai.OpenAI(base_url=stub.base_url, api_key=API_KEY, max_retries=0)
        first = client.chat.completions.create(model="m1", messages=[{"role": "user", "content": "a b c d"}])
        second = client.chat.completions.create(model="m2", messages=[{"role": "user", "content": "x"}])
    assert first.usage.prompt_tokens == 4 and first.usage.completion_tokens == 3 and first.usage.total_tokens == 7
    assert second.choices[0].message.content == "one two three"  # the last step repeats by default
    assert (first.model, second.model) == ("m1", "m2")
    assert first.id != second.id


def test_bind_tools_receives_the_scripted_tool_calls():
    script = [tool_call("Lookup", {"table": "orders"}),
              tool_call([("Lookup", {"table": "a"}), ("Lookup", {"table": "b"})], usage=(5, 6))]
    with StubOpenAI(script) as stub:
        llm = chat(stub).bind_tools([Lookup])
        one = llm.invoke("which table?")
        two = llm.invoke("which tables?")
    assert [(c["name"], c["args"]) for c in one.tool_calls] == [("Lookup", {"table": "orders"})]
    assert one.response_metadata["finish_reason"] == "tool_calls"
    assert [c["args"]["table"] for c in two.tool_calls] == ["a", "b"]
    assert len({c["id"] for c in one.tool_calls + two.tool_calls}) == 3
    assert two.usage_metadata["total_tokens"] == 11
    assert stub.requests[0]["has_tools"] and stub.requests[0]["tool_names"] == ["Lookup"]


def test_structured_output_default_method_is_json_schema_response_format():
    with StubOpenAI([structured(Verdict(ok=True, reason="fine"))]) as stub:
        out = chat(stub).with_structured_output(Verdict).invoke("judge")
    assert out == Verdict(ok=True, reason="fine")
    [rec] = stub.requests
    assert rec["response_format_type"] == "json_schema" and not rec["has_tools"]
    assert rec["body"]["response_format"]["json_schema"]["name"] == "Verdict"
    assert rec["body"]["response_format"]["json_schema"]["strict"] is True


def test_structured_output_function_calling_becomes_a_forced_tool_call():
    with StubOpenAI([structured({"ok": False, "reason": "nulls"})]) as stub:
        out = chat(stub).with_structured_output(Verdict, method="function_calling").invoke("judge")
    assert out == Verdict(ok=False, reason="nulls")
    [rec] = stub.requests
    assert rec["tool_choice"] == {"type": "function", "function": {"name": "Verdict"}}
    assert rec["tool_names"] == ["Verdict"] and not rec["has_response_format"]


def test_structured_output_json_mode_and_include_raw():
    with StubOpenAI([structured({"ok": True, "reason": "json"})]) as stub:
        out = chat(stub).with_structured_output(Verdict, method="json_mode", include_raw=True).invoke("judge, in JSON")
    assert out["parsed"] == Verdict(ok=True, reason="json") and out["parsing_error"] is None
    assert out["raw"].usage_metadata["total_tokens"] > 0
    assert stub.requests[0]["response_format_type"] == "json_object"


@pytest.mark.parametrize(("status", "exc"), [(500, openai.InternalServerError), (429, openai.RateLimitError),
                                             (401, openai.AuthenticationError), (400, openai.BadRequestError)])
def test_error_steps_raise_the_matching_openai_exception(status, exc):
    with StubOpenAI([error(status, f"scripted {status}")]) as stub, pytest.raises(exc) as caught:
        chat(stub).invoke("hi")
    assert caught.value.status_code == status
    assert f"scripted {status}" in str(caught.value)
    assert caught.value.body["message"] == f"scripted {status}" and caught.value.body["type"]
    if status == 429:
        assert caught.value.response.headers["retry-after"] == "0"


def test_rate_limit_is_retried_by_the_client_without_waiting():
    with StubOpenAI([error(429, "busy"), reply("after retry")]) as stub:
        started = time.monotonic()
        msg = ChatOpenAI(base_url=stub.base_url, api_key=API_KEY, model="gpt-test", max_retries=1).invoke("hi")
    assert msg.content == "after retry" and len(stub.requests) == 2
    assert time.monotonic() - started < 2


def test_slow_step_times_out_the_client_and_the_stub_still_closes_fast():
    stub = StubOpenAI([slow(2, then=reply("too late"))]).start()
    try:
        started = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            chat(stub, timeout=0.5).invoke("hi")
        assert time.monotonic() - started < 1.5
    finally:
        closing = time.monotonic()
        stub.close()
    assert time.monotonic() - closing < 1.0
    assert stub.requests[0]["served"] == "slow(2)>reply"


def test_slow_step_answers_after_the_delay():
    with StubOpenAI([slow(0.2, then=tool_call("Lookup", {"table": "t"}))]) as stub:
        started = time.monotonic()
        msg = chat(stub, timeout=5).bind_tools([Lookup]).invoke("hi")
    assert time.monotonic() - started >= 0.2
    assert msg.tool_calls[0]["args"] == {"table": "t"}


def test_drop_raises_a_connection_error():
    with StubOpenAI([drop(), reply("back")]) as stub:
        llm = chat(stub)
        with pytest.raises(openai.APIConnectionError) as caught:
            llm.invoke("hi")
        assert not isinstance(caught.value, openai.APITimeoutError)
        assert llm.invoke("again").content == "back"  # the server survives a dropped connection


def test_role_keyed_queues_route_by_marker():
    queues = {
        "[role:specialist]": [reply("spec 1"), reply("spec 2")],
        "[role:evaluator]": [structured(Verdict(ok=True, reason="eval 1")), reply("eval 2")],
    }
    with StubOpenAI(script=[reply("unmarked")], by_marker=queues, when_empty="error") as stub:
        llm = chat(stub)

        def ask(marker: str, text: str = "go"):
            return [SystemMessage(f"You are a helper. {marker}"), HumanMessage(text)]

        assert llm.invoke(ask("[role:evaluator]")).content == '{"ok": true, "reason": "eval 1"}'
        assert llm.invoke(ask("[role:specialist]")).content == "spec 1"
        assert llm.invoke(ask("")).content == "unmarked"
        # the system prompt wins over a marker quoted in the conversation
        assert llm.invoke(ask("[role:specialist]", "the [role:evaluator] said ...")).content == "spec 2"
        assert llm.invoke(ask("[role:evaluator]")).content == "eval 2"
        with pytest.raises(openai.InternalServerError, match="exhausted"):
            llm.invoke(ask("[role:specialist]"))
    assert [r["marker"] for r in stub.requests] == [
        "[role:evaluator]", "[role:specialist]", None, "[role:specialist]", "[role:evaluator]", "[role:specialist]"]
    assert stub.requests[-1]["served"] == "stub-error"
    assert stub.pending == {None: 0, "[role:specialist]": 0, "[role:evaluator]": 0}


def test_unconfigured_role_markers_are_still_recorded():
    with StubOpenAI([reply("ok")]) as stub:
        chat(stub).invoke([SystemMessage("[role:planner] plan it"), HumanMessage("x")])
    assert stub.requests[0]["marker"] == "[role:planner]"


def test_when_predicates_pick_steps_out_of_order():
    script = [reply("default"), reply("about orders", when="orders"),
              reply("hot", when=lambda body: body.get("temperature") == 1.5)]
    with StubOpenAI(script, when_empty="error") as stub:
        assert chat(stub, temperature=1.5).invoke("x").content == "hot"
        assert chat(stub).invoke("check the orders table").content == "about orders"
        assert chat(stub).invoke("anything").content == "default"
        with pytest.raises(openai.InternalServerError, match="exhausted"):
            chat(stub).invoke("more")


def test_exhausted_queue_repeats_its_last_step_by_default():
    with StubOpenAI([reply("first"), reply("again")]) as stub:
        llm = chat(stub)
        assert [llm.invoke("x").content for _ in range(4)] == ["first", "again", "again", "again"]
    with StubOpenAI() as stub, pytest.raises(openai.InternalServerError, match="exhausted"):  # nothing scripted
        chat(stub).invoke("x")


def test_token_limits_as_sent_by_chat_openai_are_recorded():
    with StubOpenAI([reply("ok")]) as stub:
        chat(stub, max_tokens=64).invoke("x")
        chat(stub, max_completion_tokens=65).invoke("x")
        chat(stub, max_tokens=67, extra_body={"max_tokens": 67}).invoke("x")
        chat(stub, extra_body={"max_tokens": 68}).invoke("x")
        chat(stub).invoke("x", max_tokens=69)
    got = [(r["max_tokens"], r["max_completion_tokens"]) for r in stub.requests]
    # ChatOpenAI renames max_tokens to max_completion_tokens; only extra_body puts max_tokens on the wire.
    assert got == [(None, 64), (None, 65), (67, 67), (68, None), (None, 69)]


def test_model_kwargs_max_tokens_is_renamed_too():
    with StubOpenAI([reply("ok")]) as stub:
        with pytest.warns(UserWarning, match="max_tokens"):
            llm = chat(stub, model_kwargs={"max_tokens": 66})
        llm.invoke("x")
    assert (stub.requests[0]["max_tokens"], stub.requests[0]["max_completion_tokens"]) == (None, 66)


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")  # langchain-internal, on streamed parsing
def test_streaming_reply_tool_calls_and_structured_output():
    script = [reply("a streamed answer of several words", usage=(4, 6)),
              tool_call([("Lookup", {"table": "a"}), ("Lookup", {"table": "b"})]),
              structured(Verdict(ok=True, reason="streamed"))]
    with StubOpenAI(script) as stub:
        llm = chat(stub, streaming=True, stream_usage=True)
        msg = llm.invoke("x")
        calls = llm.bind_tools([Lookup]).invoke("y").tool_calls
        parsed = list(chat(stub).with_structured_output(Verdict).stream("z"))
    assert msg.content == "a streamed answer of several words"
    assert msg.usage_metadata["input_tokens"] == 4 and msg.usage_metadata["output_tokens"] == 6
    assert [c["args"] for c in calls] == [{"table": "a"}, {"table": "b"}]
    assert parsed[-1] == Verdict(ok=True, reason="streamed")
    assert all(r["stream"] for r in stub.requests)
    assert stub.requests[0]["body"]["stream_options"] == {"include_usage": True}


def test_raw_sse_stream_is_well_formed():
    with StubOpenAI([reply("raw stream")]) as stub:
        conn = http.client.HTTPConnection("127.0.0.1", stub.port, timeout=5)
        conn.request("POST", "/v1/chat/completions", body=json.dumps(
            {"model": "gpt-test", "stream": True, "messages": [{"role": "user", "content": "x"}]}),
            headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        data = resp.read().decode()
        conn.close()
    assert resp.status == 200 and resp.getheader("Content-Type").startswith("text/event-stream")
    events = [line[len("data: "):] for line in data.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks) == "raw stream"
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert stub.requests[0]["authorization"] is None


def test_models_endpoint_lists_configured_and_seen_models():
    with StubOpenAI([reply("ok")], models=["local-llama"]) as stub:
        client = openai.OpenAI(base_url=stub.base_url, api_key=API_KEY, max_retries=0)
        client.chat.completions.create(model="gpt-seen", messages=[{"role": "user", "content": "x"}])
        ids = [m.id for m in client.models.list()]
    assert ids == ["local-llama", "gpt-seen"]
    assert [r["path"] for r in stub.requests] == ["/v1/chat/completions", "/v1/models"]
    assert len(stub.chat_requests) == 1


def test_close_releases_the_port_and_threads():
    with StubOpenAI([reply("ok")]) as stub:
        chat(stub).invoke("x")  # leaves an idle keep-alive connection in the client's pool
        port, thread = stub.port, stub._thread
    assert not thread.is_alive() and not stub._handler_threads
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    assert stub.errors == []


def test_cli_serves_a_reply():
    command = [sys.executable, "-m", "watchdog.testing.openai_stub", "--port", "0", "--reply", "from cli"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        base_url = line.split(" on ", 1)[1].split()[0]
        client = openai.OpenAI(base_url=base_url, api_key=API_KEY, max_retries=0, timeout=5)
        answer = client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "x"}])
        assert answer.choices[0].message.content == "from cli"
    finally:
        proc.terminate()
        proc.wait(timeout=5)


def test_structured_picks_the_tool_named_like_the_object_among_several():
    with StubOpenAI([structured(Verdict(ok=True, reason="by class")), structured({"table": "t"}),
                     structured({"table": "u"}, name="Lookup")], when_empty="error") as stub:
        llm = chat(stub).bind_tools([Lookup, Verdict])
        assert llm.invoke("x").tool_calls[0]["name"] == "Verdict"
        with pytest.raises(openai.InternalServerError, match="name="):
            llm.invoke("y")
        assert llm.invoke("z").tool_calls[0]["args"] == {"table": "u"}


def test_concurrent_async_requests_are_served_in_parallel():
    import asyncio

    queues = {f"[role:r{i}]": [slow(0.3, then=reply(f"answer {i}"))] for i in range(4)}
    with StubOpenAI(by_marker=queues) as stub:
        llm = chat(stub, timeout=5)

        async def main():
            return await asyncio.gather(*(llm.ainvoke([SystemMessage(f"[role:r{i}]"), HumanMessage("go")])
                                          for i in range(4)))

        started = time.monotonic()
        answers = asyncio.run(main())
        elapsed = time.monotonic() - started
    assert [a.content for a in answers] == [f"answer {i}" for i in range(4)]
    assert elapsed < 1.0  # four 0.3 s answers overlapped


def test_public_api_is_reexported_by_the_package_and_by_watchdog_testing():
    import watchdog.testing as testing
    from watchdog.testing import openai_stub

    assert sorted(openai_stub.__all__) == ["Step", "StubOpenAI", "drop", "error", "reply", "slow", "structured",
                                           "tool_call"]
    for name in openai_stub.__all__:
        assert getattr(testing, name) is getattr(openai_stub, name)
    assert callable(openai_stub.main) and openai_stub.Matcher is not None and openai_stub.Usage is not None


def test_cli_module_runs_without_import_warnings():
    command = [sys.executable, "-W", "error", "-m", "watchdog.testing.openai_stub", "--help"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert "--reply" in done.stdout and done.stderr == ""
