"""The corpus in parts: runs of whole documents, each of bounded size, for a partitioned build.

A partitioned build (pipelines.partitioned) runs every whole-corpus step once per part, so a
worker's memory is set by the part's size and not by the corpus. Planning reads each source's
structure one at a time and keeps only its documents row: what every part must agree on (the
catalog's metadata, readable keys, the aliases they give) is decided here, once, over rows
that are a few hundred bytes a document.

Parts are runs of documents in the sources' order, so the shards of a snapshot concatenated
in part order are the rows a one-process build gives. A part closes before the document that
would take it past `max_chunks` (a document larger than that is a part of its own). Each part
carries an identity: a hash of everything its outputs are made from, so a rebuild redoes only
the parts whose identity changed (transforms.parts.part_tables).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import polars as pl

from lexkb.core.text.tokenize import TOKENIZER_VERSION
from transforms.publishing.workdir import Part, WorkDir, code_version
from transforms.reading import metadata
from transforms.reading import source_files as src
from transforms.reading.plausibility import drop_implausible
from transforms.reading.quarantine import refused_records
from transforms.reading.source_parts import each_part
from transforms.structure import document_keys

# Chunks (all levels) a part holds at most: about 40 MB of tables and 60 MB of vectors at the
# local embedder's 384 dimensions, and the part step's peak stays near 1 GB (docs/scaling.md).
MAX_CHUNKS = 20_000
PLAN_DIR = "partitioned"
PLAN_FILE = "plan.json"
DOCUMENTS_FILE = "documents.parquet"


@dataclass(frozen=True)
class PartPlan:
    """One part: its name (p0000, ... in row order), its sources and documents in order, its
    chunk count, and the identity of its inputs."""

    name: str
    sources: list[str]
    documents: list[str]
    chunks: int
    identity: str


@dataclass(frozen=True)
class Plan:
    """The parts of a build, what every part shares, and the sources left out."""

    parts: list[PartPlan]
    aliases: dict[str, str]
    quarantined: list[dict]
    ignored: dict[str, str]
    metadata_errors: dict[str, str]

    def part(self, name: str) -> PartPlan:
        return next(p for p in self.parts if p.name == name)


def plan_dir(work: WorkDir) -> Path:
    return work.path / PLAN_DIR


def make_plan(
    work: WorkDir, catalog_paths: list[str], max_chunks: int = MAX_CHUNKS, salt: str = ""
) -> Plan:
    """Plan the parts of the sources the last scan found, reading one source's part at a time,
    and write the plan and the documents every part shares under ROOT/work/partitioned.
    `salt`: what else a part's outputs depend on (the embedder), folded into its identity."""
    sources = src.from_frame(pl.read_parquet(work.sources))
    scan = json.loads(work.scan_report.read_text(encoding="utf-8"))
    catalog = metadata.load(catalog_paths, [s.path for s in sources])
    quarantined = refused_records(scan["refused"])
    rows: list[pl.DataFrame] = []
    sizes: list[int] = []
    kept: list[src.SourceFile] = []
    batch: list[tuple[src.SourceFile, Part]] = []

    def check(batch: list[tuple[src.SourceFile, Part]]) -> list[dict]:
        """The plausibility suite over a batch of parts at once (one suite run per batch, not
        per file), keeping their documents rows and sizes."""
        plausible, failing = drop_implausible(
            [part for _, part in batch], {s.key: s.sha256 for s, _ in batch}
        )
        good = {id(part) for part in plausible}
        for source, part in batch:
            if id(part) in good:
                rows.append(metadata.apply(part[0], catalog))
                sizes.append(part[2].height)
                kept.append(source)
        return failing

    held = 0
    for source, part in each_part(work, sources):
        if isinstance(part, list):
            quarantined += part
            continue
        batch.append((source, part))
        held += part[2].height
        if held >= max_chunks:
            quarantined += check(batch)
            batch, held = [], 0
    if batch:
        quarantined += check(batch)
    documents = pl.concat(rows) if rows else pl.DataFrame()
    if rows:
        documents, _, aliases = document_keys.readable(
            documents, pl.DataFrame({"document_id": [], "document_key": []}), catalog.aliases
        )
    else:
        aliases = {}
    parts = _runs(kept, documents, sizes, max_chunks, salt)
    plan = Plan(parts, dict(sorted(aliases.items())), quarantined, scan["ignored"], catalog.errors)
    target = plan_dir(work)
    target.mkdir(parents=True, exist_ok=True)
    documents.write_parquet(target / DOCUMENTS_FILE)
    (target / PLAN_FILE).write_text(json.dumps(asdict(plan), indent=1), encoding="utf-8")
    return plan


def _runs(
    sources: list[src.SourceFile],
    documents: pl.DataFrame,
    sizes: list[int],
    max_chunks: int,
    salt: str,
) -> list[PartPlan]:
    """Consecutive sources grouped until the next would pass `max_chunks`."""
    groups: list[list[int]] = []
    total = 0
    for n, size in enumerate(sizes):
        if not groups or (total + size > max_chunks and total > 0):
            groups.append([])
            total = 0
        groups[-1].append(n)
        total += size
    by_source = documents.partition_by("source_name", as_dict=True, maintain_order=True)
    parts = []
    for number, members in enumerate(groups):
        keys = [sources[n].key for n in members]
        rows = pl.concat([by_source[(key,)] for key in keys])
        parts.append(
            PartPlan(
                name=f"p{number:04d}",
                sources=keys,
                documents=rows["document_id"].to_list(),
                chunks=sum(sizes[n] for n in members),
                identity=_identity([sources[n] for n in members], rows, salt),
            )
        )
    return parts


def _identity(sources: list[src.SourceFile], documents: pl.DataFrame, salt: str) -> str:
    """What a part's outputs are made from: its sources' bytes, its documents' rows as planned
    (catalog metadata and keys included), the code and the tokenizer, and `salt`."""
    digest = hashlib.sha256(f"{code_version()} {TOKENIZER_VERSION} {salt}".encode())
    for source in sources:
        digest.update(f"{source.key}\0{source.sha256}\n".encode())
    digest.update(documents.write_json().encode())
    return digest.hexdigest()


def load_plan(work: WorkDir) -> tuple[Plan, pl.DataFrame]:
    """The plan `make_plan` wrote, and the planned documents rows."""
    target = plan_dir(work)
    raw = json.loads((target / PLAN_FILE).read_text(encoding="utf-8"))
    parts = [PartPlan(**part) for part in raw.pop("parts")]
    return Plan(parts=parts, **raw), pl.read_parquet(target / DOCUMENTS_FILE)
