"""The specialist's tool: the sandboxed query tool, and a bounded tool loop run as its own subgraph.

The loop has its own budget of tool calls (``llm.tool_budget``) and its own recursion limit, so a
model that keeps calling tools cannot exhaust the outer graph's recursion limit: once the budget is
spent the model is asked, without tools, to write the report.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from watchdog.errors import SandboxError
from watchdog.findings import jsonable
from watchdog.graph import prompts
from watchdog.graph.models import Call
from watchdog.graph.state import add_tokens
from watchdog.redact import redact
from watchdog.report.escape import plain_text
from watchdog.sandbox import Sandbox


def query_tool(sandbox: Sandbox, max_rows: int = 20) -> BaseTool:
    """``query_database(sql)``: one read-only statement through the sandbox, a few rows back as JSON."""

    def query_database(sql: str) -> str:
        """Run ONE read-only SQL SELECT against the audited database and return up to a few rows as JSON.
        Writes and anything with side effects are refused."""
        try:
            result = sandbox.query(sql, max_rows=max_rows)
        except SandboxError as exc:
            return f"{exc.prefix}: {redact(exc)}"
        rows = [{c: plain_text(jsonable(v), 200) for c, v in zip(result.columns, row, strict=False)}
                for row in result.rows]
        return json.dumps({"columns": result.columns, "rows": rows, "truncated": result.truncated},
                          ensure_ascii=False)

    return StructuredTool.from_function(query_database, name="query_database")


class ToolLoopState(TypedDict, total=False):
    messages: Annotated[list[BaseMessage], add_messages]
    tool_calls: int
    tokens: Annotated[dict[str, dict[str, int]], add_tokens]
    latency_s: float


Invoke = Callable[[Any, list[BaseMessage]], Call]


def build_tool_loop(model: Any, tools: list[BaseTool], budget: int, call: Invoke) -> Any:
    """A compiled subgraph: agent ⇄ tools until the model answers without tool calls (or the budget is spent)."""
    by_name = {t.name: t for t in tools}
    with_tools = model.bind_tools(tools) if tools and budget > 0 else model

    def agent(state: ToolLoopState) -> dict[str, Any]:
        spent = state.get("tool_calls", 0) >= budget or not tools
        result = call(model if spent else with_tools, list(state["messages"]))
        reply = result.message
        if spent and isinstance(reply, AIMessage) and reply.tool_calls:  # a model that will not stop
            reply = AIMessage(content=reply.content or "", id=reply.id, response_metadata=reply.response_metadata)
        return {"messages": [reply], "tokens": {"specialist": result.usage},
                "latency_s": state.get("latency_s", 0.0) + result.latency_s}

    def run_tools(state: ToolLoopState) -> dict[str, Any]:
        """Answer every tool call (the API requires it); past the budget, with a note instead of a query."""
        used = state.get("tool_calls", 0)
        out: list[BaseMessage] = []
        for tool_call in getattr(state["messages"][-1], "tool_calls", []):
            tool = by_name.get(tool_call["name"])
            if used >= budget:
                content = prompts.TOOL_BUDGET_SPENT
            elif tool is None:
                content = f"error: no tool named {tool_call['name']!r}"
            else:
                content = str(tool.invoke(tool_call["args"]))
            used += 1
            out.append(ToolMessage(content=content, tool_call_id=tool_call["id"], name=tool_call["name"]))
        return {"messages": out, "tool_calls": used}

    def route(state: ToolLoopState) -> Literal["tools", "__end__"]:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "__end__"

    builder = StateGraph(ToolLoopState)
    builder.add_node("agent", agent)
    builder.add_node("tools", run_tools)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, {"tools": "tools", "__end__": END})
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=False, name="tool_loop")


def loop_recursion_limit(budget: int) -> int:
    return 2 * budget + 6
