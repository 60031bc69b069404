"""lexkb's citation grammar next to two citation libraries, citeurl and eyecite, on real documents.

    /tmp/citevenv/bin/python -m benchmarks.citation_libraries \
        --lexkb-python .venv/bin/python [--data ../shared/data] [--json OUT.json]

Why two interpreters: the libraries are measured as candidates, so they must not be installed into
the project's environment (nor their dependencies: eyecite brings lxml, regex, reporters-db). The
script therefore runs under a side environment that has them
(`python3.11 -m venv /tmp/citevenv && /tmp/citevenv/bin/pip install citeurl eyecite markdown`;
citeurl 12.0.4 imports `markdown` without declaring it) and reads lexkb's side by starting
itself again under the project's interpreter with `--lexkb-worker`: that child imports only
`lexkb.core.text.citations` and returns its readings as JSON, so every text goes through both
sides in the same run. Without citeurl and eyecite it prints why and exits 0.

lexkb's parser knows the names an index of the three documents would give it
(`lexkb.core.text.refs.cited_names`: "17 U.S.C.", "Title 17", "Bribery Act 2010", "DORA", ...),
as `transforms.edges.resolve` does when it builds one.

Two measurements, on `<data>/realdocs` (read in place, never copied):

1. Reference forms. Every truth `ref` of the us, uk and eu documents ("§ 512(c)(1)(A)(i)",
   "section 7(2)", "Schedule 1, paragraph 13(2)", "Article 3(19)", "Recital 12") and the other
   ways people write them: "17 U.S.C. 512(c)(1)", "17 U.S.C. § 512(c)(1)", "section 512(c)(1) of
   title 17"; "Article 3, point (19)", "point (19) of Article 3" (for refs whose last label is a
   point: a letter, or one of Article 3's numbered definitions); "paragraph 13(2) of Schedule 1".
   Each form is parsed alone. A parser reads it fully when one citation's labels equal the ref's
   (lower-cased; article, recital and schedule keep their kind word, section, paragraph and point
   do not; the code's title is not a label). lexkb keeps a trailing "of Article 3" in the address,
   not in the span, so the span is not asked to cover the whole form. Partly: something found,
   none equal; "stops early" when a found reading is a prefix of the ref's labels (drops "(A)", or
   reads "Schedule 1" and the paragraph as two citations). Not found: nothing.
2. Running text. 200 statutory paragraphs of 17 U.S.C. (seed 7; only the statute fields of the
   OLRC XHTML, notes and source credits left out) that write "section"/"subsection" before a
   number or "(label)". Counted per parser: citations (lexkb: one per unit, so "sections 106
   through 122" is 17) and distinct spans. lexkb and citeurl with local templates are aligned
   by overlapping spans; a place where their label sets differ is a disagreement, and 30 of them
   (seed 7) are printed for a person to judge. citeurl's shipped templates and eyecite find
   little here, and all of their finds are printed with lexkb's reading of the same place.

citeurl is measured twice: with its shipped templates only, and with `LOCAL_TEMPLATES` below
(about 40 lines of YAML written for this benchmark: bare sections, relative US units, EU
articles, recitals and points, UK schedule paragraphs), which is what adopting it for these
families would take. eyecite targets case law; its statute citations come from reporters-db
("17 U.S.C. § 512" with "(c)(1)" as a pin cite), and bare "§" marks come back as
UnknownCitation, counted apart.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SEED = 7
PARAGRAPHS = 200
DISAGREEMENTS = 30
FAMILIES = ("us", "uk", "eu")
Labels = tuple[str, ...]

# Kinds that are separate number spaces ("Article 5" is not "Recital 5") keep their word.
KEPT_KINDS = ("article", "recital", "schedule", "annex", "part", "chapter", "appendix")
# Which code a US citation is in, not a unit of it: left out of labels for every parser.
SKIPPED_TOKENS = frozenset({"title"})
# Paragraphs that cite a section or subsection by number or label.
SECTION_WORD = re.compile(r"\b(?:sub)?sections?\s+(?:\d|\()", re.I)
OTHER_TITLE = re.compile(r"\bsections?\s+(\d+\w*)(?:\([^)]*\))*\s+of\s+title\s+(\d+)", re.I)

# citeurl templates for the forms its shipped set has no pattern for (it cites the US Code only
# with a title: "17 U.S.C. § 512"). Tokens are listed outermost first, which `citeurl_labels`
# relies on.
LOCAL_TEMPLATES = r"""
Bare US Code section:
  tokens:
    title: {regex: '\d{1,2}'}
    section: {regex: '\d[\w.-]*\w|\d'}
    subsection: &chain {regex: '(\(([A-Za-z]{1,5}|\d{1,3})\))+'}
  patterns:
    - '(§§?|[Ss]ections?) ?{section}( ?{subsection})? of [Tt]itle {title}'
    - '(§§?|[Ss]ections?) ?{section}( ?{subsection})?'
