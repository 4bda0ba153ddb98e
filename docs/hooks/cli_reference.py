"""The CLI reference, generated from the click commands themselves.

Two roles in one file:

* ``python docs/hooks/cli_reference.py`` (run with the project's Python, where ``watchdog`` is this
  package) prints the reference as Markdown: every command of ``watchdog.cli.app.cli``, in order,
  with its usage, help text and options exactly as ``watchdog COMMAND --help`` prints them.
* As an MkDocs hook (``hooks:`` in mkdocs.yml) it replaces the marker line in ``docs/cli.md`` with
  that output. MkDocs runs in its own virtual environment (``.venv-docs``): mkdocs depends on PyPI's
  unrelated ``watchdog`` package (file-system events), which must never share an environment with this
  one. So the hook runs the project's Python in a subprocess: ``$WATCHDOG_DOCS_PYTHON``, else
  ``.venv/bin/python`` at the top of the repository.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

MARKER = "<!-- cli-reference: generated from the click commands at build time -->"
ROOT = Path(__file__).resolve().parents[2]


def render() -> str:
    """Markdown for every command and subcommand of the ``watchdog`` group (imports watchdog)."""
    import click

    from watchdog.cli.app import cli

    out: list[str] = []

    def walk(command: click.Command, parent: click.Context | None, path: list[str]) -> None:
        ctx = click.Context(command, info_name=path[-1], parent=parent, terminal_width=88, max_content_width=88)
        if parent is not None:
            out.append(f"{'#' * min(len(path), 4)} `{' '.join(path)}`\n")
            first = (command.help or "").strip().split("\n\n")[0].replace("\n", " ")
            if first:
                out.append(f"{first}\n")
            out.append("```text\n" + command.get_help(ctx).rstrip() + "\n```\n")
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    walk(sub, ctx, [*path, name])

    top = click.Context(cli, info_name="watchdog", terminal_width=88, max_content_width=88)
    out.append("```text\n" + cli.get_help(top).rstrip() + "\n```\n")
    walk(cli, None, ["watchdog"])
    return "\n".join(out)


def project_python() -> str:
    explicit = os.environ.get("WATCHDOG_DOCS_PYTHON")
    if explicit:
        return explicit
    venv = ROOT / ".venv" / "bin" / "python"
    if venv.exists():
        return str(venv)
    raise RuntimeError("cli reference: no project Python found; create .venv (pip install -e .) or set "
                       "WATCHDOG_DOCS_PYTHON to a Python where `import watchdog` is this package")


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER not in markdown:
        return markdown
    done = subprocess.run([project_python(), str(Path(__file__).resolve())], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"cli reference: the generator failed:\n{done.stderr.strip()}")
    return markdown.replace(MARKER, done.stdout)


if __name__ == "__main__":
    sys.stdout.write(render())
