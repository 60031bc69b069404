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

`Resolver` reads references; `Finder` turns what it found into the index's answers: the unit with
its section, neighbours and citations (`Index.get`), every unit a reference names
(`Index.resolve`), and the units reached from one along citations (`Index.hop`).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import polars as pl

from lexkb.core.text.citations import Citation, CitationParser
from lexkb.core.text.citing import asked_kind, citation, cited_ref, fits
from lexkb.core.text.refs import (
    US_CODE,
    core_address,
    document_names,
    normalize_ref,
    ref_address,
)
from lexkb.core.vocabulary import ChunkLevel, MatchKind
from lexkb.graph import CITES, CitationGraph, Step
from lexkb.hits import Hits
from lexkb.results import SCORE_DIGITS, GraphHit, Hit, Lookup
from lexkb.tables import Tables, alias_key
from lexkb.whole_units import whole_units

MATCHES = tuple(MatchKind)
# What a bare reference means: the paragraph when one has that ref, else the section ("Article 6");
# a section whose one paragraph shares its ref is the section (lexkb.whole_units).
_LOOKUP_LEVELS = (ChunkLevel.PARAGRAPH, ChunkLevel.SECTION)
_LAST_POINT = re.compile(r"\(([A-Za-z]{1,4}|\d{1,3})\)\s*$")
# "R 4.3.1", "r. 4.3.1": the rule abbreviation the citation parser leaves to running text.
_RULE_ABBREVIATION = re.compile(r"^\s*[Rr]\.?\s+(?=\d+\.\d)")
# Words around a reference that name no document: "see Rule 4.3.1", "point (e) of the ...".
_FILLER = {
    "of", "the", "in", "under", "see", "and", "or", "to", "rule", "rules", "article", "articles",
    "art", "art.", "section", "sections", "sec", "para", "para.", "paragraph", "paragraphs",
    "point", "points", "recital", "r", "r.", "s", "ss", "annex", "schedule", "appendix",
    "chapter", "part", "subparagraph", "no", "no.", "clause", "clauses", "cl", "cl.",
}  # fmt: skip
# People's ways of naming a point, rewritten to the form refs are stored in: "Article 3, point
# (19)" and "Article 2(1), point (f)" are Article 3(19) and Article 2(1)(f).
_COMMA_POINT = re.compile(r"(?<=[\w)])\s*,?\s*\bpoints?\s*(\([A-Za-z0-9]{1,6}\))", re.I)
# "point (19) of Article 3", "paragraph 2 of Article 5(1)": the unit named after "of" comes first.
_POINT_OF = re.compile(
    r"^\s*(?:points?|sub-?paragraphs?|paragraphs?|paras?\.?)\s*\(?([A-Za-z0-9]{1,6})\)?\s+of\s+"
    r"((?:articles?|art\.|sections?|§+|rules?|schedules?|clauses?)\s*\d+[A-Za-z]{0,2}"
    r"(?:\.\d+[A-Za-z]{0,2})*(?:\([A-Za-z0-9]{1,6}\))*)",
    re.I,
)
# The labels a reference names: numbers ("512", "4.9", "B34") and points ("(c)", "(A)", "(ii)").
_NUMBER = re.compile(r"\d+[a-z]{0,2}")
_POINT = re.compile(r"\(([a-z0-9]{1,6})\)")


