"""An audit's check selection in the configuration (``tags``, ``owners``, ``exclude_tags`` on an audit): the
same selection as ``watchdog scan --tags/--owner/--exclude-tags`` (:mod:`watchdog.scan.selection`), kept in
this small module so loading the settings does not load the suites' machinery."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from watchdog.scan.selection import CheckSelection


class AuditSelection(BaseModel):
    """Only the checks with one of ``tags``, of one of ``owners``, without any of ``exclude_tags`` run."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    tags: list[str] | None = Field(default=None, min_length=1)
    owners: list[str] | None = Field(default=None, min_length=1)
    exclude_tags: list[str] | None = Field(default=None, min_length=1)

    @property
    def selection(self) -> CheckSelection:
        from watchdog.scan.selection import CheckSelection

        return CheckSelection.of(self.tags, self.owners, self.exclude_tags)
