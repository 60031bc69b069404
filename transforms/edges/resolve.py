"""Resolving citations to chunks: the citation-edge graph of a snapshot.

Each paragraph is read with `lexkb.core.text.citations`; every cited unit is looked up in the
document it names, or in the citing document. Notes are not read: footnotes, amendment histories,
source credits and editorial notes are the document's apparatus ("Pub. L. 105-225, §2(a)", "set
out as a note under section 101"), not provisions citing provisions. Read as edges, they were
30 of 32 "cited by" entries of a US Code section, and half of a title's edges. Lookup tries the exact address, then the
address without its grouping units (FSMR "section 58" is "Part 6.Chapter 1.58."), then the nearest
enclosing unit that exists ("18.5.1(a)" lands on 18.5.1, "Rule 18.5" on the section). A citation
that names something not found is kept with a null target, so a reader can see what is missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from lexkb.core.store.schema import EDGES, polars_schema
from lexkb.core.text.citations import Citation, CitationParser, Parsed
from lexkb.core.text.refs import core_address, document_names, ref_address

_SOURCE_LEVELS = ("paragraph",)
_TARGET_LEVELS = ("paragraph", "section")
# How much a hop along an edge is worth, by how the target was found.
WEIGHTS = {"exact": 1.0, "enclosing": 0.7}
EDGE_TYPES = ("internal", "external", "outside", "unresolved")
_DEFINED_IN = re.compile(r"\b(?:defined|definitions?|meaning (?:given|assigned))\b[^.;]{0,60}$")
# The longest text `_DEFINED_IN` can match ("meaning assigned" and 60 characters), with room: it
# is searched in this many characters before a citation, not in all of the paragraph before it
# (which made the search quadratic in a long paragraph's citations).
_DEFINED_IN_REACH = 120
_DOTTED_NUMBER = re.compile(r"\d+[A-Z]?(?:\.\d+[A-Z]?)+")
# Names too generic to mark a citation as naming a document.
_MIN_ALIAS_CHARS = 2


@dataclass(frozen=True)
class _Target:
    row: int
    match: str


class _RefTable:
    """Chunk rows of one document by address: paragraphs first, then section chunks."""

    def __init__(self) -> None:
        self.full: dict[tuple[str, ...], list[int]] = {}
        self.core: dict[tuple[str, ...], list[int]] = {}

    def add(self, address: tuple[str, ...], row: int) -> None:
        if not address:
            return
        self.full.setdefault(address, []).append(row)
        core = core_address(address)
        if core != address:
            self.core.setdefault(core, []).append(row)

    def exact(self, address: tuple[str, ...]) -> list[int]:
        return self.full.get(address) or self.core.get(address) or []


def name_key(name: str) -> str:
    """Names match whatever their case and spacing ("the FSMR", "Financial Services AND ...")."""
    return " ".join(name.split()).casefold()


def _usable(name: str) -> bool:
    return len(name) >= _MIN_ALIAS_CHARS and not name.replace(".", "").isdigit()


def document_name_pairs(documents: pl.DataFrame, extra: Mapping[str, str]) -> list[tuple[str, str]]:
    """(name as written, document id) for every name a citation may use for a document.

    Names come from the documents table (lexkb.core.text.refs.document_names: key, title, short name and
    the aliases the catalog and sidecars give) and from the catalog's alias table (`extra`: name
    -> document key).
    """
    by_key = dict(zip(documents["document_key"], documents["document_id"], strict=True))
    pairs = [
        (name, doc["document_id"])
        for doc in documents.iter_rows(named=True)
        for name in document_names(
            doc["document_key"],
            doc["title"],
            doc["short_name"],
            doc["aliases"] or [],
            doc.get("parties") or [],
        )
    ]
    pairs += [(name, by_key[key]) for name, key in extra.items() if key in by_key]
    return [(name, doc_id) for name, doc_id in pairs if _usable(name)]


def name_table(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Name key -> the document ids it can mean; a name two documents share maps to both."""
    names: dict[str, list[str]] = {}
    for name, doc_id in pairs:
        ids = names.setdefault(name_key(name), [])
        if doc_id not in ids:
            ids.append(doc_id)
    return names


def grammar_names(documents: pl.DataFrame, extra_aliases: Mapping[str, str]) -> list[str]:
    """The document names the citation grammar of these documents knows."""
    return [name for name, _ in document_name_pairs(documents, extra_aliases)]


