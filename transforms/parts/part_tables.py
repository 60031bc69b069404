"""One part of a partitioned build: its tables, BM25 postings, vectors, citations and checks.

Everything here reads the part's own sources and the plan's documents rows (a few hundred
bytes a document), never another part's chunks, so the step's memory is set by the part's size
(transforms.parts.plan.MAX_CHUNKS). It does what the one-process build's whole-corpus steps do
(assets.index_tables, assets.embeddings), for the part's rows: the same functions, so the rows, terms,
vectors and labels are the ones that build gives them. What needs the whole corpus waits for
the merge (transforms.parts.merge): BM25's document frequencies, citations that may land in
another part, topics, the catalog of standards.

A part whose identity (transforms.parts.plan) matches the one its folder was written for is not
built again: a rebuild after one document changed redoes one part.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import polars as pl

from lexkb.core.embed.embedders import Embedder
from transforms.edges import citation_cache, resolve
from transforms.indexing.bm25 import terms_by_hash, tokens_of
from transforms.indexing.chunk_embeddings import (
    CHUNK_VECTORS,
    LINE_VECTORS,
    embed_chunks,
    embedder_record,
)
from transforms.parts import cross_edges, shard_files
from transforms.parts.plan import PartPlan, Plan, plan_dir
from transforms.publishing import checks_worker
from transforms.publishing import table_checks as tc
from transforms.publishing.snapshot_tables import with_duplicate_sources
from transforms.publishing.workdir import WorkDir
from transforms.reading import source_files as src
from transforms.reading.source_parts import PartMissing
from transforms.structure import inferred
from transforms.structure.clauses import clause_table
from transforms.structure.defined_terms import definition_table

IDENTITY_FILE = "identity"
REPORT_FILE = "report.json"
DOCUMENTS_FILE = "documents.parquet"
CLAUSES_FILE = "clauses.parquet"
DEFINITIONS_FILE = "definitions.parquet"
TOKENS_FILE = "tokens.parquet"


@dataclass(frozen=True)
class PartReport:
    """What one part step did: its rows, whether it was reused, the texts it gave the model,
    its checks (suite -> failing expectations, empty when all passed), and the embedder's
    record (None for a keyword-only build)."""

    name: str
    chunks: int
    documents: int
    reused: bool
    embedded: int
    citations_pending: int
    seconds: float
    failed_checks: dict[str, list[str]]
    embedder: dict | None


def part_path(work: WorkDir, name: str) -> Path:
    return plan_dir(work) / "parts" / name


def cache_path(work: WorkDir, name: str) -> Path:
    """The part's own caches (terms, vectors, citations): no two parts write one file."""
    return plan_dir(work) / "cache" / name


