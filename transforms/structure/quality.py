"""How much of a document came out as citable structure, as one number between 0 and 1.

Six signals, each one a reader could check by hand:
- placed: share of paragraph text that sits in a unit with its own ref (text we could not tie to
  any number cannot be cited precisely);
- gaps: numbering gaps among sibling refs ("Article 6(1)", "Article 6(3)" with no "(2)"), which
  mean a unit was lost or merged into its neighbour;
- orphans: share of paragraphs that are stray fragments of a few words with no number;
- junk: share of paragraphs that are no text at all: under JUNK_CHARS characters without a word,
  placed only by position ("32 33", "1 ),"), or nothing but page furniture (a running head or
  foot kept as a unit of its own); a numbered unit whose text is short ("(b) [***].") is still
  one, and so is a short line of text ("Whereas:");
- furniture: share of paragraphs with a running head or foot inside their text
  ("L 333/4 EN Official Journal of the European Union 27.12.2022"): a line that recurs on
  FURNITURE_REPEATS pages or more, alike but for its numbers, which differ between them (a
  page number, a date), and does not end as a sentence or clause does; a sentence that recurs
  word for word, or with other numbers, is text, and so are list items on one page ("List item
  1", "List item 2"). A document without pages has no running heads;
- unnumbered: in a numbered document, share of its text placed only by position ("p. 11 ¶ 9")
  between its first numbered unit and its last: numbering the structure missed (margin
  paragraph numbers read as text, units filed under a running head). A preamble before the
  first unit and signatures or schedules after the last are unnumbered in good documents too.
The score is their product, so any one failure pulls it down.
"""

from __future__ import annotations

import re
from collections import defaultdict

_NUMBER = re.compile(r"\d+")
ORPHAN_WORDS = 4
JUNK_CHARS = 15
FURNITURE_REPEATS = 3
# How a line of text ends; a running head or foot does not.
_CLOSING = (".", ";", ":", ",")
_CLOSERS = " )]\"'’”"
# A unit of text has a word in it; "32 33", "1 ),", "p. 4" have none.
_WORD = re.compile(r"[^\W\d_]{3}")
# How transforms.structure refers to a paragraph it could tie to no number: by its page and
# place ("p. 11 ¶ 9"), or by its place in a document without pages ("¶ 12").
_POSITIONAL = re.compile(r"(?:p\. \d+ )?¶ \d+(?:\.\d+)?")


def numbering_gap_rate(refs: list[str]) -> float:
    """Missing siblings over expected siblings, per prefix ("Article 6(" -> 1, 2, 3). A run
    is expected from its lowest number to its highest: "§ 101" to "§ 104" expects four."""
    seen: dict[str, set[int]] = defaultdict(set)
    for ref in refs:
        ref = ref.split(" [")[0]
        # Every number in a ref is one sibling position: "Article 6(1)" also attests "Article 6".
        for match in _NUMBER.finditer(ref):
            seen[ref[: match.start()]].add(int(match.group()))
    runs = [numbers for numbers in seen.values() if max(numbers) - min(numbers) < 1000]
    expected = sum(max(numbers) - min(numbers) + 1 for numbers in runs)
    present = sum(len(numbers) for numbers in runs)
    return 1.0 - present / expected if expected else 0.0


def _line_key(line: str) -> str:
    """A line as running heads repeat it: numbers, case and spacing aside."""
    return " ".join(_NUMBER.sub("#", line).casefold().split())


def furniture_lines(texts: list[str], pages: list[int | None]) -> set[str]:
    """The `_line_key`s of lines of `texts` (on `pages`) that recur on FURNITURE_REPEATS pages
    or more with a number that differs between them, and do not end as a sentence or clause
    does: a running head or foot carries a page number or date and no closing punctuation,
    while a line of text that recurs with other numbers ("(a) paragraph 2 is replaced by the
    following:") ends as text ends."""
    found: dict[str, set[int]] = defaultdict(set)
    forms: dict[str, set[str]] = defaultdict(set)
    for text, page in zip(texts, pages, strict=True):
        if page is None:
            continue
        for line in text.splitlines():
            if _NUMBER.search(line) and not line.rstrip(_CLOSERS).endswith(_CLOSING):
                key = _line_key(line)
                found[key].add(page)
                forms[key].add(" ".join(line.split()))
    return {k for k, seen in found.items() if len(seen) >= FURNITURE_REPEATS and len(forms[k]) > 1}


def numbered(ref: str | None) -> bool:
    """A ref of a unit's own number, not a place ("p. 11 ¶ 9")."""
    return bool(ref and not _POSITIONAL.fullmatch(ref))


def unnumbered_share(paragraphs: list[tuple[str | None, str]]) -> float:
    """Share of the text placed by position only between the first and the last paragraph
    with a number of its own; 0 in a document without numbered units."""
    units = [i for i, (ref, _) in enumerate(paragraphs) if numbered(ref)]
    if not units:
        return 0.0
    inside = paragraphs[units[0] : units[-1] + 1]
    lost = sum(len(text) for ref, text in inside if not numbered(ref))
    return lost / (sum(len(text) for _, text in paragraphs) or 1)


def extraction_quality(
    paragraphs: list[tuple[str | None, str]], pages: list[int | None] | None = None
) -> dict[str, float]:
    """Signals and score over (ref, text) of a document's paragraph chunks, in reading order,
    and the page each starts on (None where the document has no pages)."""
    if not paragraphs:
        return {
            "placed": 0.0,
            "gaps": 1.0,
            "orphans": 1.0,
            "junk": 1.0,
            "furniture": 1.0,
            "unnumbered": 1.0,
            "score": 0.0,
        }
    texts = [text for _, text in paragraphs]
    total = sum(len(text) for text in texts) or 1
    placed = sum(len(text) for ref, text in paragraphs if ref) / total
    # Places ("p. 5 ¶ 9") are no numbering: pages without an unnumbered paragraph are no gap.
    gaps = numbering_gap_rate([ref for ref, _ in paragraphs if ref and numbered(ref)])
    stray = sum(1 for ref, text in paragraphs if not ref and len(text.split()) < ORPHAN_WORDS)
    orphans = stray / len(paragraphs)
    repeated = furniture_lines(texts, pages or [None] * len(texts))
    keys = [[_line_key(line) for line in text.splitlines() if line.strip()] for text in texts]
    junk_units = [
        (len(text.strip()) < JUNK_CHARS and not numbered(ref) and not _WORD.search(text))
        or all(k in repeated for k in lines)
        for (ref, text), lines in zip(paragraphs, keys, strict=True)
    ]
    junk = sum(junk_units) / len(paragraphs)
    furnished = sum(
        not is_junk and any(k in repeated for k in lines)
        for is_junk, lines in zip(junk_units, keys, strict=True)
    )
    furniture = furnished / len(paragraphs)
    unnumbered = unnumbered_share(paragraphs)
    score = (
        placed
        * (1.0 - gaps)
        * (1.0 - orphans)
        * (1.0 - junk)
        * (1.0 - furniture)
        * (1.0 - unnumbered)
    )
    return {
        "placed": round(placed, 4),
        "gaps": round(gaps, 4),
        "orphans": round(orphans, 4),
        "junk": round(junk, 4),
        "furniture": round(furniture, 4),
        "unnumbered": round(unnumbered, 4),
        "score": round(score, 4),
    }
