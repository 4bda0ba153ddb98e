"""Build the report graph. Nothing is built at import time: call :func:`build_report_graph`."""

from __future__ import annotations

from functools import partial
from typing import Any

from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph

from watchdog.graph import nodes
from watchdog.graph.models import Models, placeholder_models
from watchdog.graph.nodes import GraphDeps, VerifyFn
from watchdog.graph.review import evaluate
from watchdog.graph.state import ReportInput, ReportState
from watchdog.settings import LLMConfig


def build_report_graph(models: Models, verify_fn: VerifyFn, checkpointer: Any = None, *,
                       config: LLMConfig | None = None, tools: list[BaseTool] | None = None) -> Any:
    """The compiled StateGraph: (plan →) write → evaluate ⇄ fix → finalize, with replan and fallback."""
    config = config or LLMConfig()
    deps = GraphDeps(models=models, verify_fn=verify_fn, config=config, tools=tools or [])
    builder = StateGraph(ReportState, input_schema=ReportInput)
    builder.add_node("plan", partial(nodes.plan, deps=deps))
    builder.add_node("write", partial(nodes.write, deps=deps))
    builder.add_node("evaluate", partial(evaluate, deps=deps))
    builder.add_node("fix", partial(nodes.fix, deps=deps))
    builder.add_node("replan", nodes.replan)
    builder.add_node("finalize", nodes.finalize)
    builder.add_node("fallback", nodes.fallback)
    start = partial(nodes.route_start, cfg=config)
    builder.add_conditional_edges(START, start, {"plan": "plan", "write": "write"})
    builder.add_conditional_edges("plan", nodes.route_after_plan, {"write": "write", "fallback": "fallback"})
    builder.add_conditional_edges("write", nodes.route_after_draft, {"evaluate": "evaluate", "fallback": "fallback"})
    builder.add_conditional_edges("fix", nodes.route_after_draft, {"evaluate": "evaluate", "fallback": "fallback"})
    builder.add_conditional_edges("evaluate", partial(nodes.route_after_evaluate, cfg=config),
                                  {"finalize": "finalize", "fix": "fix", "replan": "replan", "fallback": "fallback"})
    builder.add_conditional_edges("replan", start, {"plan": "plan", "write": "write"})
    builder.add_edge("finalize", END)
    builder.add_edge("fallback", END)
    return builder.compile(checkpointer=checkpointer, name="watchdog_report")


def mermaid(config: LLMConfig | None = None) -> str:
    """The graph as a Mermaid diagram (built with placeholder models; no endpoint needed)."""
    graph = build_report_graph(placeholder_models(), lambda report, findings: None, config=config)
    return graph.get_graph().draw_mermaid()
