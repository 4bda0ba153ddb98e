"""The delivery step as a small LangGraph graph, so a run can pause for review before delivery.

``gate`` passes straight through unless the audit has ``review: true``; then it raises a LangGraph
``interrupt`` that the checkpointer persists, and the run waits (``awaiting_review``) until
``watchdog review approve|reject RUN_ID`` resumes it from any later process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt


class DeliveryState(TypedDict, total=False):
    run_id: str
    audit: str
    run_dir: str
    review: bool
    decision: dict[str, Any] | None
    delivered: list[dict[str, Any]]


def thread_config(run_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": f"deliver:{run_id}"}}


def build_delivery_graph(send_run: Callable[[DeliveryState], list[dict[str, Any]]],
                         reject: Callable[[DeliveryState], None], checkpointer: Any) -> Any:
    def gate(state: DeliveryState) -> dict[str, Any]:
        if not state.get("review"):
            return {"decision": {"approved": True, "by": "no review required"}}
        decision = interrupt({"run_id": state["run_id"], "run_dir": state["run_dir"],
                              "question": "approve or reject this run's delivery"})
        return {"decision": decision}

    def route(state: DeliveryState) -> Literal["deliver", "rejected"]:
        return "deliver" if (state.get("decision") or {}).get("approved") else "rejected"

    def deliver_node(state: DeliveryState) -> dict[str, Any]:
        return {"delivered": send_run(state)}

    def rejected_node(state: DeliveryState) -> dict[str, Any]:
        reject(state)
        return {"delivered": []}

    builder = StateGraph(DeliveryState)
    builder.add_node("gate", gate)
    builder.add_node("deliver", deliver_node)
    builder.add_node("rejected", rejected_node)
    builder.add_edge(START, "gate")
    builder.add_conditional_edges("gate", route, {"deliver": "deliver", "rejected": "rejected"})
    builder.add_edge("deliver", END)
    builder.add_edge("rejected", END)
    return builder.compile(checkpointer=checkpointer, name="watchdog_delivery")


def resume_command(approved: bool, reason: str | None = None, by: str = "cli") -> Command:
    return Command(resume={"approved": approved, "reason": reason, "by": by})
