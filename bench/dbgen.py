"""Random databases with planted causes, from a seed: data no prompt and no rule was tuned to.

``generate(seed)`` picks a domain (clinic, logistics, IoT, events, membership, shop, housing, school), a
parent table and one or two child tables with random names, columns, sizes and a random mix of checks.
Every check that can fail gets a role:

* ``cause``: its failing rows are planted in one segment value (``source = 'csv_import'``), in a time
  window (all since a date), or both -- what a diagnosis should find;
* ``control``: its failing rows are spread uniformly at random -- where a diagnosis must claim nothing;
* ``clean``: no failing rows.

The returned :class:`GeneratedDatabase` holds the rows, writes them to SQLite (:meth:`write_sqlite`) or
loads them into any SQLAlchemy URL (:meth:`load`, e.g. PostgreSQL), writes the suite YAML
(:meth:`suite_yaml`), and gives the ground truth as a JSON-able dict (:meth:`truth`): for every check its
failing count and, for the planted causes, the segment (column, value, failing rows in it, rows in it,
both shares) and the window (planted bounds, first and last failing timestamp). The truth is computed
from the final rows, so it is exactly what a correct diagnosis reports. The same seed gives the same
database, byte for byte; nothing reads the clock.

    python -m bench.dbgen --seed 7 --out /tmp/gen7          # gen7/db.sqlite, suite.yaml, truth.json
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sqlite3
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from bench import dbgen_words as words

GENERATOR_VERSION = 1
EMAIL_REGEX = r"^[^@ ]+@[^@ ]+\.[a-z]{2,}$"
_EMAIL = re.compile(EMAIL_REGEX)
#: portable column type -> SQLite declared type (the declared type is what the catalogue reports)
_SQLITE_TYPES = {"int": "INTEGER", "text": "TEXT", "real": "REAL", "timestamp": "TIMESTAMP"}


@dataclass
class Table:
    name: str
    singular: str
    columns: dict[str, str]                 # name -> int | text | real | timestamp, in order
    rows: list[dict[str, Any]]
    timestamp_column: str | None
    segment_columns: list[str]
    parent: str | None = None               # the table a child's foreign key references
    foreign_key: str | None = None          # the child's column that references ``parent``.id

    def tuples(self) -> list[tuple[Any, ...]]:
        return [tuple(r[c] for c in self.columns) for r in self.rows]


@dataclass
class Check:
    table: str
    type: str
    column: str | None
    options: dict[str, Any]
    role: str                               # cause | control | clean | passing
    plan: dict[str, Any] = field(default_factory=dict)   # what was planted (segment/window choices)

    @property
    def name(self) -> str:
        return ".".join(p for p in (self.table, self.column, self.type) if p)

    def yaml_entry(self) -> dict[str, Any]:
        if not self.options:
            return {self.type: self.column}
        body = {"column": self.column, **self.options} if self.column else dict(self.options)
        return {self.type: body}


@dataclass
class GeneratedDatabase:
    seed: int
    domain: str
    tables: list[Table]
    checks: list[Check]

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)

    def write_sqlite(self, path: str | Path) -> Path:
        """Write the database to a new SQLite file (an existing file is replaced)."""
        path = Path(path)
        path.unlink(missing_ok=True)
        conn = sqlite3.connect(path)
        try:
            for t in self.tables:
                cols = ", ".join(f'"{c}" {_SQLITE_TYPES[k]}' for c, k in t.columns.items())
                conn.execute(f'CREATE TABLE "{t.name}" ({cols})')
                marks = ", ".join("?" for _ in t.columns)
                conn.executemany(f'INSERT INTO "{t.name}" VALUES ({marks})',
                                 [tuple(_sqlite_value(v) for v in row) for row in t.tuples()])
            conn.commit()
        finally:
            conn.close()
        return path

    def load(self, url: str) -> None:
        """Create the tables in the (empty) database at a SQLAlchemy ``url`` and insert the same rows."""
        import sqlalchemy as sa

        parsed = sa.engine.make_url(url)
        if parsed.get_backend_name() == "sqlite" and parsed.database:
            self.write_sqlite(parsed.database)      # the same bytes as write_sqlite, TIMESTAMP columns declared
            return

        types = {"int": sa.Integer, "text": sa.Text, "real": sa.Float, "timestamp": sa.DateTime}
        engine = sa.create_engine(url)
        try:
            meta = sa.MetaData()
            made = [(t, sa.Table(t.name, meta, *[sa.Column(c, types[k]) for c, k in t.columns.items()]))
                    for t in self.tables]
            meta.create_all(engine)
            with engine.begin() as conn:
                for t, table in made:
                    if t.rows:
                        conn.execute(table.insert(), t.rows)
        finally:
            engine.dispose()

    def suite(self, *, declare: bool = False) -> dict[str, Any]:
        """The suite as data; ``declare`` writes the table-options form naming segments and timestamp column."""
        tables: dict[str, Any] = {}
        for t in self.tables:
            entries = [c.yaml_entry() for c in self.checks if c.table == t.name]
            if not declare:
                tables[t.name] = entries
                continue
            options: dict[str, Any] = {"segments": list(t.segment_columns)}
            if t.timestamp_column:
                options["timestamp_column"] = t.timestamp_column
            tables[t.name] = {**options, "checks": entries}
        return {"tables": tables}

    def suite_yaml(self, *, declare: bool = False) -> str:
        head = f"# generated by bench/dbgen.py, seed {self.seed} ({self.domain})\n"
        return head + yaml.safe_dump(self.suite(declare=declare), sort_keys=False, allow_unicode=True)

    def write(self, folder: str | Path, *, declare: bool = False) -> dict[str, Path]:
        """db.sqlite, suite.yaml and truth.json in ``folder`` (created)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        out = {"db": self.write_sqlite(folder / "db.sqlite"), "suite": folder / "suite.yaml",
               "truth": folder / "truth.json"}
        out["suite"].write_text(self.suite_yaml(declare=declare), encoding="utf-8")
        out["truth"].write_text(json.dumps(self.truth(), indent=2) + "\n", encoding="utf-8")
        return out

    def truth(self) -> dict[str, Any]:
        """The ground truth, JSON-able: tables, and per check its failing rows and planted cause."""
        return {
            "generator_version": GENERATOR_VERSION, "seed": self.seed, "domain": self.domain,
            "tables": {t.name: {"rows": len(t.rows), "columns": dict(t.columns), "parent": t.parent,
                                "timestamp_column": t.timestamp_column, "segment_columns": t.segment_columns}
                       for t in self.tables},
            "checks": [_check_truth(self, c) for c in self.checks],
        }

    def failing_rows(self, check: Check) -> list[dict[str, Any]]:
        """The rows ``check`` fails on, evaluated on the final data."""
        t = self.table(check.table)
        bad = _predicate(self, check)
        return [r for r in t.rows if bad(r)]


