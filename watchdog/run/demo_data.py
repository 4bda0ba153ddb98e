"""Deterministic demo CRM database with planted data-quality defects.

`build_demo_database` writes a small SQLite CRM (companies, contacts, deals,
activities) whose defects are known exactly, so the check suite in
``checks/demo_crm.yaml`` produces predictable findings.  The returned dict maps
each check name to the value that check observes, counted over the rows that
were actually inserted:

* row-level checks (not_null, unique, pattern, accepted_values, range,
  foreign_key, custom_sql): the number of failing rows;
* freshness checks: the age in seconds of the newest value relative to ``now``;
* row_count checks: the table's row count.

Timestamps are UTC text ``YYYY-MM-DD HH:MM:SS`` placed relative to ``now``, so
freshness behaves the same whenever the demo is built.
"""

from __future__ import annotations

import random
import re
import sqlite3
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from itertools import product
from pathlib import Path

EMAIL_REGEX = r"^[^@ ]+@[^@ ]+\.[a-z]{2,}$"
CONTACT_STATUSES = ["lead", "customer", "churned"]
DEAL_STAGES = ["open", "qualified", "proposal", "won", "lost"]
AGE_MIN, AGE_MAX = 0, 120

_FIRST_NAMES = [
    "Ada", "Alan", "Alice", "Amir", "Ana", "Ben", "Bianca", "Carla", "Chen", "Chloe", "Dan", "Diego", "Elena",
    "Emil", "Eva", "Farah", "Felix", "Grace", "Hana", "Hugo", "Ines", "Ivan", "Jana", "Jonas", "Kai", "Kenji",
    "Lara", "Leo", "Lina", "Luca", "Maya", "Mia", "Nadia", "Nils", "Noah", "Olga", "Omar", "Pia", "Raj", "Rosa",
    "Sami", "Sara", "Tara", "Theo", "Uma", "Vera", "Wei", "Yara", "Zoe", "Zora"
]
_LAST_NAMES = [
    "Abbott", "Berg", "Costa", "Dahl", "Ekstrom", "Fischer", "Garcia", "Haas", "Ito", "Jensen", "Kowalski", "Lang",
    "Meyer", "Novak", "Okafor", "Patel", "Quinn", "Rossi", "Silva", "Tanaka", "Udeh", "Varga", "Weber", "Xu",
    "Yilmaz", "Zimmer", "Moreau", "Nguyen", "Oliveira", "Petrov", "Schmidt", "Santos", "Kim", "Larsen", "Dubois",
    "Horvat", "Lindqvist", "Brennan", "Ferrari", "Keller", "Mendes", "Nakamura", "Popescu", "Romero", "Sato",
    "Torres", "Vogel", "Wagner", "Young", "Zhang"
]
_COMPANY_WORDS = [
    "Acme", "Apex", "Blue", "Bright", "Cedar", "Cobalt", "Delta", "Ember", "Falcon", "Granite", "Harbor", "Iron",
    "Juniper", "Kestrel", "Lumen", "Maple", "Nimbus", "Orbit", "Pine", "Quartz", "Redwood", "Summit", "Tidal",
    "Vertex", "Willow", "Zenith"
]
_COMPANY_SUFFIXES = [
    "Labs", "Systems", "Logistics", "Foods", "Analytics", "Health", "Energy", "Works", "Capital", "Robotics"
]
_TLDS = ["com", "io", "co", "net", "de"]
_INDUSTRIES = ["software", "retail", "logistics", "finance", "healthcare", "energy", "manufacturing"]
_COUNTRIES = ["US", "DE", "GB", "FR", "NL", "SE", "JP", "BR", "IN", "CA"]
_ACTIVITY_KINDS = ["call", "email", "meeting", "note"]
_NOTES = ["Left voicemail", "Sent pricing", "Demo booked", "Follow up next week", "Asked for references"]

# Planted defects (inputs to the generator; the returned counts are recounted from the rows).
_NULL_EMAILS = 37
_DUPLICATE_EMAIL_GROUP_SIZES = [2, 2, 3, 2, 3, 2, 2, 3]
_DUPLICATE_NAME_GROUP_SIZES = [2, 2, 3, 2, 2, 3]
_BOTH_NAMES_NULL = 4
_BAD_EMAILS = ["bob at example.com", "x@y", "ANN@EXAMPLE.COM", "carol@@example.com",
               "dave@example.c", "eve smith@example.com", "frank@example", "@example.com"]
