"""Correct diagnosis facts written in many natural ways pass verify; the same sentences with a wrong figure are
caught (hypothesis draws the database, the check and the wording)."""

from __future__ import annotations

from datetime import datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.dbgen import generate
from tests.generated import truth_findings
from watchdog.findings import FindingsDoc
from watchdog.verify import verify_fn

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


def _causes(seed: int) -> tuple[FindingsDoc, list[dict]]:
    truth = generate(seed).truth()
    doc = FindingsDoc.validate(truth_findings(truth))
    return doc, [c for c in truth["checks"] if c.get("segment") and c["status"] == "fail"]


def _report(doc: FindingsDoc, name: str, sentence: str) -> str:
    others = "\n".join(f"- `{f.name}`: {f.failing} of {f.total:,} rows fail." for f in doc.findings
                       if f.status == "fail" and f.name != name)
    f = next(f for f in doc.findings if f.name == name)
    return (f"# Report\n\n## {name}\n\n{f.failing} of {f.total:,} rows fail. {sentence}\n\n"
            f"## Other failing checks\n\n{others}\n")


def _phrasings(c: dict) -> list[str]:
    seg, k, total_failing = c["segment"], c["segment"]["failing"], c["failing"]
    col, val = seg["column"], seg["value"]
    p, r = 100 * seg["share_of_failing"], 100 * seg["share_of_rows"]
    out = [f"{k} of the {total_failing} ({p:.0f}%) come from {col} = '{val}'.",
           f"{k} of them come from `{val}`, which holds {r:.0f}% of all rows.",
           f"{p:.1f}% of the failing rows come from {val.replace('_', ' ')}.",
           f"About {round(p / 10) * 10:.0f}% of them come from {val}.",
           f"Of the {total_failing} failing rows, {k} come from {col} {val}."]
    if p > 50:
        out.append(f"Most of them come from {val}.")
    if p >= 80:
        out.append(f"Nearly all of them come from {col} = '{val}'.")
    onset = c.get("onset")
    if onset and c.get("window"):
        first = datetime.fromisoformat(onset["first"])
        out += [f"All of them since {first:%Y-%m-%d}.", f"They started on {MONTHS[first.month - 1]} {first.day}.",
                f"The first one is from {first.day} {MONTHS[first.month - 1]} {first.year}."]
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 400), pick=st.integers(0, 10_000), wording=st.integers(0, 100))
def test_correct_diagnosis_sentences_pass(seed: int, pick: int, wording: int) -> None:
    doc, causes = _causes(seed)
    if not causes:
        return
    c = causes[pick % len(causes)]
    phrasings = _phrasings(c)
    sentence = phrasings[wording % len(phrasings)]
    result = verify_fn(_report(doc, c["name"], sentence), doc)
    assert result.passed, (sentence, [b.message for b in result.bad])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 400), pick=st.integers(0, 10_000), delta=st.integers(2, 9))
def test_a_wrong_segment_count_is_caught(seed: int, pick: int, delta: int) -> None:
    doc, causes = _causes(seed)
    if not causes:
        return
    c = causes[pick % len(causes)]
    seg = c["segment"]
    wrong = seg["failing"] - delta if seg["failing"] > delta else seg["failing"] + delta
    if wrong in (c["failing"], seg["rows"]):
        return
    sentence = f"{wrong} of the {c['failing']} come from {seg['column']} = '{seg['value']}'."
    bad = verify_fn(_report(doc, c["name"], sentence), doc).bad
    assert [b.finding for b in bad] == [c["name"]], (sentence, [b.message for b in bad])