@dataclass(frozen=True)
class Match:
    """What a reference resolved to: rows (best first), how, why, and near alternatives."""

    rows: list[int]
    match: MatchKind
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
        alias_key: Callable[[str], str],
        whole: dict[int, tuple[int, int]],
        words: dict[str, str | None] | None = None,
        types: dict[str, str | None] | None = None,
    ) -> None:
        self._refs = refs
        self._levels = levels
        self._doc_of = document_ids
        # Units that hold numbered units ("§ 114" holds "§ 114(a)"): the parents of every ref.
        self._parents = {
            (document_ids[row], normalize_ref(ref[: ref.rindex("(")]))
            for row, ref in enumerate(refs)
            if ref and "(" in ref and levels[row] == ChunkLevel.PARAGRAPH
        }
        self._texts = texts
        self._aliases = aliases  # alias key -> document id
        self._alias_key = alias_key
        self._display = display  # document id -> how a person names it ("LSA 230")
        self._words = words or {}  # document id -> the word its units are cited by ("section")
        self._types = types or {}  # document id -> its document type ("contract", "act")
        self._names = names  # document id -> every name it goes by
        # A name several documents go by ("17 U.S.C." for two editions of the title, "Title
        # 17"): no alias, since it names none of them alone, but a reference under it is looked
        # for in each (Resolver.find: `ambiguous` where several hold the unit).
        self._shared: dict[str, list[str]] = {}
        for doc, known in names.items():
            for name in known:
                key = alias_key(name)
                if key not in aliases and doc not in self._shared.setdefault(key, []):
                    self._shared[key].append(doc)
        self._parser = CitationParser(n for ns in names.values() for n in ns)
        self._by_address: dict[tuple[str, ...], list[int]] = {}
        self._by_ref: dict[str, list[int]] = {}
        self._doc_refs: dict[str, list[tuple[str, int]]] = {}  # document id -> (ref, row)
        for row, (ref, level) in enumerate(zip(refs, levels, strict=True)):
            if not ref or level not in _LOOKUP_LEVELS:
                continue
            # A section's one paragraph under the section's own reference is that section (its
            # heading and text): one answer, whose citations are both chunks' (Finder.unit_rows).
            section = whole[row][0] if row in whole else row
            if section != row and normalize_ref(refs[section] or "") == normalize_ref(ref):
                continue
            self._by_ref.setdefault(normalize_ref(ref), []).append(row)
            address = ref_address(ref)
            for form in dict.fromkeys([address, core_address(address)]):
                self._by_address.setdefault(form, []).append(row)
            self._doc_refs.setdefault(document_ids[row], []).append((ref, row))

    # readings -----------------------------------------------------------------------------
    def _readings(self, text: str) -> list[tuple[str | None, str | None, tuple[str, ...]]]:
        """(document id or None, document name as written, address) readings of `text`, the
        most specific first. A name lexkb does not know comes back with id None."""
        text = _RULE_ABBREVIATION.sub("Rule ", text)
        readings: list[tuple[str | None, str | None, tuple[str, ...]]] = []
        parsed = self._parser.parse(text)
        if parsed.citations:
            first = parsed.citations[0]
            if first.document is not None:
                for doc in _or_unnamed(self._named(first.document)):
                    readings.append((doc, first.document, first.address))
            elif first.outside:
                readings.append((None, first.text, ()))
            else:
                docs = next((d for _, n in parsed.documents if (d := self._named(n))), [])
                # Words the citation leaves unexplained ("zzz 9.9", "GDPR Article 5") name a
                # document lexkb does not hold, unless they are a name written in another
                # case ("nda Section 4.2"); they are not to be ignored.
                unexplained = None if docs else _leftover(text, first, parsed.documents)
                if unexplained:
                    docs = self._named(unexplained)
                for doc in _or_unnamed(docs):
                    readings.append((doc, unexplained, first.address))
        # "LSA 230 paragraph 8", "Article 6(2) DHR": a known name before or after the rest.
        # A standard's number before a dot counts too: "230.A2", "ISA 315.A2".
        # The name may follow other words: "<document key> IFRS 16.B34".
        starts = [0, *(m.end() for m in re.finditer(r"\s+", text[:40]))]
        dotted = [
            (text[start : m.start()], text[m.end() :])
            for m in re.finditer(r"\.", text[:40])
            for start in starts
            if start == 0 or (start < m.start() and re.match(r"[A-Za-z]{0,2}\d", text[m.end() :]))
        ]
        for name, rest in dotted:
            if re.fullmatch(r"[\d.]+", name.strip()) and not re.match(r"[A-Za-z]", rest):
                # "4.2" and "3.3.31" are numbers, not document "4"'s unit 2 or document "33"'s
                # unit 31: a number names a document before a dot only where a standard's
                # lettered paragraph follows ("230.A2").
                continue
            for doc in self._named(name.strip()):
                readings.append((doc, name.strip(), ref_address(rest)))
        words = [m for m in re.finditer(r"[^\s,;]+", text)]
        for cut in range(1, min(len(words), 8)):
            head, tail = text[: words[cut].start()], text[words[cut].start() :]
            tail_start = words[len(words) - cut].start()
            split = ((head, tail), (tail, head), (text[tail_start:], text[:tail_start]))
            for name, rest in split:
                for doc in self._named(name.strip(" ,;:")):
                    readings.append((doc, name.strip(" ,;:"), ref_address(rest)))
        readings.append((None, None, ref_address(text)))
        return [r for r in dict.fromkeys(readings) if r[2] or r[1]]

    def _named(self, name: str) -> list[str]:
        """The documents `name` names: the one it is an alias of, or each that shares it."""
        key = self._alias_key(name)
        doc = self._aliases.get(key)
        return [doc] if doc is not None else self._shared.get(key, [])

    def _rows(self, address: tuple[str, ...], doc: str | None, kind: str | None) -> list[int]:
        """The units at `address` in `doc`, or in any document whose units are of the `kind`
        asked for ("clause 4.2": a contract's, not an Act's section 4(2))."""
        rows = self._by_address.get(address, [])
        if doc is not None:
            return [r for r in rows if self._doc_of[r] == doc]
        # A unit of another kind ("section 7" of a standard whose units are paragraphs) is
        # no exact answer: the lookup goes on as for a unit not found, and names it nearest.
        return [r for r in rows if self._fits(self._doc_of[r], kind)]

    def _fits(self, doc: str, kind: str | None) -> bool:
        """Whether `doc` may hold a unit asked for as `kind`. "Clause" is a contract's word: a
        section of an Act or of the US Code, a standard's paragraph, is never a clause (a
        document of no known type may hold anything). Other kinds by the document's unit word
        (lexkb.core.text.citing.fits)."""
        if kind == "clause":
            return (self._types.get(doc) or "contract").casefold() == "contract"
        return fits(self._words.get(doc), kind)

    def _exact(self, asked: str, rows: list[int]) -> Match:
        """`exact` where the rows are one document's; `ambiguous` where they are several
        documents', with each document's unit as a candidate and none chosen."""
        documents = list(dict.fromkeys(self._doc_of[r] for r in rows))
        if len(documents) == 1:
            return Match(rows, MatchKind.EXACT, f"{asked} is {self._cite(rows[0])}", documents[0])
        candidates = [next(r for r in rows if self._doc_of[r] == d) for d in documents]
        cited = [self._cite(r) for r in candidates]
        if len(set(cited)) < len(cited):
            # Documents that go by one name (two editions of a title): told apart by their keys.
            cited = [f"{c} [{self._names[d][0]}]" for c, d in zip(cited, documents, strict=True)]
        listed = "; ".join(cited)
        reason = f"{asked} fits {len(documents)} documents ({listed}): name the document"
        return Match(candidates, MatchKind.AMBIGUOUS, reason)

    # resolution ---------------------------------------------------------------------------
    def find(self, asked: str) -> Match:
        kind = asked_kind(asked)
        rows = self._by_ref.get(normalize_ref(asked), [])
        # A unit of another kind ("clause 4.2" of 4 U.S.C. § 2(4.2)) is no answer: the
        # reference is read as below, and ends not found if no document of its kind holds it.
        if fitting := [r for r in rows if self._fits(self._doc_of[r], kind)]:
            return self._exact(asked, fitting)
        written = written_form(asked)
        # A reading that leaves a label of the reference unread ("Article 3" of "Article 3,
        # point (99)") names a unit around the one asked for, never the unit itself.
        raw = self._readings(written)
        names = [name for doc, name, _ in raw if doc and name]
        readings = [(*r, _accounts_for(written, [*names, r[1]], r[2])) for r in raw]
        # A name lexkb does not hold ("the Foo Rulebook", "zzz") rules out units of other
        # documents, unless another reading of the text names a document it does hold.
        unknown = [name for doc, name, _, _ in readings if doc is None and name]
        # A document the text names is where its unit is looked for, never in another.
        if any(doc for doc, _, _, _ in readings):
            unknown, readings = [], [r for r in readings if r[0]]
        for at, (doc, name, address, complete) in enumerate(readings):
            if doc is None and unknown or not complete:
                continue
            if address and (rows := self._rows(address, doc, kind)):
                # A name several documents share: the unit in each that holds it.
                for other, same, where, whole in readings[at + 1 :]:
                    if (same, where, whole) == (name, address, True) and other not in (doc, None):
                        rows = rows + self._rows(where, other, kind)
                return self._exact(asked, rows)
        for doc, _, address, complete in readings:
            if doc is None and unknown:
                continue  # the reference names a document lexkb does not hold
            if not complete and address and (rows := self._rows(address, doc, kind)):
                reason = f"{asked} does not exist; nearest: {self._cite(rows[0])}"
                return Match(rows, MatchKind.ENCLOSING, reason, self._doc_of[rows[0]])
            # Never further up than two levels of a dotted number ("18.5.1(a)" may land on
            # 18.5.1 or 18.5, not on chapter 18).
            shortest = 2 if len(address) >= 3 else 1
            for length in range(len(address) - 1, shortest - 1, -1):
                rows = self._rows(address[:length], doc, kind)
                if not rows:
                    continue
                label = _LAST_POINT.search(written)
                # A point, or a point and its sub-point ("(b)(i)" of "section 1(2)(b)(i)"),
                # printed inside the unit found.
                points = address[length:] if len(address) - length <= 2 else ()
                if (
                    points
                    and label
                    and self._reads_points(rows[0])
                    and _holds_points(self._texts[rows[0]], points)
                ):
                    named = "".join(f"({p})" for p in points)
                    reason = f"{named} is a point inside {self._cite(rows[0])}"
                    return Match(rows, MatchKind.CONTAINS, reason, self._doc_of[rows[0]])
                reason = f"{asked} does not exist; nearest: {self._cite(rows[0])}"
                return Match(rows, MatchKind.ENCLOSING, reason, self._doc_of[rows[0]])
        if unknown:
            names = sorted({n for ns in self._names.values() for n in ns})
            closest = difflib.get_close_matches(unknown[0], names, n=5, cutoff=0.5)
            reason = f"no document called {unknown[0]!r} in this index"
            return Match([], MatchKind.NOT_FOUND, reason, None, closest)
        doc = next((d for d, _, _, _ in readings if d), None)
        refs = (
            self._doc_refs.get(doc, [])
            if doc
            else [
                (ref, row)
                for rs in self._doc_refs.values()
                for ref, row in rs
                if self._fits(self._doc_of[row], kind)
            ]
        )
        wanted = " ".join(asked.split())
        address = next((a for d, _, a, _ in readings if d == doc and a), ())
        by_address = {".".join(ref_address(ref)): (ref, row) for ref, row in refs}
        near = difflib.get_close_matches(".".join(address), list(by_address), n=5, cutoff=0.5)
        # Within the document named, its refs; across documents, each as a citation that names
        # its document ("Bribery Act 2010, section 4(2)"), of a kind the reference can mean.
        closest = [by_address[a][0] if doc else self._cite(by_address[a][1]) for a in near]
        reason = (
            f"{self._display.get(doc, doc)} has no unit {wanted!r}"
            if doc
            else f"no document has a unit {wanted!r}"
        )
        return Match([], MatchKind.NOT_FOUND, reason, doc, closest)

    def _reads_points(self, row: int) -> bool:
        """A point label is looked for in a unit's own words, never in a section that holds
        numbered units: it prints their points too ("(i)" of a clause deep inside § 114), and
        a point of its own would have its own ref."""
        ref = self._refs[row] or ""
        return (
            self._levels[row] != ChunkLevel.SECTION
            or (self._doc_of[row], normalize_ref(ref)) not in self._parents
        )

    def _cite(self, row: int) -> str:
        doc = self._doc_of[row]
        ref = cited_ref(self._refs[row], self._words.get(doc))
        return citation(self._display.get(doc, doc), ref, None)