US Code unit inside a section:
  tokens:
    subsection: *chain
  patterns:
    - '([Ss]ub)?([Ss]ections?|[Pp]aragraphs?|[Cc]lauses?|[Ii]tems?) {subsection}'
US Code chapter:
  tokens:
    chapter: {regex: '\d+[A-Z]?'}
  patterns:
    - '[Cc]hapters? {chapter}'
EU article:
  tokens:
    article: {regex: '\d+[a-z]?'}
    subsection: *chain
    point: {regex: '\(([a-z]{1,5}|\d{1,3})\)'}
  patterns:
    - 'Articles? {article}( ?{subsection})?(,? points? {point})?'
    - '[Pp]oints? {point} of Article {article}( ?{subsection})?'
EU recital:
  tokens:
    recital: {regex: '\d+'}
  patterns:
    - '[Rr]ecitals? {recital}'
UK schedule paragraph:
  tokens:
    schedule: {regex: '\d+[A-Z]?'}
    paragraph: {regex: '\d+[A-Z]?'}
    subsection: *chain
  patterns:
    - 'Schedules? {schedule}(,? paragraphs? {paragraph}( ?{subsection})?)?'
    - '[Pp]aragraphs? {paragraph}( ?{subsection})? of Schedule {schedule}'
"""


@dataclass(frozen=True)
class Found:
    """One citation as a parser read it: where, and the labels it names (see module docstring)."""

    start: int
    end: int
    text: str
    labels: Labels
    note: str = ""


@dataclass(frozen=True)
class Case:
    """A written reference and the labels a full reading of it must give."""

    family: str
    form: str
    text: str
    expected: Labels


@dataclass
class Tally:
    """Outcomes of one parser on one (family, form) row, with an example of each failure."""

    n: int = 0
    counts: Counter = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)


Parser = Callable[[Sequence[str]], list[list[Found]]]


# Labels ------------------------------------------------------------------------------------


def split_labels(value: str) -> list[str]:
    """ "106A(a)(1)(A)" -> ["106a", "a", "1", "a"], "76.55(e)" -> ["76", "55", "e"]: upper-case
    item labels compared lower-cased and dotted numbers split, as lexkb stores them."""
    pattern = r"\(([^)\s]+)\)|([^()\s,.]+)"
    return [m.group(1) or m.group(2) for m in re.finditer(pattern, value.casefold())]


def ref_labels(ref: str) -> Labels:
    """The truth's labels: "Schedule 1, paragraph 13(2)" -> ("schedule", "1", "13", "2")."""
    labels: list[str] = []
    pattern = r"(?:([a-z§]+)\s*)?(\d+[a-z]{0,2})\b|\(([a-z0-9]+)\)"
    for word, number, point in re.findall(pattern, ref.casefold()):
        if number:
            labels += [word, number] if word in KEPT_KINDS else [number]
        else:
            labels.append(point)
    return tuple(labels)


