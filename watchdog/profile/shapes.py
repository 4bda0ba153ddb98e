"""Common value shapes, each a regex that means the same on SQLite, PostgreSQL and MariaDB.

Only constructs all three engines read alike are used: anchors, bracket sets of literal
characters and ranges (no ``\\d`` / ``\\w`` / POSIX classes), groups, ``|``, ``?``, ``+``, ``{m,n}``.
Order matters: the first shape that fits a column is the one a suggestion uses (most specific first).
"""

from __future__ import annotations

SHAPES: dict[str, str] = {
    "uuid": "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$",
    "email": "^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+([.][A-Za-z0-9-]+)*[.][A-Za-z]{2,}$",
    "url": "^(https?|ftp)://[A-Za-z0-9.-]+(:[0-9]+)?(/[^ ]*)?$",
    "iso_date": "^[0-9]{4}-[0-9]{2}-[0-9]{2}"
                "([ T][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?$",
    "zip": "^[0-9]{5}(-[0-9]{4})?$",
    "phone": "^[+]?[0-9]?[ .-]?[(]?[0-9]{3}[)]?[ ./-]?[0-9]{3}[ .-]?[0-9]{4}$",
    "us_date": "^(0?[1-9]|1[0-2])/(0?[1-9]|[12][0-9]|3[01])/([0-9]{2}|[0-9]{4})$",
    "dotted_date": "^(0?[1-9]|[12][0-9]|3[01])[.](0?[1-9]|1[0-2])[.][0-9]{4}$",
    "numeric": "^[+-]?[0-9]+([.][0-9]+)?$",
}

DESCRIPTIONS: dict[str, str] = {
    "uuid": "a UUID",
    "email": "an email address (name@domain.tld)",
    "url": "an http(s)/ftp URL",
    "iso_date": "an ISO 8601 date or timestamp",
    "zip": "a US ZIP code (5 or 5+4 digits)",
    "phone": "a phone number (10 digits, optional +1, separators: space . - /)",
    "us_date": "a month/day/year date (m/d/yy or m/d/yyyy)",
    "dotted_date": "a day.month.year date (d.m.yyyy)",
    "numeric": "a decimal number written as text",
}


#: A cheap necessary condition per shape, written with LIKE and first-character tests only (native on every
#: database, no regex): a value the condition rejects can never match the shape's regex. The profile counts
#: these first, in its batched aggregate pass, and runs a shape's regex only on columns where its condition
#: holds for at least one value, so the share it reports stays an exact count on the whole table.
#: Each entry: LIKE patterns (any may match; none: no LIKE), and the characters the value may start with (None: any).
GATES: dict[str, tuple[tuple[str, ...], str | None]] = {
    "uuid": (("________-____-____-____-____________",), None),
    "email": (("%_@_%._%",), None),
    "url": (("http://_%", "https://_%", "ftp://_%"), None),
    "iso_date": (("____-__-__%",), None),
    "zip": (("_____", "_____-____"), None),
    "phone": (("__________%",), "+(0123456789 .-"),
    "us_date": (("%_/%_/__%",), "0123456789"),
    "dotted_date": (("%_.%_.____",), "0123456789"),
    "numeric": (("_%",), "+-0123456789"),
}

#: The first pass counts one coarse gate per group (fewer tests per row than one per shape); the second counts a
#: shape, behind its own gate, only on columns where its group's gate let a value through.
COARSE: dict[str, tuple[tuple[str, ...], str | None]] = {
    "digit": ((), "+-( .0123456789"),  # every iso_date, zip, phone, date and numeric value starts with one of these
    "uuid": GATES["uuid"],
    "email": GATES["email"],
    "url": GATES["url"],
}
GROUP_OF: dict[str, str] = {"uuid": "uuid", "email": "email", "url": "url", "iso_date": "digit", "zip": "digit",
                            "phone": "digit", "us_date": "digit", "dotted_date": "digit",
                            "numeric": "digit"}