class Finder:
    """Chunks by id, by reference and along citations, as the Hits and Lookups an index
    answers with. The reference grammar is compiled on the first lookup, so opening stays
    fast."""

    def __init__(
        self, tables: Tables, hits: Hits, graph: CitationGraph, catalog: dict[str, str]
    ) -> None:
        self.tables = tables
        self.hit = hits.hit
        self.graph = graph
        self.catalog = catalog  # the manifest's aliases: alias -> document key
        self._resolver: Resolver | None = None
        self._whole: dict[int, tuple[int, int]] | None = None

    @property
    def whole(self) -> dict[int, tuple[int, int]]:
        """Sections with one paragraph, and that paragraph: one unit (lexkb.whole_units)."""
        if self._whole is None:
            self._whole = whole_units(self.tables.chunks)
        return self._whole

    def unit_rows(self, row: int) -> tuple[int, ...]:
        """The chunks that are the same unit as `row`: itself, and the section or the one
        paragraph it makes a whole unit with."""
        return self.whole.get(row, (row,))

    @property
    def resolver(self) -> Resolver:
        """Built on the first lookup: the reference grammar compiles the index's names."""
        if self._resolver is None:
            tables = self.tables
            documents, chunks, aliases = tables.documents, tables.chunks, tables.aliases
            names: dict[str, list[str]] = {}
            for doc in documents.iter_rows(named=True):
                names[doc["document_id"]] = document_names(
                    doc["document_key"],
                    doc["title"],
                    doc["short_name"],
                    doc["aliases"] or [],
                    doc.get("parties") or [],
                )
            for name, key in self.catalog.items():
                doc_id = aliases.get(alias_key(key)) or aliases.get(alias_key(name))
                if doc_id:
                    names.setdefault(doc_id, []).append(name)
            self._resolver = Resolver(
                chunks["ref"].to_list(),
                chunks["chunk_level"].to_list(),
                chunks["document_id"].to_list(),
                chunks["content"].to_list(),
                aliases,
                names,
                tables.short_names,
                alias_key,
                self.whole,
                tables.unit_words,
                dict(documents.select("document_id", "document_type").rows()),
            )
        return self._resolver

    def get(self, text: str) -> Lookup:
        """The unit a chunk id or reference names, with how it matched (Index.get)."""
        if text in self.tables.by_id:
            return self.lookup(text)
        found = self.resolver.find(text)
        if not found.rows:
            return Lookup(text, found.match, found.reason, closest=found.closest)
        if found.match == MatchKind.AMBIGUOUS:
            candidates = [self.hit(row, None) for row in found.rows]
            return Lookup(text, found.match, found.reason, alternatives=candidates)
        context = self.lookup(self.tables.chunks["chunk_id"][found.rows[0]])
        others = [self.hit(row, None) for row in found.rows[1:]]
        return replace(
            context, asked=text, match=found.match, reason=found.reason, alternatives=others
        )

    def lookup(self, chunk_id: str) -> Lookup:
        """The chunk with this id and what surrounds it (match `exact`)."""
        by_id, chunks, level_rows = self.tables.by_id, self.tables.chunks, self.tables.level_rows
        if chunk_id not in by_id:
            raise KeyError(f"no chunk {chunk_id!r} in this index")
        row = by_id[chunk_id]
        level = chunks["chunk_level"][row]
        parent = chunks["parent_chunk_id"][row]
        section = (
            self.hit(by_id[parent], None) if level == ChunkLevel.PARAGRAPH and parent else None
        )
        same_level = level_rows[level] if level in level_rows else np.array([row])
        position = int(np.searchsorted(same_level, row))
        document = chunks["document_id"][row]

        def neighbour(at: int) -> Hit | None:
            if 0 <= at < same_level.size:
                other = int(same_level[at])
                if chunks["document_id"][other] == document:
                    return self.hit(other, None)
            return None

        # A whole unit's citations land on its section chunk or its paragraph; both are its own.
        unit = self.unit_rows(row)
        cites: list[Hit] = []
        cited_by: list[Hit] = []
        for other, direction, _ in (n for r in unit for n in self.graph.neighbours(r)):
            group = cites if direction == CITES else cited_by
            if other not in unit and all(h.chunk_id != chunks["chunk_id"][other] for h in group):
                group.append(self.hit(other, None))
        unit_ids = [chunks["chunk_id"][r] for r in unit]
        unresolved = (
            self.tables.edges.filter(
                pl.col("source_chunk_id").is_in(unit_ids) & pl.col("target_chunk_id").is_null()
            )
            .select("reference_text", "reference_type", "cited_document")
            .to_dicts()
        )
        hit = self.hit(row, None)
        return Lookup(
            chunk_id,
            MatchKind.EXACT,
            f"{chunk_id} is {hit.citation}",
            hit,
            section,
            neighbour(position - 1),
            neighbour(position + 1),
            cites,
            cited_by,
            unresolved,
        )

    def resolve(self, text: str) -> list[Hit]:
        """Every unit a chunk id or reference names, in document order (Index.resolve)."""
        if text in self.tables.by_id:
            return [self.hit(self.tables.by_id[text], None)]
        found = self.resolver.find(text)
        if found.match not in (MatchKind.EXACT, MatchKind.CONTAINS, MatchKind.AMBIGUOUS):
            return []
        return [self.hit(row, None) for row in sorted(found.rows)]

    def hop(
        self, chunk_id: str, max_hops: int, decay: float, min_score: float, k: int
    ) -> list[GraphHit]:
        """The k best chunks reached from `chunk_id` along citations (Index.hop)."""
        reached = self.graph.walk(
            self.unit_rows(self.tables.by_id[chunk_id]), max_hops, decay, min_score
        )
        ranked = sorted(reached.items(), key=lambda item: (-item[1][0], item[0]))[:k]
        return [
            GraphHit(self.hit(row, score), round(float(score), SCORE_DIGITS), self.path_steps(path))
            for row, (score, _, path) in ranked
        ]

    def path_steps(self, path: list[tuple[int, str, int]]) -> list[Step]:
        """A graph path of (row, direction, edge) as Steps that name their chunks."""
        ids, refs = self.tables.chunks["chunk_id"], self.tables.chunks["ref"]
        return [self.graph.step(d, e, ids[r], refs[r]) for r, d, e in path]