def lexkb_labels(address: Sequence[str]) -> Labels:
    """lexkb keeps a kind word glued to its number ("article3"); split it to compare."""
    labels: list[str] = []
    for atom in address:
        match = re.fullmatch(rf"({'|'.join(KEPT_KINDS)}|app)(\d.*)", atom)
        if match:
            labels += ["appendix" if match.group(1) == "app" else match.group(1), match.group(2)]
        else:
            labels.append(atom)
    return tuple(labels)


def citeurl_labels(cite: Any) -> Labels:
    """A citeurl citation's tokens in template order, outermost first."""
    labels: list[str] = []
    for name, value in cite.tokens.items():
        if not value or name in SKIPPED_TOKENS:
            continue
        if name in KEPT_KINDS:
            labels += [name, str(value).casefold()]
        else:
            labels += split_labels(str(value))
    return tuple(labels)


# Cases -------------------------------------------------------------------------------------


def load_truths(realdocs: Path) -> dict[str, dict[str, Any]]:
    """The truth file of each family measured here, by family."""
    truths: dict[str, dict[str, Any]] = {}
    for path in sorted(realdocs.glob("*.truth.json")):
        truth = json.loads(path.read_text(encoding="utf-8"))
        if truth.get("family") in FAMILIES:
            truths[truth["family"]] = truth
    return truths


def build_cases(truths: dict[str, dict[str, Any]]) -> list[Case]:
    """Every truth ref of each family, and the other written forms of the same refs."""
    cases: list[Case] = []
    for family in FAMILIES:
        for unit in truths.get(family, {}).get("units", []):
            ref = unit["ref"]
            expected = ref_labels(ref)
            cases.append(Case(family, "truth ref", ref, expected))
            if family == "us" and ref.startswith("§ "):
                bare = ref[2:]
                cases.append(Case(family, "17 U.S.C. N(x)", f"17 U.S.C. {bare}", expected))
                cases.append(Case(family, "17 U.S.C. § N(x)", f"17 U.S.C. § {bare}", expected))
                cases.append(
                    Case(
                        family, "section N(x) of title 17", f"section {bare} of title 17", expected
                    )
                )
            if family == "eu" and (point := _eu_point(ref)):
                holder, label = point
                cases.append(
                    Case(family, "Article N, point (x)", f"{holder}, point ({label})", expected)
                )
                cases.append(
                    Case(family, "point (x) of Article N", f"point ({label}) of {holder}", expected)
                )
            if family == "uk" and (m := re.fullmatch(r"(Schedule \d+), paragraph (.+)", ref)):
                cases.append(
                    Case(
                        family,
                        "paragraph N of Schedule M",
                        f"paragraph {m.group(2)} of {m.group(1)}",
                        expected,
                    )
                )
    return cases


def _eu_point(ref: str) -> tuple[str, str] | None:
    """("Article 2(1)", "a") for "Article 2(1)(a)": the last label is a point where it is a letter
    (EU paragraphs are numbered) or one of Article 3's numbered definitions."""
    match = re.fullmatch(r"(Article (\d+)((?:\(\w+\))*))\((\w+)\)", ref)
    if not match:
        return None
    holder, article, middle, label = match.groups()
    if label.isalpha() or (article == "3" and not middle):
        return holder, label
    return None


# Running text ------------------------------------------------------------------------------


def usc_paragraphs(htm: Path) -> list[str]:
    """Statutory paragraphs of the OLRC XHTML, from its statute fields only."""
    import lxml.html

    raw = htm.read_text(encoding="utf-8")
    paragraphs: list[str] = []
    for chunk in re.findall(
        r"<!-- field-start:statute -->(.*?)<!-- field-end:statute -->", raw, re.S
    ):
        for element in lxml.html.fragments_fromstring(chunk):
            if isinstance(element, str):
                continue
            for p in element.iter("p"):
                if (p.get("class") or "").startswith("statutory-body"):
                    text = " ".join(p.text_content().split())
                    if text:
                        paragraphs.append(text)
    return paragraphs


