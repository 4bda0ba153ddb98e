"""Real regex engines to run the warehouse spellings of a pattern on (no warehouse server needed).

* java.util.regex (Java 17, on every machine): Databricks' RLIKE is ``Pattern.compile(p).matcher(s).find()``;
  Trino's default library (Joni) reads the same Java syntax.
* RE2 (the ``google-re2`` package): BigQuery's REGEXP_CONTAINS is RE2's partial match.
* glibc's POSIX ``regcomp(REG_EXTENDED)``: the ERE that Snowflake's REGEXP_LIKE reads, matched against the
  whole value as Snowflake does (run in a subprocess, which sets a UTF-8 locale for itself).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

JAVA_SOURCE = Path(__file__).parent / "fixtures" / "JavaRegexFind.java"

_POSIX = r"""
import ctypes, json, sys
libc = ctypes.CDLL("libc.so.6")
libc.setlocale.restype = ctypes.c_char_p
assert libc.setlocale(6, b"C.UTF-8"), "no C.UTF-8 locale"  # LC_ALL
job = json.load(sys.stdin)
out = []
for pattern in job["patterns"]:
    buf = ctypes.create_string_buffer(1024)  # regex_t is 64 bytes on x86-64
    if libc.regcomp(buf, pattern.encode(), 1 | 8) != 0:  # REG_EXTENDED | REG_NOSUB
        out.append("ERR")
        continue
    out.append([libc.regexec(buf, v.encode(), 0, None, 0) == 0 for v in job["values"]])
    libc.regfree(buf)
json.dump(out, sys.stdout)
"""


def java_find(patterns: list[str], values: list[str]) -> list[list[bool] | str]:
    """For each pattern, whether java.util.regex finds it in each value (or ``"ERR ..."``)."""
    first = " ".join(v.encode().hex() or "-" for v in values)
    job = first + "\n" + "\n".join(p.encode().hex() for p in patterns) + "\n"
    done = subprocess.run(["java", str(JAVA_SOURCE)], input=job, capture_output=True, text=True, timeout=120,
                          check=True)
    return [line if line.startswith("ERR") else [c == "1" for c in line] for line in done.stdout.splitlines()]


def posix_full_match(patterns: list[str], values: list[str]) -> list[list[bool] | str]:
    """For each ERE, whether glibc matches it against the WHOLE value (as ``^(p)$``: Snowflake's anchoring)."""
    job = json.dumps({"patterns": [f"^({p})$" for p in patterns], "values": values})
    done = subprocess.run([sys.executable, "-c", _POSIX], input=job, capture_output=True, text=True, timeout=60,
                          check=True)
    return json.loads(done.stdout)


def re2_search(pattern: str, values: list[str]) -> list[bool]:
    import re2  # google-re2

    compiled = re2.compile(pattern)
    return [compiled.search(v) is not None for v in values]