@dataclass(frozen=True)
class CitedIn:
    """One citation as a source paragraph makes it, with what resolving it needs: the citing
    chunk's row, id, document and reference, the documents to try after the citing one
    (`fallbacks`), and whether the text before it says "defined in"."""

    row: int
    chunk_id: str
    doc_id: str
    ref: str | None
    citation: Citation
    fallbacks: list[str]
    relation: str


# What resolving a citation gave: (target chunk id, target document id, how it matched), or
# None to drop the citation (transforms.edges.resolve.Resolver.resolve).
Resolution = tuple[str | None, str | None, str] | None


def build_edges(
    chunks: pl.DataFrame,
    documents: pl.DataFrame,
    extra_aliases: Mapping[str, str] | None = None,
    readings: dict[str, Parsed] | None = None,
) -> pl.DataFrame:
    """The edges table (lexkb.core.store.schema.EDGES) for a snapshot's chunks.

    `readings`: paragraphs' citations by content hash, as read with this grammar before
    (transforms.edges.citation_cache); a paragraph found there is not read again. Afterwards it holds
    the readings of exactly these chunks' paragraphs."""
    names = name_table(document_name_pairs(documents, extra_aliases or {}))
    resolver = Resolver(chunks)
    cited = citations_in(chunks, documents, extra_aliases, readings)
    return edge_frame(
        (
            item,
            resolver.resolve(item.citation, item.row, item.doc_id, item.ref, names, item.fallbacks),
        )
        for item in cited
    )


def citations_in(
    chunks: pl.DataFrame,
    documents: pl.DataFrame,
    extra_aliases: Mapping[str, str] | None = None,
    readings: dict[str, Parsed] | None = None,
) -> list[CitedIn]:
    """Every citation of the source paragraphs of `chunks`, in row order; a
    paragraph's own number printed at its start is none. `readings` as in `build_edges`."""
    pairs = document_name_pairs(documents, extra_aliases or {})
    names = name_table(pairs)
    parser: CitationParser | None = None
    kept = readings if readings is not None else {}
    current: dict[str, Parsed] = {}
    by_key = dict(zip(documents["document_key"], documents["document_id"], strict=True))
    refers_to = {
        doc_id: [by_key[key] for key in keys or [] if key in by_key]
        for doc_id, keys in documents.select("document_id", "refers_to").rows()
    }
    found: list[CitedIn] = []
    # Readings are kept by content hash; frames built by hand may lack it, and use the text.
    identity = "content_hash" if "content_hash" in chunks.columns else "content"
    columns = chunks.select(
        "chunk_id", "document_id", "chunk_level", "ref", "content", pl.col(identity).alias("key")
    ).rows()
    for row, (chunk_id, doc_id, level, ref, content, key) in enumerate(columns):
        if level not in _SOURCE_LEVELS:
            continue
        own = ref_address(ref) if ref else ()
        # An unqualified citation that the citing document lacks is read in the documents the
        # paragraph names, the nearest before it first ("Rule 4.3.1 of the Rulebook ... under
        # Rule 4.3.3"), then in those the catalog says this one refers to.
        parsed = kept.get(key) or current.get(key)
        if parsed is None:
            parser = parser or CitationParser(name for name, _ in pairs)
            parsed = parser.parse(content)
        current[key] = parsed
        for citation in parsed.citations:
            if citation.bare and citation.address == own and not content[: citation.start].strip():
                continue  # the paragraph's own number, printed at its start
            fallbacks = _named_near(parsed.documents, citation.start, names, doc_id)
            fallbacks += refers_to.get(doc_id, [])
            before = content[max(0, citation.start - _DEFINED_IN_REACH) : citation.start]
            relation = "defined-in" if _DEFINED_IN.search(before) else "cites"
            found.append(CitedIn(row, chunk_id, doc_id, ref, citation, fallbacks, relation))
    if readings is not None:
        readings.clear()
        readings.update(current)
    return found