def sample_paragraphs(paragraphs: list[str]) -> list[str]:
    """The fixed sample: paragraphs that write "section"/"subsection" before a number or label."""
    candidates = [p for p in paragraphs if SECTION_WORD.search(p)]
    return random.Random(SEED).sample(candidates, min(PARAGRAPHS, len(candidates)))


# Parsers -----------------------------------------------------------------------------------


def lexkb_parser(python: str, truths: dict[str, dict[str, Any]]) -> Parser:
    """lexkb's grammar, read in a child process under the project's interpreter."""
    documents = [(Path(t["file"]).stem, t.get("title") or "") for t in truths.values()]

    def parse(texts: Sequence[str]) -> list[list[Found]]:
        request = json.dumps({"documents": documents, "texts": list(texts)})
        env = dict(os.environ, PYTHONPATH=str(REPO))
        done = subprocess.run(
            [python, str(Path(__file__).resolve()), "--lexkb-worker"],
            input=request,
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"lexkb worker failed:\n{done.stderr[-2000:]}")
        return [
            [Found(row[0], row[1], row[2], tuple(row[3]), row[4]) for row in rows]
            for rows in json.loads(done.stdout)
        ]

    return parse


def lexkb_worker() -> None:
    """Child side: parse each text of the request on stdin with lexkb, answer JSON on stdout."""
    from lexkb.core.text.citations import CitationParser
    from lexkb.core.text.refs import cited_names

    request = json.load(sys.stdin)
    names = [n for key, title in request["documents"] for n in cited_names(key, title)]
    parser = CitationParser(names)
    answer = []
    for text in request["texts"]:
        rows = []
        for c in parser.parse(text).citations:
            note = c.kind or ""
            if c.document:
                note += f" doc={c.document}" + (" (outside)" if c.outside else "")
            if c.relative:
                note += f" relative to {c.anchor}"
            rows.append([c.start, c.end, c.text, list(lexkb_labels(c.address)), note.strip()])
        answer.append(rows)
    json.dump(answer, sys.stdout)


def citeurl_parser(local: bool) -> Parser:
    """citeurl's Citator, with its shipped templates, plus `LOCAL_TEMPLATES` when `local`."""
    from citeurl import Citator

    citator = Citator()
    if local:
        citator.load_yaml(LOCAL_TEMPLATES)

    def parse(texts: Sequence[str]) -> list[list[Found]]:
        out = []
        for text in texts:
            cites = citator.list_cites(text)
            out.append(
                [
                    Found(c.span[0], c.span[1], c.text, citeurl_labels(c), c.template.name)
                    for c in cites
                ]
            )
        return out

    return parse


def eyecite_parser() -> Parser:
    """eyecite's get_citations; statute citations carry their subsections as a pin cite."""
    from eyecite import get_citations

    def parse(texts: Sequence[str]) -> list[list[Found]]:
        out = []
        for text in texts:
            found = []
            for c in get_citations(text):
                kind = type(c).__name__
                start, end = c.full_span()
                if kind == "FullLawCitation":
                    section = str(c.groups.get("section") or "")
                    labels = (*split_labels(section), *split_labels(c.metadata.pin_cite or ""))
                else:
                    labels = (kind,)
                found.append(Found(start, end, text[start:end], tuple(labels), kind))
            out.append(found)
        return out

    return parse


# Scoring -----------------------------------------------------------------------------------


def outcome(found: list[Found], expected: Labels) -> str:
    """full, partly (stops early / other) or not found; see the module docstring. eyecite's
    UnknownCitation (a bare "§") reads nothing, so it counts as not found."""
    found = [f for f in found if f.note != "UnknownCitation"]
    if not found:
        return "not found"
    if any(f.labels == expected for f in found):
        return "full"
    if any(f.labels and expected[: len(f.labels)] == f.labels for f in found):
        return "partly: stops early"
    return "partly: other"