_GOOD_MIXED_CASE_EMAIL = "Ann.Lee@Example.org"  # valid: only the TLD must be lowercase
_BAD_STATUSES = ["Customer", "Customer", "Customer", "prospect", "prospect", "LEAD", "churned "]
_NULL_STATUSES = 25
_BAD_AGES = [-1, 150, 999, 121, -5]
_BOUNDARY_AGES = [0, 120]
_NULL_AGES = 30
_ORPHAN_COMPANY_IDS = list(range(9001, 9012))
_NULL_COMPANY_IDS = 15
_ORPHAN_DEAL_CONTACT_IDS = [50001, 50002, 50003]
_WON_WITHOUT_AMOUNT = 6
_NEGATIVE_AMOUNTS = [-1500.0, -250.0]

SCHEMA = """
CREATE TABLE companies (id INTEGER PRIMARY KEY, name TEXT NOT NULL, domain TEXT, industry TEXT,
                        country TEXT, employees INTEGER, created_at TEXT);
CREATE TABLE contacts (id INTEGER PRIMARY KEY, company_id INTEGER, first_name TEXT, last_name TEXT,
                       email TEXT, status TEXT, age INTEGER, updated_at TEXT);
CREATE TABLE deals (id INTEGER PRIMARY KEY, company_id INTEGER, contact_id INTEGER, stage TEXT,
                    amount REAL, currency TEXT, closed_at TEXT);
CREATE TABLE activities (id INTEGER PRIMARY KEY, contact_id INTEGER, kind TEXT, occurred_at TEXT,
                         notes TEXT);
"""


def _fmt(ts: datetime) -> str:
    return ts.strftime("%Y-%m-%d %H:%M:%S")


def _ago(rng: random.Random, now: datetime, low: timedelta, high: timedelta) -> datetime:
    seconds = rng.randint(int(low.total_seconds()), int(high.total_seconds()))
    return now - timedelta(seconds=seconds)


def _build_companies(rng: random.Random, now: datetime, count: int = 200) -> list[dict]:
    names = rng.sample(sorted(product(_COMPANY_WORDS, _COMPANY_SUFFIXES)), count)
    return [
        {"id": i, "name": f"{word} {suffix}", "domain": f"{word}{suffix}.{rng.choice(_TLDS)}".lower(),
         "industry": rng.choice(_INDUSTRIES), "country": rng.choice(_COUNTRIES),
         "employees": rng.randint(5, 20000),
         "created_at": _fmt(_ago(rng, now, timedelta(days=30), timedelta(days=3000)))}
        for i, (word, suffix) in enumerate(names, start=1)
    ]


def _build_contacts(rng: random.Random, now: datetime, companies: list[dict], count: int = 2000) -> list[dict]:
    domains = {c["id"]: c["domain"] for c in companies}
    pairs = rng.sample(sorted(product(_FIRST_NAMES, _LAST_NAMES)), count)
    contacts = []
    for i, (first, last) in enumerate(pairs, start=1):
        company_id = rng.randint(1, len(companies))
        contacts.append({
            "id": i, "company_id": company_id, "first_name": first, "last_name": last,
            "email": f"{first}.{last}@{domains[company_id]}".lower(),
            "status": rng.choices(CONTACT_STATUSES, weights=[5, 4, 1])[0],
            "age": rng.randint(18, 80),
            "updated_at": _fmt(_ago(rng, now, timedelta(hours=3), timedelta(days=25))),
        })
    contacts[rng.randrange(count)]["updated_at"] = _fmt(now - timedelta(hours=2))

    # Each defect family gets its own disjoint set of rows, so the defects don't mask each other
    # (the order of the draws is part of the demo's contract: the same seed plants the same rows).
    def pick(n: int, pool: list[int]) -> list[int]:
        chosen = rng.sample(pool, n)
        for idx in chosen:
            pool.remove(idx)
        return chosen

    _plant_email_defects(contacts, pick, count)
    _plant_name_defects(contacts, pick, count)
    _plant_value_defects(contacts, pick, count)
    return contacts


Pick = Callable[[int, list[int]], list[int]]