def generate(seed: int, *, rows: tuple[int, int] = (300, 1500), children: tuple[int, int] = (1, 2),
             defect_rate: tuple[float, float] = (0.01, 0.06)) -> GeneratedDatabase:
    """A random database from ``seed``: a parent table of ``rows`` (low, high) rows and its child tables."""
    rng = random.Random(seed)
    domain = rng.choice(sorted(words.DOMAINS))
    parents, kids = words.DOMAINS[domain]
    parent_noun = rng.choice(parents)
    child_nouns = rng.sample(kids, min(len(kids), rng.randint(*children)))
    parent = _make_table(rng, parent_noun, rng.randint(*rows), None)
    tables = [parent]
    for noun in child_nouns:
        tables.append(_make_table(rng, noun, rng.randint(rows[0], rows[1] * 2), parent))
    gen = GeneratedDatabase(seed, domain, tables, [])
    for t in tables:
        gen.checks.extend(_make_checks(rng, t))
    _assign_roles(rng, gen.checks, tables)
    taken: dict[tuple[str, str], set[int]] = {}
    for check in gen.checks:
        _plant(rng, gen, check, defect_rate, taken)
    return gen


# -- tables --------------------------------------------------------------------------------------------

def _make_table(rng: random.Random, noun: tuple[str, str], n: int, parent: Table | None) -> Table:
    singular, name = noun
    columns: dict[str, str] = {"id": "int"}
    ts = rng.choice(words.TIMESTAMPS) if rng.random() < 0.85 else None
    if ts:
        columns[ts] = "timestamp"
    segs = rng.sample(sorted(words.SEGMENTS), rng.randint(1, 2))
    for s in segs:
        columns[s] = "text"
    fk = f"{parent.singular}_id" if parent else None
    if fk:
        columns[fk] = "int"
    email = rng.choice(words.EMAILS) if rng.random() < 0.7 else None
    code = rng.choice(sorted(words.CODES))
    measure = rng.choice(sorted(words.MEASURES))
    text = rng.choice(words.TEXTS)
    for c, kind in ((email, "text"), (code, "text"), (measure, "real"), (text, "text")):
        if c:
            columns[c] = kind
    start = datetime(2023, 1, 1) + timedelta(days=rng.randint(0, 900))
    span = timedelta(days=rng.randint(60, 720)).total_seconds()
    stamps = sorted(start + timedelta(seconds=int(rng.random() * span)) for _ in range(n))
    weights = {s: _weights(rng, len(words.SEGMENTS[s])) for s in segs}
    null_share = {s: rng.choice([0.0, 0.0, 0.01, 0.03]) for s in segs}
    lo, hi = words.MEASURES[measure]
    parent_ids = [r["id"] for r in parent.rows] if parent else []
    rows = []
    for i in range(n):
        row: dict[str, Any] = {"id": i + 1}
        if ts:
            row[ts] = stamps[i]
        for s in segs:
            row[s] = None if rng.random() < null_share[s] else rng.choices(words.SEGMENTS[s], weights[s])[0]
        if fk:
            row[fk] = rng.choice(parent_ids)
        if email:
            row[email] = f"{_word(rng)}{i + 1}@{rng.choice(words.MAIL_DOMAINS)}"
        row[code] = rng.choice(words.CODES[code])
        row[measure] = round(lo + rng.random() * (hi - lo), 2)
        row[text] = _word(rng).capitalize() + " " + _word(rng).capitalize()
        rows.append(row)
    return Table(name, singular, columns, rows, ts, segs, parent.name if parent else None, fk)


