"""Drafts as parts: ``llm.table: program`` reports assembled from the model's prose, and Markdown drafts cut
into heading sections, so that a fix round sends (and replaces) only the flagged parts.

In program mode the model answers a JSON object (summary, priorities, causes and fixes per problem check);
the findings table and every number-bearing line come from :func:`watchdog.report.render_markdown`, and
the prose is put around them. Pure functions, no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from watchdog.findings import FindingsDoc
from watchdog.report import render_markdown
from watchdog.report.escape import md_paragraph
from watchdog.verify.unwrap import has_heading, has_object
from watchdog.verify.unwrap import unwrap as core_unwrap


class CheckProse(BaseModel):
    name: str
    causes: list[str] = Field(default_factory=list)
    fixes: list[str] = Field(default_factory=list)


class Prose(BaseModel):
    """What the model writes in program mode. ``checks`` is answered as an object keyed by check name (what the
    schema asks for: every name required, each once); a list of entries with a ``name`` is read too."""

    summary: str = ""
    priorities: list[str] = Field(default_factory=list)
    checks: list[CheckProse] = Field(default_factory=list)

    @field_validator("checks", mode="before")
    @classmethod
    def _keyed(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return [{"name": k, **(v if isinstance(v, dict) else {})} for k, v in value.items()]
        return value

    @field_validator("priorities", mode="after")
    @classmethod
    def _once(cls, value: list[str]) -> list[str]:
        """A priority given twice word for word is one priority (a small model choosing among lines repeats one)."""
        return list(dict.fromkeys(value))

    def by_name(self) -> dict[str, CheckProse]:
        return {c.name.strip("` "): c for c in self.checks}


def prose_schema(names: list[str], keys: tuple[str, ...] = ("summary", "priorities", "checks"), *,
                 most: int = 2, choices: dict[str, tuple[list[str], list[str]]] | None = None,
                 lines: tuple[list[str], list[str]] | None = None) -> dict[str, Any]:
    """The JSON schema sent as ``response_format`` (a grammar on llama.cpp). ``checks`` is an object whose keys
    are exactly ``names``, all required: the answer can only name real checks, and must give each one once.
    With ``choices`` (``llm.causes: choose``), each check's causes and fixes are one of its candidates (an enum);
    with ``lines`` (summaries, priorities), the summary is one of the summaries and each priority one of the
    priorities."""
    def strings(fewest: int, top: int, enum: list[str] | None = None) -> dict[str, Any]:  # bounded: a small
        item: dict[str, Any] = {"type": "string", "enum": enum} if enum else \
            {"type": "string", "minLength": 12, "maxLength": 160}  # model otherwise repeats to the cap
        # one choice each: a small model asked for up to two choices gives the same one twice
        return {"type": "array", "items": item, "minItems": fewest, "maxItems": 1 if enum else top}

    def entry(name: str) -> dict[str, Any]:
        causes, fixes = (choices or {}).get(name, ([], []))
        return {"type": "object", "additionalProperties": False, "required": ["causes", "fixes"],
                "properties": {"causes": strings(1, most, causes or None), "fixes": strings(1, most, fixes or None)}}

    summaries, priorities = lines or ([], [])
    summary: dict[str, Any] = {"type": "string", "enum": summaries} if summaries else \
        {"type": "string", "minLength": 30, "maxLength": 300}
    ranked: dict[str, Any] = {"type": "array", "items": {"type": "string", "enum": priorities}, "minItems": 1,
                              "maxItems": min(3, len(priorities))} if priorities else strings(1, 3)
    props = {"summary": summary, "priorities": ranked,
             "checks": {"type": "object", "additionalProperties": False, "required": list(names),
                        "properties": {n: entry(n) for n in names}}}
    keys = tuple(k for k in keys if k != "checks" or names)  # none when every check passed
    schema = {"type": "object", "additionalProperties": False, "required": list(keys),
              "properties": {k: props[k] for k in keys}}
    return {"type": "json_schema", "json_schema": {"name": "report_prose", "strict": True, "schema": schema}}


# ---- unwrapping what small models wrap their answer in (verify's core, one rule for both)


def any_text(text: str) -> bool:
    """A plan must contain something."""
    return bool(text.strip())


def unwrap(text: str, contains: Callable[[str], bool] = has_heading) -> str:
    """The answer without reasoning blocks, an echoed tag or a code fence around all of it (returned unchanged
    when it has none of them), by the one core verify_fn uses (:mod:`watchdog.verify.unwrap`). A report whose
    wrapping fence was never closed keeps its opening fence line, so that verify still sees the cut."""
    out = core_unwrap(text or "", contains)
    if not out.removed:
        return text or ""
    body = out.text.strip()
    if out.unclosed_fence and contains is has_heading:
        body = out.fence_line + "\n" + body
    return body + "\n"


def parse_prose(text: str) -> tuple[Prose | None, str | None]:
    """The model's JSON answer, or None and what is wrong with it."""
    body = unwrap(text, has_object)
    start, end = body.find("{"), body.rfind("}")
    if start < 0:
        return None, "The answer is not the JSON object asked for (no {...} in it)."
    if end <= start or _open_depth(body[start:]) > 0:
        return None, "The JSON answer is incomplete: it ends before the object closes."
    try:
        data = json.loads(body[start:end + 1])
    except json.JSONDecodeError as exc:
        return None, f"The answer is not valid JSON ({exc.msg} at character {exc.pos})."
    try:
        return Prose.model_validate(data), None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return None, f"The JSON does not have the asked shape: {where}: {first.get('msg')}."