def edge_frame(resolved: Iterable[tuple[CitedIn, Resolution]]) -> pl.DataFrame:
    """Edges from citations in row order and their resolutions: a dropped citation makes
    none, and a chunk cites each target (or each unresolved text) once."""
    rows: list[dict] = []
    seen: set[tuple[str, str | None, str]] = set()
    for item, edge in resolved:
        if edge is None:
            continue
        target_id, target_doc, match = edge
        key = (item.chunk_id, target_id, item.citation.text if target_id is None else "")
        if key in seen:
            continue
        seen.add(key)
        if target_id is None:
            kind = "outside" if item.citation.outside else "unresolved"
        else:
            kind = "internal" if target_doc == item.doc_id else "external"
        rows.append(
            {
                "source_chunk_id": item.chunk_id,
                "target_chunk_id": target_id,
                "source_document_id": item.doc_id,
                "target_document_id": target_doc,
                "reference_text": item.citation.text,
                "cited_document": item.citation.document,
                "reference_type": kind,
                "relation": item.relation,
                "match": match,
                "weight": WEIGHTS.get(match, 0.0),
            }
        )
    return pl.from_dicts(rows, schema=polars_schema(EDGES))


def _named_near(
    named: Sequence[tuple[int, str]], at: int, names: Mapping[str, list[str]], doc_id: str
) -> list[str]:
    before = [name for start, name in reversed(named) if start < at]
    after = [name for start, name in named if start >= at]
    ids = [d for name in before + after for d in names.get(name_key(name), [])]
    return [d for d in dict.fromkeys(ids) if d != doc_id]


class Resolver:
    """Cited units found by address in the target chunks (paragraphs and sections) of
    `chunks`: all of a snapshot's, or, with a `row` column, some documents' rows of a larger
    one (transforms.parts.cross_edges)."""

    def __init__(self, chunks: pl.DataFrame) -> None:
        rows = chunks["row"].to_list() if "row" in chunks.columns else range(chunks.height)
        self._ids: dict[int, str] = {}
        self._doc_of: dict[int, str] = {}
        self._tables: dict[str, tuple[_RefTable, _RefTable]] = {}
        # The deepest dotted number each document uses ("18.5.1" is 3).
        self._depth: dict[str, int] = {}
        for row, (chunk_id, doc_id, level, ref) in zip(
            rows, chunks.select("chunk_id", "document_id", "chunk_level", "ref").rows(), strict=True
        ):
            if level not in _TARGET_LEVELS or not ref:
                continue
            self._ids[row], self._doc_of[row] = chunk_id, doc_id
            if dotted := _DOTTED_NUMBER.search(ref):
                depth = dotted.group().count(".") + 1
                self._depth[doc_id] = max(self._depth.get(doc_id, 0), depth)
            paragraphs, section_table = self._tables.setdefault(doc_id, (_RefTable(), _RefTable()))
            (paragraphs if level == "paragraph" else section_table).add(ref_address(ref), row)

    def add(self, other: Resolver) -> None:
        """Take in `other`'s units, of documents none of this one's: then this one resolves as
        one over both's chunks would, since a citation is looked up in each of its candidate
        documents' own units (transforms.parts.cross_edges joins one per document)."""
        self._ids.update(other._ids)
        self._doc_of.update(other._doc_of)
        self._tables.update(other._tables)
        self._depth.update(other._depth)

    def resolve(
        self,
        citation: Citation,
        row: int,
        doc_id: str,
        ref: str | None,
        names: Mapping[str, list[str]],
        fallbacks: Sequence[str] = (),
    ) -> tuple[str | None, str | None, str] | None:
        """(target chunk id, target document id, how it matched) or None to drop the citation."""
        documents = candidate_documents(citation, doc_id, names, fallbacks)
        if documents is None:
            return None, None, "none"
        # Exact units first, in every document the citation may mean: a unit the paragraph's
        # named documents or `refers_to` hold wins over a mere neighbour in the citing one.
        for enclosing in (False, True):
            for document in documents:
                if enclosing and document == doc_id and self._foreign(citation, doc_id):
                    continue
                source_ref = ref if document == doc_id else None
                found = self._find(citation, document, row, source_ref, enclosing)
                if found is not None:
                    return self._ids[found.row], document, found.match
        if citation.bare:
            return None  # an unnamed number that matches nothing is most likely not a reference
        return None, (documents[0] if citation.document else None), "none"

    def _foreign(self, citation: Citation, doc_id: str) -> bool:
        """True when an unqualified citation is numbered deeper than anything in the citing
        document ("Rule 3.1.1" in a note numbered 3.1, 3.2): it belongs to another numbering
        scheme, so the note's own 3.1 is no enclosing unit of it."""
        if citation.document is not None or citation.relative:
            return False
        dotted = _DOTTED_NUMBER.search(citation.text)
        return dotted is not None and dotted.group().count(".") + 1 > self._depth.get(doc_id, 0)

    def _find(
        self,
        citation: Citation,
        doc_id: str,
        row: int,
        source_ref: str | None,
        enclosing: bool = True,
    ) -> _Target | None:
        tables = self._tables.get(doc_id)
        if tables is None or not citation.address:
            return None
        # (anchor length, address): a relative citation is tried inside the citing unit's
        # ancestors, nearest first ("paragraph 1" in Article 6(3) is Article 6(1)).
        candidates = [(0, citation.address)]
        if citation.relative and source_ref:
            own = ref_address(source_ref)
            top = len(own) if citation.anchor == "point" else len(own) - 1
            candidates = [(cut, own[:cut] + citation.address) for cut in range(top, -1, -1)]
        if not enclosing:
            for _, address in candidates:
                for variant in _variants(address):
                    if rows := _lookup(tables, variant):
                        return _Target(self._nearest(rows, row, doc_id), "exact")
            return None
        # "18.5.1(a)" may land on 18.5.1 or 18.5, never on chapter 18; a relative citation never
        # climbs out of what it names, except that a point of the citing paragraph is the
        # paragraph itself.
        for anchor, address in candidates:
            shortest = 2 if citation.bare or len(citation.address) >= 3 else 1
            shortest = max(shortest, anchor + (0 if citation.anchor == "point" and anchor else 1))
            for length in range(len(address) - 1, shortest - 1, -1):
                for variant in _variants(address[:length]):
                    if rows := _lookup(tables, variant):
                        return _Target(self._nearest(rows, row, doc_id), "enclosing")
        return None

    def _nearest(self, rows: Sequence[int], row: int, doc_id: str) -> int:
        """The row nearest the citing one (`row`, of document `doc_id`), its own document's
        first."""
        return min(rows, key=lambda r: (self._doc_of[r] != doc_id, abs(r - row)))