def _or_unnamed(documents: list[str]) -> list[str | None]:
    """The documents a reading may be of: those named, else one reading of no document."""
    named: list[str | None] = list(documents)
    return named or [None]


def _leftover(text: str, citation: Citation, documents: list[tuple[int, str]]) -> str | None:
    """The words of `text` outside the citation and the names it holds, fillers aside."""
    spans = [(citation.start, citation.end), *((at, at + len(name)) for at, name in documents)]
    rest = "".join(
        " " if any(a <= i < b for a, b in spans) else char for i, char in enumerate(text)
    )
    rest = re.sub(r"\([A-Za-z0-9]{1,6}\)", " ", rest)  # "(A)(i)" are labels, not a name
    words = [w for w in re.findall(r"[^\W\d_][\w'’.-]*", rest) if w.casefold() not in _FILLER]
    # An act's number ("2022/2554") names a document as its title does.
    words += re.findall(r"\b\d{2,4}/\d{1,5}\b", rest)
    return " ".join(words) or None


# Text an act quotes ("... is replaced by the following: ‘(17) “sustainability matters” ...’;")
# holds the points of the act it amends, not of the unit that quotes it. A quote closes at ’
# or ” not followed by a letter (’ inside a word is an apostrophe: "Member State’s").
_QUOTED = re.compile(r"‘[^‘]*?’(?![A-Za-z])|“[^“]*?”")


