"""One exception root; transient vs terminal as marker classes the retry rules read."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import watchdog
from watchdog.errors import Terminal, Transient, WatchdogError


def _all_error_classes() -> list[type]:
    for info in pkgutil.walk_packages(watchdog.__path__, "watchdog."):
        if ".testing" in info.name or info.name.endswith("__main__"):
            continue
        importlib.import_module(info.name)
    seen: list[type] = []
    todo = [Exception]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.append(sub)
                todo.append(sub)
    return [c for c in seen if c.__module__.startswith("watchdog.") and not c.__module__.startswith("watchdog.testing")]


def test_every_error_watchdog_defines_is_under_the_one_root():
    classes = _all_error_classes()
    assert {c.__name__ for c in classes} >= {"ConfigError", "SuiteError", "QueryRefused", "DeliveryError",
                                              "LLMUnavailable", "LLMNotConfigured"}
    # two private signals never reach a caller: YAML duplicate keys become ConfigError/SuiteError, and the SQLite
    # worker process (standard library only, by design) reports a missing file that becomes DatabaseUnavailable
    private = {"watchdog.yaml_lines.DuplicateKeyError", "watchdog.sandbox.sqlite_worker.Unavailable"}
    strays = [f"{c.__module__}.{c.__name__}" for c in classes
              if not issubclass(c, (WatchdogError, Transient, Terminal))
              and f"{c.__module__}.{c.__name__}" not in private]
    assert strays == []


def test_no_error_is_both_transient_and_terminal():
    both = [c.__name__ for c in _all_error_classes() if issubclass(c, Transient) and issubclass(c, Terminal)]
    assert both == []


@pytest.mark.parametrize(("dotted", "marker"), [
    ("watchdog.errors.QueryTimeout", Transient), ("watchdog.errors.DatabaseUnavailable", Transient),
    ("watchdog.errors.QueryRefused", Terminal), ("watchdog.errors.QueryError", Terminal),
    ("watchdog.errors.ConfigError", Terminal), ("watchdog.scan.suites.SuiteError", Terminal),
    ("watchdog.delivery.base.DeliveryError", Transient), ("watchdog.graph.models.ModelBusy", Transient),
    ("watchdog.graph.models.LLMNotConfigured", Terminal),
])
def test_the_marker_says_whether_a_retry_can_help(dotted, marker):
    module, _, name = dotted.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, WatchdogError) and issubclass(cls, marker)
