"""Compatibility re-export: verify_fn moved to :mod:`watchdog.verify` (it is used with or without an LLM)."""

from watchdog.verify import Verification, unwrap_report, verify_fn

__all__ = ["Verification", "unwrap_report", "verify_fn"]