def _weights(rng: random.Random, k: int) -> list[float]:
    """Uneven category shares (some values common, some rare), none below about 3%."""
    w = [0.3 + rng.random() * 2 for _ in range(k)]
    return [x / sum(w) for x in w]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(words.SYLLABLES) for _ in range(rng.randint(2, 3)))


# -- checks --------------------------------------------------------------------------------------------

def _make_checks(rng: random.Random, t: Table) -> list[Check]:
    checks: list[Check] = []
    cols = t.columns
    for c in cols:
        if c in words.EMAILS:
            if rng.random() < 0.7:
                checks.append(Check(t.name, "not_null", c, {}, ""))
            checks.append(Check(t.name, "pattern", c, {"regex": EMAIL_REGEX}, ""))
        elif c in words.CODES:
            checks.append(Check(t.name, "accepted_values", c, {"values": list(words.CODES[c])}, ""))
        elif c in words.MEASURES:
            lo, hi = words.MEASURES[c]
            checks.append(Check(t.name, "range", c, {"min": lo, "max": hi}, ""))
        elif c in words.TEXTS:
            checks.append(Check(t.name, "not_null", c, {}, ""))
        elif c == t.foreign_key:
            checks.append(Check(t.name, "foreign_key", c, {"references": f"{t.parent}.id"}, ""))
    rng.shuffle(checks)
    checks = checks[: max(2, rng.randint(len(checks) - 1, len(checks)))]
    if rng.random() < 0.6:
        checks.append(Check(t.name, "unique", "id", {}, "passing"))
    checks.append(Check(t.name, "row_count", None, {"min": 1}, "passing"))
    return checks


def _assign_roles(rng: random.Random, checks: list[Check], tables: list[Table]) -> None:
    open_ = [c for c in checks if not c.role]
    for c in open_:
        c.role = rng.choices(["cause", "control", "clean"], [0.45, 0.35, 0.2])[0]
    for role in ("cause", "control"):   # every database has at least one of each
        if open_ and not any(c.role == role for c in open_):
            spare = [c for c in open_ if c.role == "clean"] or [c for c in open_ if sum(
                d.role == c.role for d in open_) > 1]
            if spare:
                rng.choice(spare).role = role
    by_name = {t.name: t for t in tables}
    for c in open_:
        if c.role != "cause":
            continue
        t = by_name[c.table]
        kinds = ["segment+window", "segment"] + (["window"] if t.timestamp_column else [])
        kind = rng.choices(kinds, [0.5, 0.3, 0.2][: len(kinds)])[0]
        if not t.timestamp_column and kind == "segment+window":
            kind = "segment"
        c.plan["kind"] = kind


# -- planting ------------------------------------------------------------------------------------------

def _plant(rng: random.Random, gen: GeneratedDatabase, check: Check, rate: tuple[float, float],
           taken: dict[tuple[str, str], set[int]]) -> None:
    """Make ``check`` fail on rows chosen by its role; rows already broken in the same column are avoided."""
    if check.role not in ("cause", "control") or not check.column:
        return
    t = gen.table(check.table)
    n = len(t.rows)
    k = max(3, round(n * rng.uniform(*rate)))
    used = taken.setdefault((t.name, check.column), set())
    free = [i for i in range(n) if i not in used]
    if check.role == "control":
        chosen = rng.sample(free, min(k, len(free)))
    else:
        chosen = _cause_rows(rng, gen, t, check, free, k)
    used.update(chosen)
    _break(rng, gen, t, check, sorted(chosen))


