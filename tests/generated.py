"""bench/dbgen.py's random databases in the test suite (the ``generated_database`` fixture of conftest.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.dbgen import GeneratedDatabase, generate
from tests.dbs import TestDatabase


@dataclass
class Generated:
    url: str                    # the loaded database (SQLAlchemy URL of a throw-away test database)
    suite: Path                 # the suite YAML
    truth: dict[str, Any]       # GeneratedDatabase.truth()
    database: GeneratedDatabase
    db: TestDatabase

    def check(self, name: str) -> dict[str, Any]:
        """The truth of one check, by its name."""
        return next(c for c in self.truth["checks"] if c["name"] == name)


def load_generated(db: TestDatabase, folder: Path, seed: int, *, declare: bool = False,
                   **options: Any) -> Generated:
    """Generate the database of ``seed``, load it into ``db`` and write its suite into ``folder``."""
    gen = generate(seed, **options)
    gen.load(db.url)
    folder.mkdir(parents=True, exist_ok=True)
    suite = folder / f"suite-{seed}.yaml"
    suite.write_text(gen.suite_yaml(declare=declare), encoding="utf-8")
    return Generated(db.url, suite, gen.truth(), gen, db)
