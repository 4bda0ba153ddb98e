"""The diagnosis of failing checks: where their rows concentrate, since when, which values, shared rows."""

from watchdog.diagnose.stage import diagnose, wanted

__all__ = ["diagnose", "wanted"]