def _plant_email_defects(contacts: list[dict], pick: Pick, count: int) -> None:
    email_pool = list(range(count))
    for idx in pick(_NULL_EMAILS, email_pool):
        contacts[idx]["email"] = None
    for size in _DUPLICATE_EMAIL_GROUP_SIZES:
        source, *copies = pick(size, email_pool)
        for idx in copies:
            contacts[idx]["email"] = contacts[source]["email"]
    for idx, bad in zip(pick(len(_BAD_EMAILS), email_pool), _BAD_EMAILS, strict=True):
        contacts[idx]["email"] = bad
    contacts[pick(1, email_pool)[0]]["email"] = _GOOD_MIXED_CASE_EMAIL


def _plant_name_defects(contacts: list[dict], pick: Pick, count: int) -> None:
    name_pool = list(range(count))
    for size in _DUPLICATE_NAME_GROUP_SIZES:
        source, *copies = pick(size, name_pool)
        for idx in copies:
            contacts[idx]["first_name"] = contacts[source]["first_name"]
            contacts[idx]["last_name"] = contacts[source]["last_name"]
    for idx in pick(_BOTH_NAMES_NULL, name_pool):
        contacts[idx]["first_name"] = contacts[idx]["last_name"] = None


def _plant_value_defects(contacts: list[dict], pick: Pick, count: int) -> None:
    status_pool = list(range(count))
    for idx in pick(_NULL_STATUSES, status_pool):
        contacts[idx]["status"] = None
    for idx, bad in zip(pick(len(_BAD_STATUSES), status_pool), _BAD_STATUSES, strict=True):
        contacts[idx]["status"] = bad
    age_pool = list(range(count))
    for idx in pick(_NULL_AGES, age_pool):
        contacts[idx]["age"] = None
    ages = _BAD_AGES + _BOUNDARY_AGES
    for idx, age in zip(pick(len(ages), age_pool), ages, strict=True):
        contacts[idx]["age"] = age
    company_pool = list(range(count))
    for idx in pick(_NULL_COMPANY_IDS, company_pool):
        contacts[idx]["company_id"] = None
    for idx, orphan in zip(pick(len(_ORPHAN_COMPANY_IDS), company_pool), _ORPHAN_COMPANY_IDS, strict=True):
        contacts[idx]["company_id"] = orphan


def _build_deals(rng: random.Random, now: datetime, companies: list[dict], contacts: list[dict],
                 count: int = 800) -> list[dict]:
    company_ids = {c["id"] for c in companies}
    deals = []
    for i in range(1, count + 1):
        contact = rng.choice(contacts)
        company_id = contact["company_id"]
        if company_id not in company_ids:
            company_id = rng.randint(1, len(companies))
        stage = rng.choices(DEAL_STAGES, weights=[3, 2, 2, 3, 2])[0]
        amount: float | None = round(rng.uniform(500, 250_000), 2)
        if stage in ("open", "qualified") and rng.random() < 0.1:
            amount = None
        closed_at = None
        if stage in ("won", "lost"):
            closed_at = _fmt(_ago(rng, now, timedelta(days=46), timedelta(days=400)))
        deals.append({"id": i, "company_id": company_id, "contact_id": contact["id"], "stage": stage,
                      "amount": amount, "currency": rng.choice(["USD", "EUR", "GBP"]),
                      "closed_at": closed_at})

    won = [d for d in deals if d["stage"] == "won"]
    newest_won, *rest_won = rng.sample(won, 1 + _WON_WITHOUT_AMOUNT)
    newest_won["closed_at"] = _fmt(now - timedelta(days=45, hours=2))
    for deal in rest_won:
        deal["amount"] = None
    for deal, amount in zip(rng.sample([d for d in deals if d["stage"] == "lost"], len(_NEGATIVE_AMOUNTS)),
                            _NEGATIVE_AMOUNTS, strict=True):
        deal["amount"] = amount
    for deal, orphan in zip(rng.sample(deals, len(_ORPHAN_DEAL_CONTACT_IDS)), _ORPHAN_DEAL_CONTACT_IDS, strict=True):
        deal["contact_id"] = orphan
    return deals


def _build_activities(rng: random.Random, now: datetime, contacts: list[dict], count: int = 3000) -> list[dict]:
    activities = [
        {"id": i, "contact_id": rng.choice(contacts)["id"], "kind": rng.choice(_ACTIVITY_KINDS),
         "occurred_at": _fmt(_ago(rng, now, timedelta(hours=4), timedelta(days=90))),
         "notes": rng.choice(_NOTES) if rng.random() < 0.7 else None}
        for i in range(1, count + 1)
    ]
    rng.choice(activities)["occurred_at"] = _fmt(now - timedelta(hours=3))
    return activities


# -- counting over the generated rows ---------------------------------------------------------

