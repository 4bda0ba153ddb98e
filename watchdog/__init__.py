"""watchdog: a data-quality watchdog for SQL databases.

The Python API (see docs/api.md)::

    import watchdog

    findings = watchdog.scan("sqlite:///shop.db", "checks/shop.yaml")   # writes nothing
    run = watchdog.run_audit("nightly", config="watchdog.yaml")         # as `watchdog run nightly`
    watchdog.verify(report_markdown, findings).passed

Everything is imported on first use, so ``import watchdog`` stays cheap. ``watchdog.scan`` and
``watchdog.verify`` are also the packages of those names: calling them runs the API function.

Not to be confused with the PyPI package of the same import name (a file-system events library): this
package is the one distributed as ``watchdog-dq``.
"""

from __future__ import annotations

import sys
import types
from typing import Any

__version__ = "0.1.0"
#: the distribution this package is (what tells it apart from PyPI's unrelated ``watchdog``)
__distribution__ = "watchdog-dq"

#: public name -> the module that defines it
_EXPORTS = {
    "run_audit": "watchdog.api", "load_suite": "watchdog.api", "RunResult": "watchdog.api",
    "profile_database": "watchdog.api.profiling", "suggest": "watchdog.api.profiling",
    "TableProfile": "watchdog.profile.stats", "ColumnProfile": "watchdog.profile.stats",
    "Suggestion": "watchdog.profile.suggest",
    "Sandbox": "watchdog.sandbox", "QueryResult": "watchdog.sandbox.result", "DatabaseConfig": "watchdog.database",
    "Findings": "watchdog.findings", "FindingsDoc": "watchdog.findings", "Finding": "watchdog.findings",
    "Summary": "watchdog.findings", "ExitCode": "watchdog.exit_codes",
    "WatchdogError": "watchdog.errors", "ConfigError": "watchdog.errors", "SandboxError": "watchdog.errors",
    "QueryRefused": "watchdog.errors", "QueryTimeout": "watchdog.errors", "QueryError": "watchdog.errors",
    "DatabaseUnavailable": "watchdog.errors", "Interrupted": "watchdog.errors",
    "Suite": "watchdog.scan.suites", "SuiteSource": "watchdog.scan.suites", "SuiteError": "watchdog.scan.suites",
    "Verification": "watchdog.verify.model", "BadItem": "watchdog.verify.model",
}
#: API functions whose name is also a subpackage's: the subpackage, made callable
_CALLABLE_PACKAGES = {"scan": "watchdog.scan", "verify": "watchdog.verify"}
_ALIASES = {"Findings": "FindingsDoc"}

__all__ = sorted([*_EXPORTS, *_CALLABLE_PACKAGES, "__version__"])


class _CallablePackage(types.ModuleType):
    """``watchdog.scan`` / ``watchdog.verify``: the subpackage, which called runs :mod:`watchdog.api`'s function."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from watchdog import api

        return getattr(api, self.__name__.rpartition(".")[2])(*args, **kwargs)


def _callable_package(name: str) -> types.ModuleType:
    import importlib

    module = importlib.import_module(_CALLABLE_PACKAGES[name])
    if not isinstance(module, _CallablePackage):
        module.__class__ = _CallablePackage
    return module


class _Package(types.ModuleType):
    """Importing ``watchdog.scan.scanner`` binds the attribute ``scan`` of this package to the subpackage; the
    properties hand out the callable subpackage whatever imported it first."""

    @property
    def scan(self) -> Any:
        return _callable_package("scan")

    @scan.setter
    def scan(self, value: Any) -> None:
        pass

    @property
    def verify(self) -> Any:
        return _callable_package("verify")

    @verify.setter
    def verify(self, value: Any) -> None:
        pass


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'watchdog' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), _ALIASES.get(name, name))


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


sys.modules[__name__].__class__ = _Package
