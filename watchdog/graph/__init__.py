"""The LLM report graph: nodes, prompts, tools and the deterministic verifier of report numbers."""