def _open_depth(text: str) -> int:
    """How many objects and arrays are still open at the end of ``text`` (strings skipped): > 0 for a cut answer."""
    depth, in_string, escaped = 0, False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
    return depth


def merge_prose(old: Prose, new: Prose, parts: list[str]) -> Prose:
    """``old`` with the flagged ``parts`` (summary, priorities, checks.<name>) taken from ``new``."""
    merged = old.model_copy(deep=True)
    if "summary" in parts and new.summary.strip():
        merged.summary = new.summary
    if "priorities" in parts and new.priorities:
        merged.priorities = new.priorities
    fresh = new.by_name()
    checks = merged.by_name()
    for part in parts:
        name = part.removeprefix("checks.")
        if part.startswith("checks.") and name in fresh:
            checks[name] = fresh[name]
    merged.checks = list(checks.values())
    return merged


def prose_parts(prose: Prose, parts: list[str]) -> Prose:
    """Only the flagged parts of ``prose`` (what a fix round sends)."""
    names = {p.removeprefix("checks.") for p in parts if p.startswith("checks.")}
    return Prose(summary=prose.summary if "summary" in parts else "",
                 priorities=prose.priorities if "priorities" in parts else [],
                 checks=[c for c in prose.checks if c.name.strip("` ") in names])


def part_texts(prose: Prose) -> dict[str, str]:
    """Each part's text, to find which part a wrong number came from."""
    out = {"summary": prose.summary, "priorities": "\n".join(prose.priorities)}
    for c in prose.checks:
        out[f"checks.{c.name.strip('` ')}"] = "\n".join([*c.causes, *c.fixes])
    return out


def _bullets(items: list[str]) -> str:
    return "\n".join(f"- {md_paragraph(i, 600)}" for i in items if i.strip())


def assemble(doc: FindingsDoc, prose: Prose) -> str:
    """The report: the program's header, table and per-check numbers, with the model's prose around them."""
    base = render_markdown(doc)
    lines = base.split("\n")
    table_at = next((i for i, line in enumerate(lines) if line.startswith("| Check |")), len(lines))
    intro = ["## Summary", "", md_paragraph(prose.summary, 2000), ""]
    if prose.priorities:
        intro += ["## Priorities", "", "\n".join(f"{n}. {md_paragraph(p, 600)}" for n, p in
                                                 enumerate([p for p in prose.priorities if p.strip()], 1)), ""]
    intro += ["## Findings", ""]
    text = "\n".join([*lines[:table_at], *intro, *lines[table_at:]])
    for name, entry in prose.by_name().items():
        block = ""
        if entry.causes:
            block += "\n**Likely causes**\n\n" + _bullets(entry.causes) + "\n"
        if entry.fixes:
            block += "\n**Suggested fixes**\n\n" + _bullets(entry.fixes) + "\n"
        if block:
            text = _insert_in_section(text, name, block)
    return text.rstrip() + "\n"


