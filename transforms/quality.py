"""How much of a document came out as citable structure, as one number between 0 and 1.

Three signals, each one a reader could check by hand:
- placed: share of paragraph text that sits in a unit with its own ref (text we could not tie to
  any number cannot be cited precisely);
- gaps: numbering gaps among sibling refs ("Article 6(1)", "Article 6(3)" with no "(2)"), which
  mean a unit was lost or merged into its neighbour;
- orphans: share of paragraphs that are stray fragments of a few words with no number.
The score is their product, so any one failure pulls it down.
"""

from __future__ import annotations

import re
from collections import defaultdict

_NUMBER = re.compile(r"\d+")
ORPHAN_WORDS = 4


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


def extraction_quality(paragraphs: list[tuple[str | None, str]]) -> dict[str, float]:
    """Signals and score over (ref, text) of a document's paragraph chunks."""
    if not paragraphs:
        return {"placed": 0.0, "gaps": 1.0, "orphans": 1.0, "score": 0.0}
    total = sum(len(text) for _, text in paragraphs) or 1
    placed = sum(len(text) for ref, text in paragraphs if ref) / total
    gaps = numbering_gap_rate([ref for ref, _ in paragraphs if ref])
    stray = sum(1 for ref, text in paragraphs if not ref and len(text.split()) < ORPHAN_WORDS)
    orphans = stray / len(paragraphs)
    score = placed * (1.0 - gaps) * (1.0 - orphans)
    return {
        "placed": round(placed, 4),
        "gaps": round(gaps, 4),
        "orphans": round(orphans, 4),
        "score": round(score, 4),
    }
