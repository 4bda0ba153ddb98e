"""Find the numbers a piece of report prose states, and the ones it only seems to state.

:func:`extract_numbers` returns a :class:`Num` for every figure written in a text: integers with
thousands separators (``2,000``, ``2 000`` with a no-break/thin space), decimals, percentages
(``3.08%``, ``3 percent``), ``k``/``M`` suffixes (``1.2k``), durations (``45 days``, ``45d 2h``,
``3,895,200 s``), small number words (``three``, ``twenty-one``, ``a dozen``; ``no`` before a word
for failures, e.g. ``no nulls``), each with the approximation written before it (``about``, ``~``,
``≈``, ``roughly``, ``nearly``, ``almost`` → ``about``; ``over``, ``more than``, ``at least``, ``>`` →
``over``; ``under``, ``less than``, ``fewer than``, ``at most``, ``<`` → ``under``).

Text that is not a count is blanked first by :func:`mask_non_numbers` (replaced by ``MASK``
characters of the same length, so offsets are kept): dates (``2026-11-29``, ``11/29/2026``,
``Nov 29, 2026``), ISO timestamps, clock times (``06:00``), URLs and paths, identifiers that contain
digits (``user_id2``, ``T190232Z``, ``v1.2``, ``2nd``), dotted names (``books.isbn.not_null``), money
(``$1,200``), issue numbers (``#12``). :func:`extract_numbers` also skips numbers glued to letters,
version-like runs (``1.2.3``) and the ends of ranges (``2-3``); years (1900-2100 written without a
separator) are returned with ``year=True`` so callers can ignore them unless they match a fact.

Pure ``re``; a few hundred microseconds for a typical report section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

MASK = "\u2591"

_MONTHS = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
           r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_MASKS = re.compile(
    "|".join([
        # ISO dates and timestamps: 2026-11-29, 2026-11-29T19:02:32Z, 2026-11-29 06:50:33+00:00
        r"\b\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?",
        r"\b\d{4}/\d{1,2}/\d{1,2}\b",
        r"\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b",
        # clock times: 06:00, 6:00 pm, 19:02:32 UTC
        r"\b\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s?[ap]\.?m\b\.?)?(?:\s?(?:utc|gmt|z)\b)?",
        # Nov 29, 2026 / 29 November 2026 / November 29th
        rf"\b{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?:,?\s+\d{{4}}\b)?",
        rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}\b\.?(?:,?\s+\d{{4}}\b)?",
        rf"\b{_MONTHS}\s+\d{{4}}\b",
        r"\bq[1-4]\s+\d{4}\b",
        # URLs, e-mail addresses and paths
        r"\b(?:https?|ftp|file|sqlite|postgresql|postgres|mysql|jdbc)[:+][^\s)>\]]*",
        r"\bwww\.[^\s)>\]]+",
        r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
        r"(?:[\w.~-]*/){2,}[\w.~-]*",
        # money, issue numbers
        r"[$€£¥]\s?\d[\d,.]*(?:\s?(?:k|m|bn|million|billion|thousand)\b)?",
        r"#\d+\b",
        # dotted names with a letter (table.column.check, v1.2, file.v2.json) and words mixing letters
        # and digits (user_id2, T190232Z, 2nd, 3x); number+unit words like 30d, 2h, 1.2k are kept
        r"\b(?=[\w$+-]*[A-Za-z_])[\w$]+(?:[.+][\w$]+)+\b(?<!\.)",
        r"\b(?=\w*[A-Za-z_])(?=\w*\d)"
        r"(?!\d+(?:\.\d+)?(?:k|K|M|mn|ms|s|sec|secs|m|min|mins|h|hr|hrs|d|w|wk|wks|mo|y|yr|yrs)\b)\w+\b",
    ]),
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)
def mask_non_numbers(text: str) -> str:
    """``text`` with dates, times, URLs, paths, money and identifiers replaced by ``MASK`` (same length)."""
    if not _DIGIT.search(text):
        return text  # nothing to hide: every mask covers digits (number words are never masked)
    return _MASKS.sub(lambda m: MASK * len(m.group(0)), text)


_DIGIT = re.compile(r"\d")


_UNITS = {
    "ms": 0.001, "millisecond": 0.001, "milliseconds": 0.001,
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
    "w": 604800, "wk": 604800, "wks": 604800, "week": 604800, "weeks": 604800,
    "mo": 2629800, "month": 2629800, "months": 2629800,
    "y": 31557600, "yr": 31557600, "yrs": 31557600, "year": 31557600, "years": 31557600,
}
_MULTIPLIERS = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "bn": 1e9, "billion": 1e9}

_NUMERAL = r"(?:\d{1,3}(?:,\d{3})+|\d{1,3}(?:[\u00a0\u202f\u2009]\d{3})+|\d+)(?:\.\d+)?|\.\d+"
_APPROX = (r"(?:about|around|approximately|approx\.?|roughly|nearly|almost|some|circa|ca\.|close\s+to|"
           r"just\s+over|just\s+under|over|more\s+than|above|at\s+least|upwards\s+of|exceeding|under|"
           r"less\s+than|fewer\s+than|below|at\s+most|up\s+to|~|≈|∼|<=?|>=?|≤|≥)")
_TOKEN = re.compile(
    rf"(?P<approx>(?<![\w]){_APPROX}\s*)?"
    rf"(?P<num>{_NUMERAL})"
    r"(?:(?P<pct>\s?(?:%|percent\b|per\s?cent\b|pct\b))"
    r"|(?P<mult>\s?(?:k|thousand|(?-i:M)|mn|million|bn|billion)(?![A-Za-z0-9]))"
    r"|(?P<unit>\s?(?:ms|milliseconds?|secs?|seconds?|s|mins?|minutes?|m|hrs?|hours?|h|days?|d|wks?|weeks?|w|"
    r"months?|mo|yrs?|years?|y)(?![A-Za-z0-9])))?",
    re.IGNORECASE,
)
_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "dozen": 12,
    "hundred": 100,
}
_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_ONES = "one|two|three|four|five|six|seven|eight|nine"
_WORD_TOKEN = re.compile(
    rf"(?P<approx>(?<![\w]){_APPROX}\s*)?(?<![\w-])(?P<word>(?:{_TENS})(?:[- ](?:{_ONES}))?"
    r"|a\s+dozen|a\s+hundred|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)(?![\w-])",
    re.IGNORECASE,
)
#: "no nulls", "no duplicate values", "no orphaned rows": a claim of zero failures
_NO_TOKEN = re.compile(
    r"(?<![\w-])(?P<word>no)\s+(?=(?:(?:failing|null|duplicated?|orphan(?:ed)?|invalid|missing|malformed|bad|"
    r"out-of-range|unmatched|dangling|unexpected)\s+(?:rows?|values?|records?|entries|emails?)\b)"
    r"|(?:nulls|duplicates|orphans|violations|failures|failing\s+rows)\b"
    # "no rows with `isbn` column failed": zero, when the clause says they failed
    r"|(?:rows?|records?|entries)\b[^.;:!?]{0,40}?\b(?:failed|fail|failing|violat\w*)\b)",
    re.IGNORECASE,
)
_APPROX_CLASS = {
    "over": "over", "more than": "over", "above": "over", "at least": "over", "upwards of": "over",
    "exceeding": "over", "just over": "over", ">": "over", ">=": "over", "≥": "over",
    "under": "under", "less than": "under", "fewer than": "under", "below": "under", "at most": "under",
    "up to": "under", "just under": "under", "<": "under", "<=": "under", "≤": "under",
}


@dataclass(frozen=True)
class Num:
    """A number written in a text. ``start``/``end`` span the numeral and its unit (not the approximation)."""

    start: int
    end: int
    text: str
    value: float
    decimals: int = 0
    multiplier: float = 1.0
    percent: bool = False
    #: set for durations: the duration in seconds and the smallest unit written (45d 2h → 3600)
    seconds: float | None = None
    unit_seconds: float | None = None
    #: None, "about", "over" or "under"
    approx: str | None = None
    #: the approximation as written ("about", "~"), for messages
    approx_text: str = ""
    #: written as a word ("three", "no")
    word: bool = False
    #: 1900-2100 written as a bare four-digit integer: probably a year
    year: bool = False

    @property
    def is_duration(self) -> bool:
        return self.seconds is not None

    def precision(self) -> float:
        """Half a unit of the last digit written: 1.2k → 50, 3.1% → 0.05, 37 → 0."""
        if self.decimals or self.multiplier != 1 or self.percent:
            return 0.5 * 10 ** -self.decimals * self.multiplier
        return 0.0

    def implied_rounding(self) -> float:
        """Round integers of 1,000 and more may be rounded: 2,400 → ±50, capped at 5% of the value."""
        if self.word or self.decimals or self.multiplier != 1 or self.percent or self.value < 1000:
            return 0.0
        n = int(self.value)
        zeros = len(str(n)) - len(str(n).rstrip("0"))
        return min(0.5 * 10 ** zeros, 0.05 * self.value) if zeros >= 2 else 0.0

    def matches(self, actual: float, *, relative: float = 0.10) -> bool:
        """Whether this number, as written (precision, approximation), is consistent with ``actual``.

        ``actual`` is in the number's own unit: percent points for percentages, seconds for durations.
        Exact numbers must equal ``actual`` within the precision written; ``about`` allows
        ±max(10%, 1 for counts, precision); ``over``/``under`` allow a value on that side (or within
        the precision of the bound).
        """
        if self.is_duration:
            unit = self.unit_seconds or 1.0
            value, tol = self.seconds or 0.0, unit - max(unit * 1e-6, 1e-3)  # floor or ceiling, not one unit off
        else:
            value, tol = self.value, max(self.precision(), self.implied_rounding())
        eps = 1e-9 * max(1.0, abs(value))
        if self.approx == "over":
            return actual >= value * 0.98 - tol - eps
        if self.approx == "under":
            return actual <= value * 1.02 + tol + eps
        if self.approx == "about":
            floor = 0.0 if (self.percent or self.is_duration) else 1.0
            tol = max(tol, relative * abs(value), relative * abs(actual), floor)
        return abs(actual - value) <= tol + eps

    def describe(self) -> str:
        return f"{self.approx_text} {self.text}".strip() if self.approx_text else self.text


def _parse_numeral(raw: str) -> tuple[float, int]:
    clean = raw.replace(",", "").replace("\u00a0", "").replace("\u202f", "").replace("\u2009", "")
    decimals = len(clean.split(".", 1)[1]) if "." in clean else 0
    return float(clean), decimals


def _approx(raw: str | None) -> tuple[str | None, str]:
    if not raw:
        return None, ""
    text = " ".join(raw.split()).lower()
    return _APPROX_CLASS.get(text, "about"), text


def extract_numbers(text: str, *, masked: bool = False) -> list[Num]:
    """The numbers written in ``text`` (see the module docstring), in order.

    ``text`` is masked with :func:`mask_non_numbers` first unless ``masked`` says it already is.
    Durations written in parts (``45d 2h``, ``1 day and 2 hours``) come back as one :class:`Num`.
    """
    return list(_extract(text if masked else mask_non_numbers(text)))


@lru_cache(maxsize=4096)
def _extract(text: str) -> tuple[Num, ...]:
    found: list[Num] = []
    for m in _TOKEN.finditer(text):
        start, end = m.start("num"), m.end()
        before = text[start - 1] if start else " "
        after = text[end:end + 2]
        if before.isalnum() or before in "_.$#€£¥" + MASK:
            continue
        if before in "-–" and start >= 2 and text[start - 2].isdigit():
            continue  # the end of a range "2-3"
        if re.match(r"[A-Za-z_]", after) or re.match(r"\.\d", after) or re.match(r"[-–]\d", after):
            continue  # glued to a word, a version "1.2.3", the start of a range
        if m.group("unit") and m.group("unit").strip().lower() == "m" and re.match(
                r"\s+(?:rows?|records?|values?|entries|users|customers|contacts)\b", text[end:end + 12], re.I):
            # "1.2m rows": million, not minutes
            value, decimals = _parse_numeral(m.group("num"))
            approx, approx_text = _approx(m.group("approx"))
            found.append(Num(start, end, text[start:end], value * 1e6, decimals, 1e6, approx=approx,
                             approx_text=approx_text))
            continue
        value, decimals = _parse_numeral(m.group("num"))
        approx, approx_text = _approx(m.group("approx"))
        if m.group("pct"):
            found.append(Num(start, end, text[start:end], value, decimals, percent=True, approx=approx,
                             approx_text=approx_text))
        elif m.group("mult"):
            mult = _MULTIPLIERS[m.group("mult").strip().lower()]
            found.append(Num(start, end, text[start:end], value * mult, decimals, mult, approx=approx,
                             approx_text=approx_text))
        elif m.group("unit"):
            unit = _UNITS[m.group("unit").strip().lower()]
            found.append(Num(start, end, text[start:end], value, decimals, seconds=value * unit, unit_seconds=unit,
                             approx=approx, approx_text=approx_text))
        else:
            raw = m.group("num")
            year = bool(re.fullmatch(r"\d{4}", raw)) and 1900 <= value <= 2100
            found.append(Num(start, end, raw, value, decimals, approx=approx, approx_text=approx_text, year=year))
    found = _merge_durations(text, found)
    words = _number_words(text, found)
    if words:
        found = sorted(found + words, key=lambda n: n.start)
    return tuple(found)


def _merge_durations(text: str, nums: list[Num]) -> list[Num]:
    """``45d 2h``, ``2 hours 5 minutes``, ``1 day and 2 hours`` → one duration."""
    merged: list[Num] = []
    for n in nums:
        prev = merged[-1] if merged else None
        if (prev is not None and prev.is_duration and n.is_duration and not n.approx
                and (n.unit_seconds or 0) < (prev.unit_seconds or 0)
                and re.fullmatch(r"\s*(?:,|and|,\s*and)?\s*", text[prev.end:n.start])):
            merged[-1] = Num(prev.start, n.end, text[prev.start:n.end], prev.value, prev.decimals,
                             seconds=(prev.seconds or 0) + (n.seconds or 0), unit_seconds=n.unit_seconds,
                             approx=prev.approx, approx_text=prev.approx_text)
        else:
            merged.append(n)
    return merged


def _word_value(word: str) -> float:
    word = " ".join(word.lower().replace("-", " ").split())
    if word in ("a dozen", "a hundred"):
        return _WORDS[word.split()[1]]
    return float(sum(_WORDS[w] for w in word.split()))


def _number_words(text: str, numerals: list[Num]) -> list[Num]:
    taken = [(n.start, n.end) for n in numerals]
    out: list[Num] = []
    for regex in (_WORD_TOKEN, _NO_TOKEN):
        for m in regex.finditer(text):
            start, end = m.start("word"), m.end("word")
            if any(s < end and start < e for s, e in taken):
                continue
            word = m.group("word")
            value = 0.0 if word.lower() == "no" else _word_value(word)
            approx, approx_text = _approx(m.groupdict().get("approx"))
            out.append(Num(start, end, word, value, approx=approx, approx_text=approx_text, word=True))
    return out


def format_count(value: float | int | None) -> str:
    """``2000`` → ``2,000``; ``0.5`` → ``0.5``; None → ``–``."""
    if value is None:
        return "–"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    return f"{int(value):,}"


def parse_duration(text: str) -> float | None:
    """``30d`` / ``2h`` / ``90 minutes`` / ``1d 12h`` → seconds; None when it is not a duration."""
    nums = [n for n in extract_numbers(str(text)) if n.is_duration]
    if len(nums) == 1:
        return nums[0].seconds
    return None