def score_cases(
    cases: list[Case], readings: dict[str, list[list[Found]]]
) -> dict[str, dict[tuple[str, str], Tally]]:
    """Per parser, per (family, form): how many refs were read fully, partly, not at all."""
    scores: dict[str, dict[tuple[str, str], Tally]] = {}
    for name, per_case in readings.items():
        rows: dict[tuple[str, str], Tally] = defaultdict(Tally)
        for case, found in zip(cases, per_case, strict=True):
            tally = rows[(case.family, case.form)]
            result = outcome(found, case.expected)
            tally.n += 1
            tally.counts[result] += 1
            if result != "full" and result not in tally.examples:
                got = "; ".join(f"{f.text!r}->{'/'.join(f.labels)}" for f in found) or "-"
                tally.examples[result] = f"{case.text!r} => {got}"
        scores[name] = dict(rows)
    return scores


def percent(count: int, total: int) -> str:
    """A share in whole percent that never rounds a miss away: 2802 of 2803 is ">99", not 100."""
    share = 100 * count / total
    if 0 < share < 0.5:
        return "<1"
    if 99.5 <= share < 100:
        return ">99"
    return f"{share:.0f}"


def print_cases(cases: list[Case], scores: dict[str, dict[tuple[str, str], Tally]]) -> None:
    """Table 1: full / partly / not found, as shares, per family and form."""
    names = list(scores)
    keys = list(dict.fromkeys((c.family, c.form) for c in cases))
    print("\n## 1. Reference forms: full / partly / not found (% of refs)\n")
    print("| family | form | n | " + " | ".join(names) + " |")
    print("| --- | --- | ---: | " + " | ".join("---" for _ in names) + " |")
    for key in keys:
        cells = []
        for name in names:
            tally = scores[name][key]
            full = tally.counts["full"]
            part = tally.counts["partly: stops early"] + tally.counts["partly: other"]
            shares = (full, part, tally.counts["not found"])
            cells.append(" / ".join(percent(v, tally.n) for v in shares))
        n = scores[names[0]][key].n
        print(f"| {key[0]} | {key[1]} | {n} | " + " | ".join(cells) + " |")
    print("\nFirst failure of each kind, per parser and row:")
    for name in names:
        for key in keys:
            for result, example in sorted(scores[name][key].examples.items()):
                print(f"- {name} | {key[0]} {key[1]} | {result}: {example}")


def spans(found: list[Found]) -> dict[tuple[int, int], set[Labels]]:
    """Distinct spans and the label tuples read there (a range gives several on one span)."""
    by_span: dict[tuple[int, int], set[Labels]] = defaultdict(set)
    for f in found:
        by_span[(f.start, f.end)].add(f.labels)
    return by_span


@dataclass
class Cluster:
    """Overlapping spans of two parsers in one paragraph, and what each read there."""

    paragraph: int
    start: int
    end: int
    left: set[Labels] = field(default_factory=set)
    right: set[Labels] = field(default_factory=set)


def align(left: list[list[Found]], right: list[list[Found]]) -> list[Cluster]:
    """Group the two parsers' citations by overlapping spans, paragraph by paragraph."""
    clusters: list[Cluster] = []
    for index, (a, b) in enumerate(zip(left, right, strict=True)):
        marks = [(s, e, labels, 0) for (s, e), ls in spans(a).items() for labels in ls]
        marks += [(s, e, labels, 1) for (s, e), ls in spans(b).items() for labels in ls]
        current: Cluster | None = None
        for s, e, labels, side in sorted(marks):
            if current is None or s >= current.end:
                current = Cluster(index, s, e)
                clusters.append(current)
            current.end = max(current.end, e)
            (current.left if side == 0 else current.right).add(labels)
    return clusters


