"""Run history: every audit run, its findings, verify outcome and deliveries (SQLAlchemy)."""

from watchdog.history.store import DeliveryRecord, HistoryStore, RunRecord

__all__ = ["DeliveryRecord", "HistoryStore", "RunRecord"]
