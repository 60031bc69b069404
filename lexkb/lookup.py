"""Looking up a reference, and saying exactly how it matched.

People use lexkb to check citations, so a lookup must never confirm what it did not find. Every
answer names its match:
- `exact`: a unit has this reference;
- `contains`: the reference names a point inside a paragraph ("Article 5(1)(e)" in Article 5(1)),
  and the paragraph's text holds that point's label;
- `enclosing`: the unit does not exist ("Article 5(3)"); the nearest unit around it that does is
  offered, marked as such;
- `not_found`: with the reason (an unknown document, with the closest names; or a document with
  no such unit, with its closest references).

A reference may be written the ways citations are written in text: "Rule 4.3.1 of the Lexkb
Rulebook", "point (e) of Article 5(1)", "Article 6(2) DHR", "LSA 230, para. A8", "R 4.3.1".
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from lexkb.core.text.citations import CitationParser
from lexkb.core.text.refs import core_address, normalize_ref, ref_address
from lexkb.core.vocabulary import MatchKind

MATCHES = tuple(MatchKind)
_LAST_POINT = re.compile(r"\(([A-Za-z]{1,4}|\d{1,3})\)\s*$")
# "R 4.3.1", "r. 4.3.1": the rule abbreviation the citation parser leaves to running text.
_RULE_ABBREVIATION = re.compile(r"^\s*[Rr]\.?\s+(?=\d+\.\d)")
# Words around a reference that name no document: "see Rule 4.3.1", "point (e) of the ...".
_FILLER = {
    "of", "the", "in", "under", "see", "and", "or", "to", "rule", "rules", "article", "articles",
    "art", "art.", "section", "sections", "sec", "para", "para.", "paragraph", "paragraphs",
    "point", "points", "recital", "r", "r.", "s", "ss", "annex", "schedule", "appendix",
    "chapter", "part", "subparagraph", "no", "no.",
}  # fmt: skip


@dataclass(frozen=True)
class Match:
    """What a reference resolved to: rows (best first), how, why, and near alternatives."""

    rows: list[int]
    match: str
    reason: str
    document_id: str | None = None
    closest: list[str] = field(default_factory=list)


class Resolver:
    """Built once per index from its references and document names."""

    def __init__(
        self,
        refs: Sequence[str | None],
        levels: Sequence[str],
        document_ids: Sequence[str],
        texts: Sequence[str],
        aliases: dict[str, str],
        names: dict[str, list[str]],
        display: dict[str, str],
        alias_key,
    ) -> None:
        self._refs = refs
        self._doc_of = document_ids
        self._texts = texts
        self._aliases = aliases  # alias key -> document id
        self._alias_key = alias_key
        self._display = display  # document id -> how a person names it ("LSA 230")
        self._names = names  # document id -> every name it goes by
        self._parser = CitationParser(n for ns in names.values() for n in ns)
        self._by_address: dict[tuple[str, ...], list[int]] = {}
        self._by_ref: dict[str, list[int]] = {}
        self._doc_refs: dict[str, list[str]] = {}
        for row, (ref, level) in enumerate(zip(refs, levels, strict=True)):
            if not ref or level not in ("paragraph", "section"):
                continue
            self._by_ref.setdefault(normalize_ref(ref), []).append(row)
            address = ref_address(ref)
            for key in dict.fromkeys([address, core_address(address)]):
                self._by_address.setdefault(key, []).append(row)
            self._doc_refs.setdefault(document_ids[row], []).append(ref)

    # readings -----------------------------------------------------------------------------
    def _readings(self, text: str) -> list[tuple[str | None, str | None, tuple[str, ...]]]:
        """(document id or None, document name as written, address) readings of `text`, the
        most specific first. A name lexkb does not know comes back with id None."""
        text = _RULE_ABBREVIATION.sub("Rule ", text)
        readings = []
        parsed = self._parser.parse(text)
        if parsed.citations:
            first = parsed.citations[0]
            if first.document is not None:
                doc = self._aliases.get(self._alias_key(first.document))
                readings.append((doc, first.document, first.address))
            elif first.outside:
                readings.append((None, first.text, ()))
            else:
                named = [self._aliases.get(self._alias_key(n)) for _, n in parsed.documents]
                doc = next((d for d in named if d), None)
                # Words the citation leaves unexplained ("zzz 9.9", "GDPR Article 5") name a
                # document lexkb does not hold; they are not to be ignored.
                unexplained = None if doc else _leftover(text, first, parsed.documents)
                readings.append((doc, unexplained, first.address))
        # "LSA 230 paragraph 8", "Article 6(2) DHR": a known name before or after the rest.
        # A standard's number before a dot counts too: "230.A2", "ISA 315.A2".
        dotted = [(text[: m.start()], text[m.end() :]) for m in re.finditer(r"\.", text[:40])]
        for name, rest in dotted:
            if (doc := self._aliases.get(self._alias_key(name.strip()))) is not None:
                readings.append((doc, name.strip(), ref_address(rest)))
        words = [m for m in re.finditer(r"[^\s,;]+", text)]
        for cut in range(1, min(len(words), 8)):
            head, tail = text[: words[cut].start()], text[words[cut].start() :]
            for name, rest in ((head, tail), (tail, head)):
                if (doc := self._aliases.get(self._alias_key(name.strip(" ,;:")))) is not None:
                    readings.append((doc, name.strip(" ,;:"), ref_address(rest)))
            tail_start = words[len(words) - cut].start()
            name, rest = text[tail_start:], text[:tail_start]
            if (doc := self._aliases.get(self._alias_key(name.strip(" ,;:")))) is not None:
                readings.append((doc, name.strip(" ,;:"), ref_address(rest)))
        readings.append((None, None, ref_address(text)))
        return [r for r in dict.fromkeys(readings) if r[2] or r[1]]

    def _rows(self, address: tuple[str, ...], doc: str | None) -> list[int]:
        rows = self._by_address.get(address, [])
        return [r for r in rows if doc is None or self._doc_of[r] == doc]

    # resolution ---------------------------------------------------------------------------
    def find(self, text: str) -> Match:
        if rows := self._by_ref.get(normalize_ref(text)):
            return Match(
                rows, MatchKind.EXACT, f"{text} is {self._cite(rows[0])}", self._doc_of[rows[0]]
            )
        readings = self._readings(text)
        # A name lexkb does not hold ("the Foo Rulebook", "zzz") rules out units of other
        # documents, unless another reading of the text names a document it does hold.
        unknown = [name for doc, name, _ in readings if doc is None and name]
        if unknown and any(doc for doc, _, _ in readings):
            unknown = []
        for doc, _, address in readings:
            if doc is None and unknown:
                continue
            if address and (rows := self._rows(address, doc)):
                return Match(
                    rows, MatchKind.EXACT, f"{text} is {self._cite(rows[0])}", self._doc_of[rows[0]]
                )
        for doc, _, address in readings:
            if doc is None and unknown:
                continue  # the reference names a document lexkb does not hold
            # Never further up than two levels of a dotted number ("18.5.1(a)" may land on
            # 18.5.1 or 18.5, not on chapter 18).
            shortest = 2 if len(address) >= 3 else 1
            for length in range(len(address) - 1, shortest - 1, -1):
                rows = self._rows(address[:length], doc)
                if not rows:
                    continue
                label = _LAST_POINT.search(text)
                point = address[length] if length == len(address) - 1 else None
                if point is not None and label and _holds_point(self._texts[rows[0]], point):
                    reason = f"({point}) is a point inside {self._cite(rows[0])}"
                    return Match(rows, MatchKind.CONTAINS, reason, self._doc_of[rows[0]])
                reason = f"{text} does not exist; nearest: {self._cite(rows[0])}"
                return Match(rows, MatchKind.ENCLOSING, reason, self._doc_of[rows[0]])
        if unknown:
            names = sorted({n for ns in self._names.values() for n in ns})
            closest = difflib.get_close_matches(unknown[0], names, n=5, cutoff=0.5)
            reason = f"no document called {unknown[0]!r} in this index"
            return Match([], MatchKind.NOT_FOUND, reason, None, closest)
        doc = next((d for d, _, _ in readings if d), None)
        refs = (
            self._doc_refs.get(doc, [])
            if doc
            else [r for rs in self._doc_refs.values() for r in rs]
        )
        wanted = " ".join(text.split())
        address = next((a for d, _, a in readings if d == doc and a), ())
        by_address = {".".join(ref_address(r)): r for r in refs}
        near = difflib.get_close_matches(".".join(address), list(by_address), n=5, cutoff=0.5)
        closest = [by_address[a] for a in near]
        reason = (
            f"{self._display.get(doc, doc)} has no unit {wanted!r}"
            if doc
            else f"no document has a unit {wanted!r}"
        )
        return Match([], MatchKind.NOT_FOUND, reason, doc, closest)

    def _cite(self, row: int) -> str:
        doc = self._doc_of[row]
        return f"{self._display.get(doc, doc)} {self._refs[row]}".strip()


def _leftover(text: str, citation, documents: list[tuple[int, str]]) -> str | None:
    """The words of `text` outside the citation and the names it holds, fillers aside."""
    spans = [(citation.start, citation.end), *((at, at + len(name)) for at, name in documents)]
    rest = "".join(
        " " if any(a <= i < b for a, b in spans) else char for i, char in enumerate(text)
    )
    words = [w for w in re.findall(r"[^\W\d_][\w'’.-]*", rest) if w.casefold() not in _FILLER]
    return " ".join(words) or None


def _holds_point(text: str, label: str) -> bool:
    """The paragraph's text shows the point's label where a point starts: "(e) kept in ..."."""
    return re.search(rf"(?:^|[\s:;,—-])\({re.escape(label)}\)\s", text, re.IGNORECASE) is not None