def print_running_text(
    paragraphs: list[str],
    readings: dict[str, list[list[Found]]],
    seconds: dict[str, float],
    statute: list[str],
    own_sections: set[str],
) -> dict[str, Any]:
    """Table 2 and the printed disagreements for a person to judge. `statute` (every statutory
    paragraph) and `own_sections` (title 17's section numbers) size one risk: "section N of
    title M" read as title 17's own section N."""
    print(f"\n## 2. Running text: {len(paragraphs)} paragraphs of 17 U.S.C. (seed {SEED})\n")
    print("| parser | citations | distinct spans | paragraphs with one | seconds |")
    print("| --- | ---: | ---: | ---: | ---: |")
    figures: dict[str, Any] = {}
    for name, per_paragraph in readings.items():
        kept = [[f for f in found if f.note != "UnknownCitation"] for found in per_paragraph]
        units = sum(len(f) for f in kept)
        distinct = sum(len(spans(f)) for f in kept)
        with_one = sum(1 for f in kept if f)
        unknown = sum(len(f) for f in per_paragraph) - units
        extra = f" (+{unknown} UnknownCitation)" if unknown else ""
        print(f"| {name} | {units}{extra} | {distinct} | {with_one} | {seconds.get(name, 0):.2f} |")
        kinds = Counter(
            f.note.split(" doc=")[0].split(" relative")[0] for found in kept for f in found
        )
        figures[name] = {
            "citations": units,
            "spans": distinct,
            "paragraphs": with_one,
            "unknown": unknown,
            "by_kind": dict(kinds),
        }
    for name, info in figures.items():
        print(f"- {name} by kind/template: {dict(Counter(info['by_kind']).most_common(12))}")

    def context(cluster: Cluster) -> str:
        text = paragraphs[cluster.paragraph]
        lo, hi = max(0, cluster.start - 70), min(len(text), cluster.end + 50)
        return f"...{text[lo : cluster.start]}[[{text[cluster.start : cluster.end]}]]{text[cluster.end : hi]}..."

    def show(labels: set[Labels]) -> str:
        return ", ".join(sorted("/".join(ls) for ls in labels)) or "-"

    if "lexkb" in readings and "citeurl+local" in readings:
        clusters = align(readings["lexkb"], readings["citeurl+local"])
        kinds = Counter()
        disagreements = []
        for cluster in clusters:
            if cluster.left == cluster.right:
                kinds["agree"] += 1
                continue
            kind = (
                "lexkb only"
                if not cluster.right
                else "citeurl+local only"
                if not cluster.left
                else "both, different labels"
            )
            kinds[kind] += 1
            disagreements.append((kind, cluster))
        figures["alignment lexkb vs citeurl+local"] = dict(kinds)
        print(f"\nlexkb vs citeurl+local, places (overlapping spans): {dict(kinds)}")
        # What the one-sided places start with ("subsection", "(", a number in a list ...).
        lead: Counter = Counter()
        for kind, cluster in disagreements:
            word = re.match(
                r"[A-Za-z§]+|\(|\d", paragraphs[cluster.paragraph][cluster.start : cluster.end]
            )
            lead[f"{kind}: {word.group(0).casefold() if word else '?'}"] += 1
        print(f"by first word: {dict(lead.most_common())}")
        sample = random.Random(SEED).sample(disagreements, min(DISAGREEMENTS, len(disagreements)))
        print(f"\n### {len(sample)} disagreements to judge by hand (seed {SEED})\n")
        for number, (kind, cluster) in enumerate(
            sorted(sample, key=lambda d: (d[1].paragraph, d[1].start)), 1
        ):
            print(f"{number:2}. [{kind}] p{cluster.paragraph}: {context(cluster)}")
            print(f"    lexkb: {show(cluster.left)} | citeurl+local: {show(cluster.right)}")

    for name in ("citeurl", "eyecite"):
        if name not in readings:
            continue
        print(f"\n### Every find of {name} in these paragraphs, with lexkb's reading there\n")
        for index, found in enumerate(readings[name]):
            for f in found:
                lex = [
                    g
                    for g in readings.get("lexkb", [[]] * len(paragraphs))[index]
                    if g.start < f.end and f.start < g.end
                ]
                lexkb_said = (
                    "; ".join(f"{g.text!r}->{'/'.join(g.labels)} {g.note}" for g in lex) or "-"
                )
                print(
                    f"- p{index} {f.note}: {f.text!r} -> {'/'.join(f.labels)} | lexkb: {lexkb_said}"
                )

    print("\n### 'section N of title M': which code each side says is cited\n")
    for index, text in enumerate(paragraphs):
        for match in OTHER_TITLE.finditer(text):
            if match.group(2) == "17":
                continue
            said = []
            for name, per_paragraph in readings.items():
                at = [
                    f
                    for f in per_paragraph[index]
                    if f.start < match.end() and match.start() < f.end
                ]
                said.append(f"{name}: " + ("; ".join(f"{f.text!r} {f.note}" for f in at) or "-"))
            clash = (
                " (title 17 has this section number)"
                if match.group(1).casefold() in own_sections
                else ""
            )
            print(f"- p{index} {match.group(0)!r}{clash} | " + " | ".join(said))
    other = [m for text in statute for m in OTHER_TITLE.finditer(text) if m.group(2) != "17"]
    clashes = [m.group(0) for m in other if m.group(1).casefold() in own_sections]
    print(
        f"\nIn all {len(statute)} statutory paragraphs: {len(other)} 'section N of title M' (M != 17);"
        f" {len(clashes)} name a section number title 17 has too: {clashes[:8]}"
    )
    figures["other titles"] = {"mentions": len(other), "clash with title 17": len(clashes)}
    return figures