def _holds_points(text: str, labels: Sequence[str]) -> bool:
    """The paragraph's text shows each label where a point starts, each after the one before
    ("(b)" then its "(i)"), written "(e)" or "e)": at a line's start, after a colon, semicolon
    or dash ("...: (e) kept in ...", ".—(1) With respect"), or after "; and". A label in
    running text ("clause (2) of subsection (a)") or in quoted text starts no point."""
    start = r"(?:^|\n|[:;—–-]|[;,]\s*(?:and|or))\s*"
    text = _QUOTED.sub(lambda quoted: " " * len(quoted.group(0)), text)

    def find(label: str, at: int) -> re.Match[str] | None:
        return re.compile(rf"{start}\(?{re.escape(label)}\)\s", re.IGNORECASE).search(text, at)

    at, end = 0, len(text)
    for label in labels:
        found = find(label, at)
        if found is None or found.start() >= end:
            return False
        at = found.end()
        # A sub-point is the point's own only before the point after it ("(c)" after "(b)").
        following = _next_label(label)
        after = find(following, at) if following else None
        end = after.start() if after else len(text)
    return True


def _next_label(label: str) -> str | None:
    """The label after `label` in its sequence ("b" -> "c", "2" -> "3"), where plain."""
    if label.isdigit():
        return str(int(label) + 1)
    if len(label) == 1 and label.isalpha() and label.lower() != "z":
        return chr(ord(label) + 1)
    return None


