"""``watchdog mcp``: the sandbox as a Model Context Protocol server (stdio or streamable HTTP).

:mod:`watchdog.mcp.toolbox` does the work (plain Python, no MCP import: the same sandbox, suites, history
and verify_fn every other entry point uses); :mod:`watchdog.mcp.server` exposes it with the official SDK.
"""