def build_part(
    work: WorkDir,
    plan: Plan,
    planned: pl.DataFrame,
    part: PartPlan,
    embedder: Embedder | None,
) -> PartReport:
    """Build `part` into its folder (part_path), or keep the folder when it was built from the
    same inputs. `planned`: the plan's documents rows (transforms.parts.plan.load_plan)."""
    target = part_path(work, part.name)
    report_file = target / REPORT_FILE
    identity_file = target / IDENTITY_FILE
    if identity_file.is_file() and identity_file.read_text(encoding="utf-8") == part.identity:
        kept = json.loads(report_file.read_text(encoding="utf-8"))
        return PartReport(**{**kept, "reused": True, "embedded": 0, "seconds": 0.0})
    started = time.perf_counter()
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    cache = cache_path(work, part.name)
    cache.mkdir(parents=True, exist_ok=True)
    sources = {s.key: s for s in src.from_frame(pl.read_parquet(work.sources))}
    frames = []
    for key in part.sources:
        if (frame := work.read_part(key)) is None:  # planned, so structured
            raise PartMissing(key)
        frames.append(frame)
    sections = pl.concat([f[1] for f in frames])
    chunks = pl.concat([f[2] for f in frames])
    own = planned.filter(pl.col("document_id").is_in(part.documents))
    documents = inferred.infer(own, chunks)
    documents = with_duplicate_sources(documents, [sources[k] for k in part.sources])
    keys = dict(zip(documents["document_id"], documents["document_key"], strict=True))
    chunks = chunks.with_columns(
        pl.col("document_id")
        .replace_strict(keys, default=pl.col("document_key"))
        .alias("document_key")
    )
    terms = _terms(cache, chunks)
    tables = {"sections": sections, "chunks": chunks}
    embedded, record = 0, None
    if embedder is not None:
        vectors, lines, stats = embed_chunks(
            chunks, embedder, cache / "embeddings", seed_dir=work.path / "embeddings"
        )
        embedded, record = stats["embedded"], embedder_record(embedder, stats["dimension"])
    else:
        vectors, lines = pl.DataFrame(schema=CHUNK_VECTORS), pl.DataFrame(schema=LINE_VECTORS)
    tables |= {"embeddings": vectors, "line_embeddings": lines}
    shard_files.write_part(target, tables, terms, record["dimension"] if record else None)
    documents.write_parquet(target / DOCUMENTS_FILE)
    clause_table(chunks, documents, cache / "embeddings", embed=embedder is not None).write_parquet(
        target / CLAUSES_FILE
    )
    definition_table(chunks).write_parquet(target / DEFINITIONS_FILE)
    citations = _citations(cache, chunks, planned, plan.aliases)
    citations.write_parquet(target / cross_edges.CITATIONS_FILE)
    cross_edges.units(chunks).write_parquet(target / cross_edges.UNITS_FILE)
    report = PartReport(
        name=part.name,
        chunks=chunks.height,
        documents=documents.height,
        reused=False,
        embedded=embedded,
        citations_pending=int((citations["status"] == cross_edges.PENDING).sum()),
        seconds=round(time.perf_counter() - started, 2),
        failed_checks=_checks(documents, sections, chunks, vectors, lines, record),
        embedder=record,
    )
    report_file.write_text(json.dumps(asdict(report)), encoding="utf-8")
    identity_file.write_text(part.identity, encoding="utf-8")  # last: the folder is whole
    return report


def _terms(cache: Path, chunks: pl.DataFrame) -> pl.Series:
    """The chunks' BM25 terms, tokenizing only texts the part's last build did not keep."""
    file = cache / TOKENS_FILE
    kept = pl.read_parquet(file) if file.is_file() else None
    hashes = chunks["content_hash"].to_list()
    terms = tokens_of(chunks["content"].to_list(), hashes, kept)
    terms_by_hash(hashes, terms).write_parquet(file)
    return terms


def _citations(
    cache: Path, chunks: pl.DataFrame, documents: pl.DataFrame, aliases: dict[str, str]
) -> pl.DataFrame:
    """The part's citations (transforms.parts.cross_edges), its paragraphs' readings kept by content
    hash under the grammar of every document's names (transforms.edges.citation_cache)."""
    stamp = citation_cache.grammar_stamp(resolve.grammar_names(documents, aliases))
    readings = citation_cache.load(cache, stamp)
    found = cross_edges.part_citations(chunks, documents, aliases, readings)
    citation_cache.save(cache, stamp, readings)
    return found


def _checks(
    documents: pl.DataFrame,
    sections: pl.DataFrame,
    chunks: pl.DataFrame,
    vectors: pl.DataFrame,
    lines: pl.DataFrame,
    embedder: dict | None,
) -> dict[str, list[str]]:
    """The Great Expectations suites the one-process build runs on whole tables
    (assets.checks), on the part's: each is about rows of one document or chunk, so the parts
    passing is the corpus passing. Suite -> its failing expectations."""
    results = [
        checks_worker.run(tc.check_chunks, chunks),
        checks_worker.run(tc.check_sections, sections),
        checks_worker.run(tc.check_documents, documents, chunks),
        checks_worker.run(
            tc.check_embeddings,
            tc.vector_measures(vectors.select("chunk_id", "vector")),
            tc.vector_measures(lines),
            chunks.select("chunk_id", "chunk_level"),
            embedder,
        ),
    ]
    return {
        result.suite: [
            f"{e.description} ({e.unexpected_count} rows: {e.failing_rows[:3]})"
            for e in result.failures()
        ]
        for result in results
        if not result.success
    }
