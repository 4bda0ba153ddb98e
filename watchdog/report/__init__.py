"""Reports rendered from findings (Jinja2 templates)."""

from watchdog.report.render import render_markdown

__all__ = ["render_markdown"]