# Main --------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lexkb-python", default=str(REPO / ".venv" / "bin" / "python"))
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--lexkb-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.lexkb_worker:
        lexkb_worker()
        return 0

    realdocs = args.data / "realdocs"
    truths = load_truths(realdocs)
    htm = realdocs / "usc17.htm"
    if set(truths) != set(FAMILIES) or not htm.exists():
        print(f"skipped: {realdocs} lacks the us, uk and eu truth files or usc17.htm")
        return 0
    if not Path(args.lexkb_python).exists():
        print(f"skipped: no lexkb interpreter at {args.lexkb_python} (--lexkb-python)")
        return 0

    parsers: dict[str, Parser] = {"lexkb": lexkb_parser(args.lexkb_python, truths)}
    missing: list[str] = []
    try:
        parsers["citeurl"] = citeurl_parser(local=False)
        parsers["citeurl+local"] = citeurl_parser(local=True)
    except ImportError as error:  # citeurl 12.0.4 also needs `markdown`, undeclared
        missing.append(f"citeurl ({error})")
    try:
        parsers["eyecite"] = eyecite_parser()
    except ImportError as error:
        missing.append(f"eyecite ({error})")
    if missing:
        print("not measured: " + "; ".join(missing) + f" (interpreter {sys.executable})")
    if len(parsers) == 1:
        print(
            "skipped: neither citeurl nor eyecite is importable here; run under a venv that has them"
        )
        return 0

    cases = build_cases(truths)
    statute = usc_paragraphs(htm)
    paragraphs = sample_paragraphs(statute)
    own_sections = {
        u["ref"][2:].casefold() for u in truths["us"]["units"] if re.fullmatch(r"§ \w+", u["ref"])
    }
    case_texts = [c.text for c in cases]
    case_readings: dict[str, list[list[Found]]] = {}
    text_readings: dict[str, list[list[Found]]] = {}
    seconds: dict[str, float] = {}
    for name, parse in parsers.items():
        case_readings[name] = parse(case_texts)
        began = time.perf_counter()
        text_readings[name] = parse(paragraphs)
        seconds[name] = time.perf_counter() - began  # lexkb's includes starting its interpreter

    print(f"{len(cases)} reference forms; parsers: {', '.join(parsers)}")
    scores = score_cases(cases, case_readings)
    print_cases(cases, scores)
    figures = print_running_text(paragraphs, text_readings, seconds, statute, own_sections)
    if args.json:
        table = {
            name: {f"{fam} | {form}": {"n": t.n, **t.counts} for (fam, form), t in rows.items()}
            for name, rows in scores.items()
        }
        args.json.write_text(
            json.dumps({"forms": table, "running_text": figures}, indent=1, default=list)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
