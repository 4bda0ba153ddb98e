"""Program mode: what a draft's prose lacks, and what one fix round asks for.

The issues are facts about the answer ("`orders.email.not_null` has no likely causes."), never instructions,
so they can stand in a banner and in audit.json. A fix round turns them into an ask: the parts by name, what
each one lacks in plain words, and a JSON schema that requires exactly those parts (the check names as the
object's required keys, at least one cause and one fix each) — a small model cannot answer with an empty list
or with another check's entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from watchdog.graph.compose import Prose, prose_schema
from watchdog.verify.wording import copied_from, norm, restates_check, shared_lines

__all__ = ["Ask", "ask_for", "missing_prose"]


def _name_words(name: str) -> set[str]:
    return {w for part in name.lower().replace("_", ".").split(".") for w in (part, part.rstrip("s")) if w}


def _words(text: str) -> bool:
    """At least three words (not a run of digits or symbols)."""
    return len(re.findall(r"[^\W\d_]{2,}", text)) >= 3


def _sentence(text: str) -> bool:
    """At least three words besides names of tables, columns and checks: a cause that is only another check's
    name (``depots.email.pattern`` as the cause of ``depots.email.not_null``) says nothing of why."""
    return _words(re.sub(r"[\w+]+(?:\.[\w+]+)+", " ", text))


def missing_prose(prose: Prose, names: list[str], rules: dict[str, str] | None = None,
                  choices: dict[str, tuple[list[str], list[str]]] | None = None) -> list[tuple[str, str]]:
    """(part, issue) for an empty summary, and every problem check whose likely causes or suggested fixes are
    missing, only restate the check or its rule (``rules``: name -> the suite's description), or are the same
    lines as three or more other checks'. A line chosen among the check's own candidates (``choices``) is its own,
    even when the diagnosis gives other checks the same fact."""
    rules = rules or {}
    chosen = {n: {norm(x) for x in [*c, *f]} for n, (c, f) in (choices or {}).items()}
    out: list[tuple[str, str]] = []
    if not prose.summary.strip():
        out.append(("summary", "The summary is missing."))
    elif not _words(prose.summary):
        out.append(("summary", f"The summary is not a sentence ({prose.summary.strip()[:40]!r})."))
    if prose.priorities and not any(_words(p) for p in prose.priorities):
        out.append(("priorities", f"The priorities are not sentences ({prose.priorities[0].strip()[:40]!r})."))
    have = prose.by_name()
    copied = {kind: shared_lines([getattr(have[n], kind) for n in names if n in have]) for kind in ("causes", "fixes")}
    for name in names:
        entry = have.get(name)
        for kind, label in (("causes", "likely causes"), ("fixes", "suggested fixes")):
            lines = [x for x in (getattr(entry, kind) if entry is not None else []) if x.strip()]
            rule = rules.get(name) or ""
            own = [x for x in lines if norm(x) in chosen.get(name, ()) or (
                norm(x) not in copied[kind] and not restates_check(x, _name_words(name)) and _sentence(x)
                and not (kind == "causes" and rule and copied_from(x, rule, "") is not None))]
            if not lines:
                out.append((f"checks.{name}", f"`{name}` has no {label}."))
            elif not own and all(norm(x) in copied[kind] for x in lines):
                out.append((f"checks.{name}", f"`{name}` has no {label} of its own: the same line is given for "
                                              f"{copied[kind][norm(lines[0])]} checks."))
            elif not own and not any(_sentence(x) for x in lines):
                out.append((f"checks.{name}", f"The {label} of `{name}` are not sentences "
                                              f"({lines[0].strip()[:40]!r})."))
            elif not own and rule and any(copied_from(x, rule, "") for x in lines):
                out.append((f"checks.{name}", f"The {label} of `{name}` repeat the check's rule "
                                              f"({lines[0].strip()[:80]!r}), which is what is broken, not why."))
            elif not own:
                out.append((f"checks.{name}", f"The {label} of `{name}` only restate the check "
                                              f"({lines[0].strip()[:80]!r})."))
    return out + _not_problems(prose, names)


def _not_problems(prose: Prose, names: list[str]) -> list[tuple[str, str]]:
    extra = [n for n in prose.by_name() if n not in names]
    if not extra:
        return []
    listed = ", ".join(f"`{n}`" for n in extra[:5])
    return [("summary", f"The answer gives causes and fixes for {listed}, which is not among the checks that "
                        f"failed, warned or errored.")]


@dataclass
class Ask:
    """One fix round: the parts asked for, the lines that say what each lacks, the schema that requires them."""

    parts: list[str]
    lines: list[str]
    schema: dict[str, Any]


def _missing_only(said: list[str]) -> bool:
    return bool(said) and all(m.endswith((" has no likely causes.", " has no suggested fixes.", " is missing."))
                              for m in said)


def _compact(said: list[str], label: str) -> str:
    """What is wrong with one part, once: a copy is said as a copy (the lines it copied need not be listed again,
    nor that they are shared with other checks)."""
    copied = [m for m in said if "copies the example given in the instructions" in m]
    echoed = [m for m in said if "repeats the instructions given to the model" in m]
    rest = [m for m in said if m not in copied and m not in echoed and "the same line is given for" not in m]
    if not (copied or echoed):
        rest = [m for m in said if m not in copied and m not in echoed]
    out = []
    if copied:
        out.append(f"copies the example given in the instructions ({_quoted(copied[0])}); it says nothing about "
                   f"this data.")
    if echoed:  # not quoted: a small model shown the words it copied copies them again
        out.append("repeats the instructions; it says nothing about this data.")
    repeats = [m for m in rest if " is said " in m and " times in one place" in m]
    if repeats:
        rest = [m for m in rest if m not in repeats]
        out.append("says one sentence again and again.")
    return " ".join(dict.fromkeys([*out, *(_without(m, label) for m in rest)]))


def _quoted(message: str) -> str:
    start = message.find("'")
    end = message.find("'", start + 1) if start >= 0 else -1
    return message[start:end + 1] if 0 <= start < end else "…"


def _without(message: str, label: str) -> str:
    """The message without its own leading name ("`x` has no likely causes." under "`x`:" reads "has no ...")."""
    return message[len(label) + 1:] if message.startswith(label + " ") else message


def ask_for(parts: list[str], issues: list[tuple[str | None, str]], names: list[str],
            choices: dict[str, tuple[list[str], list[str]]] | None = None, problems: str = "",
            lines_to_choose: tuple[list[str], list[str]] | None = None) -> Ask:
    """The ask for ``parts`` (summary, priorities, checks.<name>), with the issues that point at each: a part that
    is only missing is named; a part that is wrong is named with what is wrong with it."""
    parts = [p for p in dict.fromkeys(parts) if p in ("summary", "priorities") or p.removeprefix("checks.") in names]
    if not parts:
        parts = ["summary", "priorities", *(f"checks.{n}" for n in names)]
    lines: list[str] = []
    for part in parts:
        said = [m for p, m in issues if p == part]
        label = f"`{part.removeprefix('checks.')}`" if part.startswith("checks.") else f'"{part}"'
        if not said or _missing_only(said):
            lines.append(f"{label}: {'causes and fixes missing' if part.startswith('checks.') else 'missing'}.")
        else:
            lines.append(f"{label}: " + _compact(said, label))
        if part in ("summary", "priorities") and lines_to_choose:
            lines[-1] += " Choose among those the answer format allows."
        elif part == "summary" and problems:  # what to write about, in place of the words it copied
            lines[-1] += f" Write two sentences of your own about these problems: {problems}."
    general = [m for p, m in issues if p is None]
    lines += [f"Also: {m}" for m in general[:3]]
    keys = tuple(k for k in ("summary", "priorities") if k in parts)
    wanted = [p.removeprefix("checks.") for p in parts if p.startswith("checks.")]
    schema = prose_schema(wanted, (*keys, "checks") if wanted else keys, choices=choices, lines=lines_to_choose)
    return Ask(parts, lines, schema)
