"""Reports rendered from findings: Markdown in plain Python, HTML and e-mail from Jinja2 templates."""

from watchdog.report.render import render_markdown

__all__ = ["render_markdown"]