def _insert_in_section(text: str, name: str, block: str) -> str:
    heading = re.search(r"^### `" + re.escape(name) + r"` \([A-Z]+\)[ \t]*$", text, re.M)
    if heading is None:
        return text
    nxt = re.compile(r"^#{1,3} ", re.M).search(text, heading.end())
    at = nxt.start() if nxt else len(text)
    return text[:at].rstrip("\n") + "\n" + block + "\n" + text[at:]


# ---- Markdown drafts as heading sections (llm.table: model)

_SECTION = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+\S.*$", re.M)


def sections(draft: str) -> list[str]:
    """The draft cut before every heading (the text before the first heading is its own section)."""
    starts = [m.start() for m in _SECTION.finditer(draft)]
    if not starts or starts[0] != 0:
        starts = [0, *starts]
    return [draft[a:b] for a, b in zip(starts, [*starts[1:], len(draft)], strict=True) if draft[a:b].strip()]


def flagged_sections(parts: list[str], bad: list[dict[str, Any]]) -> list[int]:
    """Indices of the sections a verification's bad items point at (by the text they quote, else their name)."""
    hit: set[int] = set()
    for item in bad:
        says = str(item.get("says") or "").strip()
        name = str(item.get("finding") or "")
        found = [i for i, p in enumerate(parts) if says and says in p]
        if not found and name:
            found = [i for i, p in enumerate(parts) if name in p.split("\n", 1)[0]]
        if not found:
            return list(range(len(parts)))  # cannot place it: the whole draft
        hit.update(found)
    return sorted(hit)


def _heading_key(section: str) -> str:
    first = section.strip().split("\n", 1)[0]
    return re.sub(r"[`*_\s#]+", " ", first).strip().lower()


def splice(parts: list[str], flagged: list[int], answer: str) -> str:
    """The draft with the flagged sections replaced by the answer's sections (matched by heading). An answer
    that is a whole report (it opens with a level-1 heading) replaces everything."""
    answer = unwrap(answer, any_text)  # a part of a report: any text may stand in the fence
    if re.match(r"^#\s", answer) and (0 in flagged or len(flagged) == len(parts)):
        return answer
    new = sections(answer)
    by_key = {_heading_key(s): s for s in new}
    out = list(parts)
    if len(flagged) == 1 and len(new) == 1 and not _SECTION.match(answer.lstrip()):
        heading = parts[flagged[0]].split("\n", 1)[0]
        out[flagged[0]] = heading + "\n\n" + answer.strip() + _tail(parts[flagged[0]])
        return "".join(out)
    unmatched = [i for i in flagged if _heading_key(parts[i]) not in by_key]
    spare = [x for x in new if _heading_key(x) not in {_heading_key(parts[i]) for i in flagged}]
    for i in flagged:
        replacement = by_key.get(_heading_key(parts[i]))
        if replacement is None and len(unmatched) == len(spare):  # renamed headings: pair them in order
            replacement = spare[unmatched.index(i)]
            if re.match(r"^#\s", parts[i]) and not re.match(r"^#\s", replacement):  # keep the title
                replacement = parts[i].split("\n", 1)[0] + "\n\n" + replacement
        if replacement is not None:
            out[i] = replacement.rstrip() + _tail(parts[i])
    return "".join(out)


def _tail(section: str) -> str:
    """The blank lines a section ends with (kept when it is replaced)."""
    return section[len(section.rstrip()):] or "\n"