def _cause_rows(rng: random.Random, gen: GeneratedDatabase, t: Table, check: Check, free: list[int],
                k: int) -> list[int]:
    kind = check.plan["kind"]
    earlier = [c for c in gen.checks if c.table == t.name and c is not check and c.plan.get("kind") == kind
               and "done" in c.plan and "same_cause_as" not in c.plan]
    if earlier and rng.random() < 0.4:      # one root cause breaking two columns: same segment and window
        check.plan.update({k_: v for k_, v in earlier[0].plan.items() if k_ in ("segment", "window")})
        check.plan["same_cause_as"] = earlier[0].name
    pool = free
    if "window" in kind:
        ts = t.timestamp_column or ""
        if "window" not in check.plan:
            first, last = t.rows[0][ts], t.rows[-1][ts]
            span = (last - first).total_seconds()
            start = first + timedelta(seconds=int(span * rng.uniform(0.5, 0.9)))
            end = last if rng.random() < 0.75 else min(last, start + timedelta(
                seconds=int(span * rng.uniform(0.08, 0.25))))
            check.plan["window"] = {"column": ts, "start": start, "end": end}
        w = check.plan["window"]
        pool = [i for i in pool if w["start"] <= t.rows[i][ts] <= w["end"]]
    if "segment" in kind:
        if "segment" not in check.plan:
            column = rng.choice(t.segment_columns)
            counts: dict[str, int] = {}
            for i in pool:
                v = t.rows[i][column]
                if v is not None:
                    counts[v] = counts.get(v, 0) + 1
            fitting = [v for v in sorted(counts) if 0.04 * len(pool) <= counts[v] <= 0.4 * len(pool)]
            check.plan["segment"] = {"column": column,
                                     "value": rng.choice(fitting or sorted(counts, key=lambda v: counts[v]))}
        seg = check.plan["segment"]
        inside = [i for i in pool if t.rows[i][seg["column"]] == seg["value"]]
        outside = [i for i in pool if t.rows[i][seg["column"]] != seg["value"]]
        purity = rng.uniform(0.75, 1.0)
        k_in = max(min(3, len(inside)), min(round(purity * k), int(len(inside) * 0.6)))
        k_out = min(len(outside), round(k_in * (1 - purity) / purity))
        chosen = rng.sample(inside, k_in) + rng.sample(outside, k_out)
    else:
        chosen = rng.sample(pool, max(min(3, len(pool)), min(k, int(len(pool) * 0.6))))
    check.plan["done"] = True
    return chosen


def _break(rng: random.Random, gen: GeneratedDatabase, t: Table, check: Check, chosen: list[int]) -> None:
    col = check.column or ""
    kind = check.type
    if kind == "not_null":
        values: list[Any] = [None]
    elif kind == "pattern":
        values = rng.sample(words.BAD_EMAILS, rng.randint(1, 2)) if rng.random() < 0.5 else []
    elif kind == "accepted_values":
        valid = check.options["values"]
        variants = sorted({v.capitalize() for v in valid} | {v + " " for v in valid} | {v[:-1] for v in valid}
                          | {v.upper() for v in valid} | {"unknown", "tbd"})
        values = rng.sample(variants, rng.randint(1, 3))
    elif kind == "range":
        lo, hi = check.options["min"], check.options["max"]
        outside = [s for s in words.SENTINELS if not lo <= s <= hi]
        values = [rng.choice(outside)] if rng.random() < 0.5 else []
    elif kind == "foreign_key":
        top = len(gen.table(t.parent or "").rows)
        values = sorted(rng.sample(range(top + 1, top + 60), rng.randint(1, 4)))
    else:
        return
    weights = [1 / (j + 1) for j in range(len(values))]
    for i in chosen:
        row = t.rows[i]
        if values:
            row[col] = rng.choices(values, weights)[0]
        elif kind == "pattern":         # the row's own address, malformed
            row[col] = row[col].replace("@", rng.choice([".", " at ", "@@"]), 1)
        else:                           # range: a negative or far too large number
            lo, hi = check.options["min"], check.options["max"]
            row[col] = round(lo - 1 - rng.random() * 100, 2) if rng.random() < 0.5 else round(hi * 10 + rng.random(), 2)


