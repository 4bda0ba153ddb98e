"""The diagnosis of failing checks: where their rows concentrate, since when, which values, shared rows."""

from watchdog.diagnose.stage import diagnose, diagnose_doc, wanted

__all__ = ["diagnose", "diagnose_doc", "wanted"]