def candidate_documents(
    citation: Citation, doc_id: str, names: Mapping[str, list[str]], fallbacks: Sequence[str]
) -> list[str] | None:
    """The documents a citation of document `doc_id` may mean, in the order they are tried;
    None for an act outside the index or a name no document goes by."""
    if citation.outside or (citation.document and name_key(citation.document) not in names):
        return None
    if citation.document is not None:
        documents = names.get(name_key(citation.document), [])
        if doc_id in documents:
            documents = [doc_id] + [d for d in documents if d != doc_id]
        return documents
    if citation.bare or citation.relative:
        return [doc_id]
    return list(dict.fromkeys([doc_id, *fallbacks]))


def _lookup(tables: tuple[_RefTable, _RefTable], address: tuple[str, ...]) -> list[int]:
    paragraphs, sections = tables
    return paragraphs.exact(address) or sections.exact(address)


def _variants(address: tuple[str, ...]) -> Iterable[tuple[str, ...]]:
    """The address as cited, then with "Chapter 3" or "Part 3" read as plain "3" (rulebooks
    number their chapters as bare sections)."""
    yield address
    stripped = tuple(re.sub(r"^(?:chapter|part)(?=\d)", "", atom) for atom in address)
    if stripped != address:
        yield stripped


def summary(edges: pl.DataFrame) -> dict[str, float]:
    """Counts a person checks after a build: edges by type and the share that resolved."""
    counts = dict(edges.group_by("reference_type").len().rows())
    internal_or_external = counts.get("internal", 0) + counts.get("external", 0)
    attempted = internal_or_external + counts.get("unresolved", 0)
    return {
        "edges": edges.height,
        **{f"edges_{kind}": counts.get(kind, 0) for kind in EDGE_TYPES},
        "resolution_rate": round(internal_or_external / attempted, 4) if attempted else 1.0,
    }


def most_unresolved(edges: pl.DataFrame, top: int = 10) -> list[tuple[str, int]]:
    """The references cited most often that resolved to nothing, with how often: the aliases
    or grammar a corpus is missing."""
    return (
        edges.filter(pl.col("reference_type") == "unresolved")
        .group_by("reference_text")
        .len()
        .sort("len", descending=True)
        .head(top)
        .rows()
    )