# -- the truth -----------------------------------------------------------------------------------------

def _predicate(gen: GeneratedDatabase, check: Check) -> Any:
    col = check.column or ""
    o = check.options
    if check.type == "not_null":
        return lambda r: r[col] is None
    if check.type == "pattern":
        return lambda r: r[col] is not None and not _EMAIL.search(r[col])
    if check.type == "accepted_values":
        return lambda r: r[col] is not None and r[col] not in o["values"]
    if check.type == "range":
        return lambda r: r[col] is not None and not o["min"] <= r[col] <= o["max"]
    if check.type == "foreign_key":
        ids = {r["id"] for r in gen.table(o["references"].split(".")[0]).rows}
        return lambda r: r[col] is not None and r[col] not in ids
    return lambda r: False          # unique on the id, row_count: they pass


def _iso(v: datetime) -> str:
    return v.strftime("%Y-%m-%dT%H:%M:%S")


def _sqlite_value(v: Any) -> Any:
    return v.strftime("%Y-%m-%d %H:%M:%S") if isinstance(v, datetime) else v


def _check_truth(gen: GeneratedDatabase, c: Check) -> dict[str, Any]:
    t = gen.table(c.table)
    failing = gen.failing_rows(c)
    out: dict[str, Any] = {"name": c.name, "table": c.table, "column": c.column, "type": c.type,
                           "role": c.role, "kind": c.plan.get("kind"), "rows": len(t.rows),
                           "failing": len(failing), "status": "fail" if failing else "pass"}
    if not failing:
        return out
    seg = c.plan.get("segment")
    if seg:
        inside = [r for r in t.rows if r[seg["column"]] == seg["value"]]
        hit = sum(1 for r in failing if r[seg["column"]] == seg["value"])
        out["segment"] = {"column": seg["column"], "value": seg["value"], "failing": hit, "rows": len(inside),
                          "share_of_failing": round(hit / len(failing), 4),
                          "share_of_rows": round(len(inside) / len(t.rows), 4)}
    ts = t.timestamp_column
    if ts:
        stamps = [r[ts] for r in failing]
        out["onset"] = {"column": ts, "first": _iso(min(stamps)), "last": _iso(max(stamps)),
                        "table_first": _iso(t.rows[0][ts]), "table_last": _iso(t.rows[-1][ts])}
    w = c.plan.get("window")
    if w:
        out["window"] = {"column": w["column"], "start": _iso(w["start"]), "end": _iso(w["end"])}
    if c.type != "not_null":
        counts: dict[Any, int] = {}
        for r in failing:
            counts[r[c.column or ""]] = counts.get(r[c.column or ""], 0) + 1
        out["values"] = [{"value": v, "failing": n}
                         for v, n in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))[:10]]
    if c.plan.get("same_cause_as"):
        out["same_cause_as"] = c.plan["same_cause_as"]
    ids = {r["id"] for r in failing}
    overlap = []
    for other in gen.checks:
        if other is not c and other.table == c.table:
            shared = sum(1 for r in gen.failing_rows(other) if r["id"] in ids)
            if shared:
                overlap.append({"check": other.name, "rows": shared})
    if overlap:
        out["overlap"] = sorted(overlap, key=lambda o: (-o["rows"], o["check"]))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.dbgen", description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", type=Path, required=True, help="folder for db.sqlite, suite.yaml, truth.json")
    p.add_argument("--rows", default="300,1500", help="parent table rows: LOW,HIGH (children up to 2x HIGH)")
    p.add_argument("--declare", action="store_true",
                   help="write the table-options form of the suite (segments, timestamp_column)")
    p.add_argument("--load", metavar="URL", help="also load the rows into this (empty) SQLAlchemy database URL")
    a = p.parse_args(argv)
    lo, _, hi = a.rows.partition(",")
    gen = generate(a.seed, rows=(int(lo), int(hi or lo)))
    paths = gen.write(a.out, declare=a.declare)
    if a.load:
        gen.load(a.load)
    truth = gen.truth()
    print(f"seed {a.seed}: {gen.domain}, tables " + ", ".join(f"{t} ({v['rows']} rows)" for t, v in
                                                              truth["tables"].items()))
    for c in truth["checks"]:
        cause = c.get("segment") or {}
        where = f" {cause['column']}={cause['value']!r}" if cause else ""
        print(f"  {c['name']:<45} {c['role']:<8} {c['kind'] or '':<15} failing {c['failing']}{where}")
    print(" ".join(f"{k}={v}" for k, v in paths.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