def _duplicate_rows(keys: list) -> tuple[int, int, int]:
    """(rows in duplicated groups, distinct duplicated keys, rows beyond the first of each group)."""
    groups = [n for n in Counter(k for k in keys if k is not None).values() if n > 1]
    return sum(groups), len(groups), sum(groups) - len(groups)


def _age_seconds(now: datetime, values: list) -> int:
    newest = max(datetime.strptime(v, "%Y-%m-%d %H:%M:%S") for v in values if v is not None)
    return int((now.replace(tzinfo=None) - newest).total_seconds())


def _expected_findings(now: datetime, companies, contacts, deals, activities) -> dict:
    company_ids = {c["id"] for c in companies}
    contact_ids = {c["id"] for c in contacts}
    emails = [c["email"] for c in contacts]
    dup_rows, dup_values, dup_excess = _duplicate_rows(emails)
    names = [None if c["first_name"] is None and c["last_name"] is None else (c["first_name"], c["last_name"])
             for c in contacts]
    amounts = [d["amount"] for d in deals]
    return {
        "companies.name.not_null": sum(c["name"] is None for c in companies),
        "companies.domain.unique": _duplicate_rows([c["domain"] for c in companies])[0],
        "companies.row_count": len(companies),
        "contacts.email.not_null": sum(e is None for e in emails),
        "contacts.email.unique": dup_rows,
        "contacts.email.unique.duplicate_values": dup_values,
        "contacts.email.unique.excess_rows": dup_excess,
        "contacts.first_name+last_name.unique": _duplicate_rows(names)[0],
        "contacts.email.pattern": sum(e is not None and not re.search(EMAIL_REGEX, e) for e in emails),
        "contacts.status.accepted_values": sum(
            c["status"] is not None and c["status"] not in CONTACT_STATUSES for c in contacts),
        "contacts.age.range": sum(
            c["age"] is not None and not AGE_MIN <= c["age"] <= AGE_MAX for c in contacts),
        "contacts.company_id.foreign_key": sum(
            c["company_id"] is not None and c["company_id"] not in company_ids for c in contacts),
        "contacts.updated_at.freshness": _age_seconds(now, [c["updated_at"] for c in contacts]),
        "contacts.row_count": len(contacts),
        "deals.contact_id.foreign_key": sum(
            d["contact_id"] is not None and d["contact_id"] not in contact_ids for d in deals),
        "deals.company_id.foreign_key": sum(
            d["company_id"] is not None and d["company_id"] not in company_ids for d in deals),
        "deals.stage.accepted_values": sum(
            d["amount"] is not None and d["stage"] is not None and d["stage"] not in DEAL_STAGES for d in deals),
        "deals.amount.range": sum(a is not None and a < 0 for a in amounts),
        "deals.closed_at.freshness": _age_seconds(now, [d["closed_at"] for d in deals]),
        "activities.contact_id.foreign_key": sum(
            a["contact_id"] is not None and a["contact_id"] not in contact_ids for a in activities),
        "activities.occurred_at.freshness": _age_seconds(now, [a["occurred_at"] for a in activities]),
        "won_deals_without_amount": sum(d["stage"] == "won" and d["amount"] is None for d in deals),
    }


def build_demo_database(path: Path, seed: int = 20261129, now: datetime | None = None) -> dict:
    """(Re)create the demo CRM at `path` and return the expected finding of every demo check.

    `now` defaults to the current UTC time truncated to seconds; a naive `now` is taken as UTC.
    The result also holds ``"_rows": {table: row_count}``.
    """
    if now is None:
        now = datetime.now(UTC)
    if now.tzinfo is not None:
        now = now.astimezone(UTC)
    now = now.replace(microsecond=0, tzinfo=UTC)

    rng = random.Random(seed)
    companies = _build_companies(rng, now)
    contacts = _build_contacts(rng, now, companies)
    deals = _build_deals(rng, now, companies, contacts)
    activities = _build_activities(rng, now, contacts)
    tables = {"companies": companies, "contacts": contacts, "deals": deals, "activities": activities}

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.executescript(SCHEMA)
            for table, rows in tables.items():
                columns = list(rows[0])
                conn.executemany(
                    f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                    [tuple(row[c] for c in columns) for row in rows],
                )
    finally:
        conn.close()

    findings = _expected_findings(now, companies, contacts, deals, activities)
    findings["_rows"] = {table: len(rows) for table, rows in tables.items()}
    return findings
