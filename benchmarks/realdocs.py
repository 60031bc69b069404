"""Real documents of six families, scored against their truth files, next to unstructured's raw
partition in the same run (issue 36).

    .venv/bin/python -m benchmarks.realdocs [--data ../shared/data] [--work benchmarks/out/realdocs]
        [--docs eu,uk,...] [--reuse] [--no-baseline]

Every `<file>.truth.json` in `<data>/realdocs/` is one document (its README describes the truth
and the scoring, followed here to the letter), and so are the two Word-numbered documents that
tests/support/word_policy.py makes into `<work>/own/` on every run (family docx). Each document
is built alone (`lexkb build FILE --out ROOT --embedder none`) and asked
`Index.get("<document key> <ref>")` for every truth unit and every absent reference:
- units right: answered `exact` with text that begins like the truth's (labels and headings
  stripped), or `contains` with the truth's text inside the returned paragraph;
- wrong-exact: answered `exact`/`contains` with text that does not match, plus absent references
  answered `exact`/`contains` (a confident wrong citation);
- absent honest: absent references answered `not_found` or `enclosing`;
- junk: share of paragraph-level chunks under 15 characters or only page furniture;
- title: lexkb's title against the document's own;
- names: the truth's short names that name the document (as a filter, and in a reference
  before the first unit's ref), edges whose source is a note (apparatus: none), and the
  published and effective days the document states.

The baseline is unstructured's own partition of the same file, taken naively: a truth unit counts
as found when an element (its leading labels stripped) begins with the unit's first 40
characters; junk is the share of its elements that are short or only page furniture. It measures
how much of the structure a raw partition puts at element starts, not a lookup.

`--docs` takes names (the family, or the file name) separated by commas; `--reuse` scores a root
built before instead of building again.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
from rapidfuzz import fuzz, process

from tests.support import word_policy

REPO = Path(__file__).resolve().parent.parent


SIMILAR = 90.0
PREFIX = 60  # characters of the truth text compared
BASELINE_PREFIX = 40
_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "‑": "-"})
# Labels a unit's text may start with: "Article 3", "§ 106A.", "12.", "(a)", "a)", "B3", "4.9".
_LABEL = re.compile(
    r"^(?:(?:article|section|§|clause|schedule|paragraph|recital|para\.?)\s*)?"
    r"(?:[a-c]?\d+[a-z]{0,2}(?:\.\d+[a-z]?)*\.?|\([a-z0-9]{1,6}\)|[a-z0-9]{1,4}\)|[a-z]\.)"
    r"(?:\s+|$)"
)
# Page furniture: dates, journal references, page numbers, chapter numbers of Acts, copyright.
_FURNITURE = re.compile(
    r"\d{1,2}\.\d{1,2}\.\d{4}|\bl\s?\d+/\d+\b|\ben\b|official journal of the european union"
    r"|\(c\.\s?\d+\)|page \d+( of \d+)?|©\s*ifrs foundation|[\d\W_]+"
)
FURNITURE_MIN = 15


def normalize(text: str | None) -> str:
    """Casefold, unify quotes and dashes, collapse whitespace (the README's text rule)."""
    text = unicodedata.normalize("NFKC", text or "").translate(_QUOTES).casefold()
    return " ".join(text.split())


def strip_labels(text: str) -> str:
    while (stripped := strip_label(text)) != text:
        text = stripped
    return text


def strip_label(text: str) -> str:
    """The text without its first label (one at a time: a heading may begin with words that
    look like a label, "Section 111 proceedings", "3.75 percent rate")."""
    match = _LABEL.match(text)
    return text[match.end() :] if match and match.group(0) else text


def is_junk(text: str | None, title_words: set[str]) -> bool:
    """Under 15 characters, or nothing left once page furniture and the title's words go."""
    text = normalize(text)
    if len(text) < FURNITURE_MIN:
        return True
    rest = " ".join(w for w in _FURNITURE.sub(" ", text).split() if w not in title_words)
    return len(rest) < FURNITURE_MIN


# truth ----------------------------------------------------------------------------------------
@dataclass
class Truth:
    path: Path
    name: str
    family: str
    title: str
    units: list[dict]
    absent: list[str]
    short_names: list[str] = field(default_factory=list)


def truths(data: Path, own: Sequence[Path] = ()) -> list[Truth]:
    """The data's truth files, then `own` (truth files of documents made here)."""
    found = []
    for path in (
        sorted((data / "realdocs").glob("*.truth.json"))
        + sorted((data / "realdocs" / "eu").glob("*.truth.json"))
        + list(own)
    ):
        truth = json.loads(path.read_text())
        source = path.with_name(truth["file"])
        found.append(
            Truth(
                source,
                re.sub(r"\W+", "_", source.stem).strip("_").lower(),
                truth["family"],
                truth["title"],
                truth["units"],
                truth["absent"],
                truth.get("short_names", []),
            )
        )
    return found


def headings_below(truth: Truth, ref: str) -> list[str]:
    """The unit's heading and those of its descendants (a heading clause shows its children's)."""
    # A footnote's call-out printed in a heading ("2 Ownership of ...") is not a word of it.
    below = [
        normalize(u["heading"])
        for u in truth.units
        if u.get("heading")
        and (u["ref"] == ref or u["ref"].startswith(ref + "(") or u["ref"].startswith(ref + "."))
    ]
    return list(dict.fromkeys(h for b in below for h in (b, re.sub(r"^\d+\s+(?=[a-z])", "", b))))


def begins_like(returned: str, expected: str, headings: list[str]) -> bool:
    """The README's `exact` rule: labels and headings stripped, the text begins like T, or is
    only the unit's label and heading."""
    lines = [line for line in (returned or "").splitlines() if line.strip()]
    starts = [normalize(returned)]
    # Heading lines of lexkb's own: a section's path, and a cross-heading under it ("Ministry
    # of Defence Police Act 1987 (c. 4)"): short lines that end no sentence.
    for cut in range(1, min(len(lines), 3)):
        if len(lines[cut - 1]) > 150 or (cut > 1 and lines[cut - 1].rstrip()[-1:] in ".;:,—"):
            break
        starts.append(normalize("\n".join(lines[cut:])))
    # Labels and headings in any order ("3. Giving ... a. FinCEN Requests ... Under ..."); what
    # is left may begin with words that look like a label ("Article 45 of ..."), so each step's
    # text is a candidate too.
    candidates, seen = [], set()
    while starts:
        text = starts.pop()
        if text in seen:
            continue
        seen.add(text)
        candidates.append(text)
        starts.append(strip_label(text))
        starts += [text[len(h) :].lstrip(" .:-") for h in headings if h and text.startswith(h)]
    for candidate in candidates:
        if not candidate.strip(" .:-"):
            return True
        if fuzz.partial_ratio(expected, candidate[: len(expected) + 15]) >= SIMILAR:
            return True
    return False


# lexkb ----------------------------------------------------------------------------------------
def build(source: Path, root: Path) -> float:
    if root.exists():
        shutil.rmtree(root)
    started = time.perf_counter()
    command = [str(REPO / ".venv/bin/lexkb"), "build", str(source), "--out", str(root)]
    subprocess.run(
        [*command, "--embedder", "none", "--json"], check=True, capture_output=True, text=True
    )
    return time.perf_counter() - started


def score_lexkb(truth: Truth, root: Path) -> dict:
    from lexkb import Index

    index = Index.open(root)
    documents = index.documents()
    document = documents[0]
    key, title = document["document_key"], document.get("title") or ""
    right = wrong = honest = 0
    wrong_examples: list[str] = []
    for unit in truth.units:
        found = index.get(f"{key} {unit['ref']}")
        if found.match not in ("exact", "contains"):
            continue
        expected = normalize(unit["text"])[:PREFIX]
        returned = found.hit.text if found.hit else ""
        if found.match == "exact":
            ok = begins_like(returned, expected, headings_below(truth, unit["ref"]))
        else:
            ok = fuzz.partial_ratio(expected, normalize(returned)) >= SIMILAR
        if ok:
            right += 1
        else:
            wrong += 1
            wrong_examples.append(f"{unit['ref']} -> {found.match} {found.hit.ref!r}")
    for ref in truth.absent:
        found = index.get(f"{key} {ref}")
        if found.match in ("exact", "contains"):
            wrong += 1
            wrong_examples.append(f"{ref} (absent) -> {found.match} {found.hit.ref!r}")
        else:
            honest += 1
    chunks = pl.read_parquet(index.snapshot.table_path("chunks"))
    paragraphs = chunks.filter(pl.col("chunk_level") == "paragraph")["content"].to_list()
    title_words = set(normalize(truth.title).split()) | set(normalize(title).split())
    junk = sum(is_junk(text, title_words) for text in paragraphs)
    notes = chunks.filter(pl.col("chunk_level") == "note")["chunk_id"]
    edges = pl.read_parquet(index.snapshot.table_path("edges"))
    # A reference written with the document's other name finds the unit ("DORA Article 1").
    first = truth.units[0]["ref"] if truth.units else ""
    cited_by_name = [
        n for n in truth.short_names if index.get(f"{n} {first}").match in ("exact", "contains")
    ]
    return {
        "names": [n for n in truth.short_names if knows_name(index, n)],
        "cited_by_name": cited_by_name,
        "note_edges": int(edges["source_chunk_id"].is_in(notes.implode()).sum()),
        "dates": (document.get("published"), document.get("effective")),
        "key": key,
        "title": title,
        "title_right": title_right(title, truth.title),
        "units": len(truth.units),
        "right": right,
        "wrong_exact": wrong,
        "absent": len(truth.absent),
        "honest": honest,
        "paragraphs": len(paragraphs),
        "junk": junk / max(len(paragraphs), 1),
        "wrong_examples": wrong_examples,
    }


def knows_name(index, name: str) -> bool:
    """The index finds the document by this name (not scored by the README; the issue asks for
    short names too)."""
    try:
        index.document_paragraphs(name)
    except ValueError:
        return False
    return True


def title_right(lexkb_title: str, truth_title: str) -> bool:
    got, want = normalize(lexkb_title), normalize(truth_title)
    if not got:
        return False
    if fuzz.ratio(got, want) >= SIMILAR:
        return True
    return len(got) >= 0.6 * len(want) and fuzz.ratio(got, want[: len(got)]) >= SIMILAR


# unstructured's raw partition ----------------------------------------------------------------
def partition(path: Path) -> list[str]:
    from transforms.reading import offline_nlp

    offline_nlp.install()
    if path.suffix == ".pdf":
        from unstructured.partition.pdf import partition_pdf

        elements = partition_pdf(str(path), strategy="fast", languages=["eng"])
    elif path.suffix == ".docx":
        from unstructured.partition.docx import partition_docx

        elements = partition_docx(str(path))
    else:
        from unstructured.partition.html import partition_html

        elements = partition_html(str(path))
    return [element.text for element in elements]


def score_baseline(truth: Truth) -> dict:
    texts = partition(truth.path)
    starts = [strip_labels(normalize(t))[:BASELINE_PREFIX] for t in texts]
    begun = 0
    for unit in truth.units:
        want = normalize(unit["text"])[:BASELINE_PREFIX]
        if process.extractOne(want, starts, scorer=fuzz.ratio, score_cutoff=SIMILAR):
            begun += 1
    title_words = set(normalize(truth.title).split())
    junk = sum(is_junk(t, title_words) for t in texts)
    return {"elements": len(texts), "begun": begun, "junk": junk / max(len(texts), 1)}


# report ---------------------------------------------------------------------------------------
def table(rows: list[tuple[Truth, dict, dict | None]]) -> str:
    lines = [
        "| document | family | truth units | units right | wrong-exact | absent honest | junk "
        "| title | short names known | units found by a short name | edges from notes "
        "| published / effective | unstructured: units at an element start "
        "| unstructured: junk |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for truth, got, raw in rows:
        title = "right" if got["title_right"] else json.dumps(got["title"][:40])
        base = (
            (
                f"{raw['begun'] / len(truth.units):.1%} of {raw['elements']:,} elements",
                f"{raw['junk']:.1%}",
            )
            if raw
            else ("-", "-")
        )
        lines.append(
            f"| {truth.path.name} | {truth.family} | {len(truth.units):,} "
            f"| {got['right'] / len(truth.units):.1%} ({got['right']:,}) | {got['wrong_exact']} "
            f"| {got['honest']}/{got['absent']} | {got['junk']:.1%} | {title} "
            f"| {len(got['names'])}/{len(truth.short_names)} "
            f"| {len(got['cited_by_name'])}/{len(truth.short_names)} | {got['note_edges']} "
            f"| {' / '.join(str(d or '-') for d in got['dates'])} | {base[0]} | {base[1]} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "out" / "realdocs")
    parser.add_argument("--docs", default="", help="names or families, comma-separated")
    parser.add_argument("--reuse", action="store_true", help="score roots built before")
    parser.add_argument("--no-baseline", action="store_true", help="skip unstructured's partition")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    wanted = {w.strip().lower() for w in args.docs.split(",") if w.strip()}
    # Word-numbered documents made here (tests/support/word_policy.py), scored with the rest
    own = [
        path.with_name(f"{path.name}.truth.json") for path in word_policy.write(args.work / "own")
    ]
    selected = [
        t
        for t in truths(args.data, own)
        if not wanted or wanted & {t.name, t.family, t.path.name.lower()}
    ]
    if not selected:
        sys.exit(f"no truth files matched in {args.data / 'realdocs'}")
    rows = []
    for truth in selected:
        root = args.work / truth.name / "root"
        if not (args.reuse and (root / "CURRENT").exists()):
            seconds = build(truth.path, root)
            print(f"built {truth.path.name} in {seconds:.1f} s", file=sys.stderr)
        got = score_lexkb(truth, root)
        raw = None if args.no_baseline else score_baseline(truth)
        for example in got["wrong_examples"][:8]:
            print(f"  wrong-exact {truth.name}: {example}", file=sys.stderr)
        rows.append((truth, got, raw))
    print(table(rows))
    if args.json:
        args.json.write_text(
            json.dumps({t.name: {"lexkb": g, "unstructured": r} for t, g, r in rows}, indent=1)
        )


if __name__ == "__main__":
    main()
