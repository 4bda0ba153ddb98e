"""Build the report graph. Nothing is built at import time: call :func:`build_report_graph`."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph

from watchdog.graph.models import Models, placeholder_models
from watchdog.graph.nodes import GraphDeps, VerifyFn, make_nodes, make_routers
from watchdog.graph.state import ReportState
from watchdog.settings import LLMConfig


def build_report_graph(models: Models, verify_fn: VerifyFn, checkpointer: Any = None, *,
                       config: LLMConfig | None = None, tools: list[BaseTool] | None = None) -> Any:
    """The compiled StateGraph: (plan →) write → evaluate ⇄ fix → finalize, with replan and fallback."""
    config = config or LLMConfig()
    nodes = make_nodes(GraphDeps(models=models, verify_fn=verify_fn, config=config, tools=tools or []))
    routers = make_routers(config)
    builder = StateGraph(ReportState)
    for name, node in nodes.items():
        builder.add_node(name, node)
    builder.add_conditional_edges(START, routers["start"], {"plan": "plan", "write": "write"})
    builder.add_conditional_edges("plan", routers["after_plan"], {"write": "write", "fallback": "fallback"})
    builder.add_conditional_edges("write", routers["after_draft"], {"evaluate": "evaluate", "fallback": "fallback"})
    builder.add_conditional_edges("fix", routers["after_draft"], {"evaluate": "evaluate", "fallback": "fallback"})
    builder.add_conditional_edges("evaluate", routers["after_evaluate"],
                                  {"finalize": "finalize", "fix": "fix", "replan": "replan", "fallback": "fallback"})
    builder.add_conditional_edges("replan", routers["start"], {"plan": "plan", "write": "write"})
    builder.add_edge("finalize", END)
    builder.add_edge("fallback", END)
    return builder.compile(checkpointer=checkpointer, name="watchdog_report")


def mermaid(config: LLMConfig | None = None) -> str:
    """The graph as a Mermaid diagram (built with placeholder models; no endpoint needed)."""
    graph = build_report_graph(placeholder_models(), lambda report, findings: None, config=config)
    return graph.get_graph().draw_mermaid()
