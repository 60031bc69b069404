"""Definition extraction: GDPR Article 4's 26 definitions, and ObliQA's glossary.

    .venv/bin/python -m benchmarks.defined_terms

Runs transforms.structure.defined_terms (what the `defined_terms` asset runs) over the paragraphs of indexes
built earlier: the GDPR from DOCX and from PDF (benchmarks/structure.py builds them under
benchmarks/out/structure) and the ObliQA passages (benchmarks/obliqa.py).

- GDPR gold: the terms Article 4 quotes in the official Formex XML (the text between QUOT.START
  and QUOT.END in its items). The DOCX and PDF renderings print the terms without quotation
  marks ("(1) personal data means ..."), which is the hard case.
- ObliQA gold: the first cell of each row of the glossary's table (document 8, GLO): rows whose
  first cell is a term, not a list marker such as "(a)".

Reported: recall of the gold terms and precision of what was found in the same unit (Article 4;
the glossary passage), next to a plain baseline in the same run: a quoted phrase followed by
"means".
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from xml.etree import ElementTree

from lexkb import Index
from transforms.structure.defined_terms import definitions_in

REPO = Path(__file__).resolve().parent.parent


BASELINE = re.compile(r"[\"“‘']([^\"“”‘’'\n]{1,80})[\"”’']\s+means\b")
ENUMERATOR = re.compile(r"^\(?(?:[ivxlc]{1,6}|[a-z]|\d{1,3})[).]?$", re.IGNORECASE)


def key(term: str) -> str:
    return " ".join(term.casefold().split())


def gdpr_gold(xml: Path) -> set[str]:
    root = ElementTree.parse(xml).getroot()
    article = next(a for a in root.iter("ARTICLE") if int(a.get("IDENTIFIER")) == 4)
    terms = set()
    for start in article.iter("QUOT.START"):
        if start.tail and start.tail.strip():
            terms.add(key(start.tail))
    return terms


def glossary_gold(text: str) -> set[str]:
    terms = set()
    for line in text.split("\n"):
        if "\t" in line:
            first = line.split("\t", 1)[0].strip()
            if first and not ENUMERATOR.match(first) and first.casefold() != "defined terms":
                terms.add(key(first))
    return terms


def score(found: set[str], gold: set[str]) -> tuple[float, float, int]:
    right = len(found & gold)
    return right / len(gold), (right / len(found) if found else 0.0), len(found)


def row(name: str, text: str, gold: set[str]) -> None:
    ours = {key(t) for t, _, _ in definitions_in(text)}
    plain = {key(m.group(1)) for m in BASELINE.finditer(text)}
    r, p, n = score(ours, gold)
    br, bp, bn = score(plain, gold)
    print(f"| {name} | {len(gold)} | {r:.3f} | {p:.3f} ({n}) | {br:.3f} | {bp:.3f} ({bn}) |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared/data"))
    args = parser.parse_args()
    data = Path(args.data)
    out = REPO / "benchmarks" / "out"
    gold = gdpr_gold(data / "gdpr" / "gdpr-en.xml")
    print(
        "| unit | gold terms | lexkb recall | lexkb precision (found) | baseline recall | baseline precision (found) |"
    )
    print("|---|---|---|---|---|---|")
    for kind in ("docx", "pdf"):
        index = Index.open(out / "structure" / f"index-gdpr-{kind}")
        row(f"GDPR Article 4 ({kind})", index.get("Article 4").hit.text, gold)
    index = Index.open(out / "obliqa" / "index")
    _, paragraphs = index.document_paragraphs("8")
    glossary = max(paragraphs["content"].to_list(), key=len)
    row("ObliQA glossary (GLO)", glossary, glossary_gold(glossary))


if __name__ == "__main__":
    main()
