"""The layout keeps its promises: imports one way (no cycles), small modules, and the paths users and stored
job references depend on still import."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "watchdog"
MAX_LINES = 450


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        if ".testing" not in name:
            out[name] = path
    return out


def _imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Modules of the package that ``name`` imports at run time (TYPE_CHECKING blocks left out)."""
    tree = ast.parse(path.read_text())
    skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for n in ast.walk(node)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    resolved = set()
    for item in found:
        while item and item not in known:
            item = item.rpartition(".")[0]
        if item and item != name and item.startswith("watchdog") and not item.startswith(name + "."):
            resolved.add(item)
    return resolved


def test_no_import_cycle_between_modules():
    known = _modules()
    graph = {name: _imports(name, path, known) for name, path in known.items()}
    cycles = []

    def visit(node: str, trail: list[str], done: set[str]) -> None:
        for nxt in graph[node]:
            if nxt in trail:
                cycles.append(trail[trail.index(nxt):] + [nxt])
            elif nxt not in done:
                visit(nxt, [*trail, nxt], done)
        done.add(node)

    done: set[str] = set()
    for start in graph:
        if start not in done:
            visit(start, [start], done)
    assert cycles == []


def test_no_module_is_oversized():
    big = {name: n for name, path in _modules().items() if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert big == {}


def test_few_top_level_modules():
    top = [p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert len(top) <= 12, top


@pytest.mark.parametrize("dotted", [
    "watchdog.cli:main", "watchdog.exit_codes:ExitCode", "watchdog.sandbox:Sandbox", "watchdog.errors:WatchdogError",
    "watchdog.verify:verify_fn",
    # references APScheduler stored in job stores written by earlier versions, and the current ones
    "watchdog.scheduler:run_audit_job", "watchdog.scheduler:flush_outbox_job",
    "watchdog.daemon.jobs:run_audit_job", "watchdog.daemon.jobs:flush_outbox_job",
])
def test_documented_and_stored_paths_still_resolve(dotted):
    from apscheduler.util import ref_to_obj

    assert callable(ref_to_obj(dotted))