def written_form(text: str) -> str:
    """The reference as refs are stored: "Article 3, point (19)" -> "Article 3(19)", "point
    (19) of Article 3" -> "Article 3(19)", "17 U.S.C. 512(c)" -> "17 U.S.C. § 512(c)"."""
    text = _COMMA_POINT.sub(r"\1", text)
    if match := _POINT_OF.match(text):
        text = f"{match.group(2)}({match.group(1)}){text[match.end() :]}"
    return US_CODE.sub(lambda m: f"{m.group(1)} U.S.C. § ", text)


def _accounts_for(text: str, names: list[str | None], address: tuple[str, ...]) -> bool:
    """Every number and point label of `text` outside the documents' names is in `address`."""
    text = US_CODE.sub(" ", text).casefold()
    for name in sorted({n.casefold() for n in names if n}, key=len, reverse=True):
        # A whole name only: the "17" of "Title 17" is not the end of "§ 117".
        text = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", " ", text)
    atoms = [re.sub(r"^[a-z§¶]+(?=\d)", "", atom) for atom in address]
    # Each number and label read once: "Schedule 1, paragraph 1" holds two "1"s and "(a)(1)(A)"
    # two "a"s, which one atom of the address cannot both account for.
    points = Counter(_POINT.findall(text))
    if any(count > atoms.count(point) for point, count in points.items()):
        return False
    unread = list(atoms)
    for number in _NUMBER.findall(_POINT.sub(" ", text)):
        atom = next(
            (
                a
                for a in unread
                if a == number or (a.startswith(number) and a[len(number) :].isalpha())
            ),
            None,
        )
        if atom is None:
            return False
        unread.remove(atom)
    return True
