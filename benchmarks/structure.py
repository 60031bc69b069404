"""Structure recovery against ground truth, next to unstructured's raw elements, in one run.

    .venv/bin/python -m benchmarks.structure [--data ../shared/data] [--work benchmarks/out/structure]

1. GDPR from its PDF and its DOCX, scored against the official Formex XML (562 units: numbered
   paragraphs, articles without numbered paragraphs, recitals; 99 article titles). A unit is
   found when a paragraph chunk has its ref and its text (similarity >= 0.9 after whitespace
   normalisation; the leading number is part of both). Read from snapshots built by `lexkb build`.
   The baseline takes unstructured's elements naively: an element "Article N" opens an article,
   the element after it is its title, an element starting "n." is paragraph n, "(n)" before the
   first article is recital n.
2. The 40 ObliQA plain-text documents, scored against the structured passages of the same
   documents: a passage is recovered when a paragraph chunk of its document has its PassageID as
   ref and its text (similarity >= 0.9, after dropping a leading copy of the label).
3. Every file in samples/: built, never skipped, with its extraction quality.
4. Speed: unstructured's own partition of each PDF and DOCX, then lexkb's whole ingest of the same
   file (partition, element frame, structure), each timed in this process, best of two runs so
   that one-off imports do not count.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import tarfile
import time
from pathlib import Path

import polars as pl
from rapidfuzz.fuzz import ratio

from evaluation_data.gdpr import load as load_gdpr
from evaluation_data.gdpr import normalize
from evaluation_data.obliqa import document_map

REPO = Path(__file__).resolve().parent.parent


THRESHOLD = 90.0
_ARTICLE = re.compile(r"^Article (\d+)$")
_PARAGRAPH = re.compile(r"^(\d{1,3})\.\s")
_RECITAL = re.compile(r"^\((\d{1,3})\)\s")


def build(sources: Path, root: Path) -> dict:
    if root.exists():
        shutil.rmtree(root)
    out = subprocess.run(
        [
            str(REPO / ".venv/bin/lexkb"),
            "build",
            str(sources),
            "--out",
            str(root),
            "--embedder",
            "none",
            "--json",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def snapshot_tables(root: Path) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    from lexkb import Index

    snapshot = Index.open(root).snapshot
    return tuple(
        pl.read_parquet(snapshot.table_path(name)) for name in ("documents", "sections", "chunks")
    )


# GDPR --------------------------------------------------------------------------------------
def score_units(found: dict[str, str], titles_found: dict[str, str], units, titles) -> dict:
    hits = sum(
        1
        for unit in units
        if unit.ref in found and ratio(normalize(found[unit.ref]), unit.text) >= THRESHOLD
    )
    right_titles = sum(1 for n, t in titles.items() if normalize(titles_found.get(n, "")) == t)
    return {"units": hits, "of_units": len(units), "titles": right_titles, "of_titles": len(titles)}


def gdpr_lexkb(chunks: pl.DataFrame, sections: pl.DataFrame, units, titles) -> dict:
    paragraphs = chunks.filter(pl.col("chunk_level") == "paragraph")
    found = dict(zip(paragraphs["ref"], paragraphs["content"], strict=True))
    titles_found = {
        number.removeprefix("Article "): title
        for number, title in zip(sections["section_number"], sections["title"], strict=True)
        if number and number.startswith("Article ")
    }
    return score_units(found, titles_found, units, titles)


def gdpr_naive(texts: list[str], units, titles) -> dict:
    found: dict[str, str] = {}
    titles_found: dict[str, str] = {}
    article = None
    for index, text in enumerate(texts):
        text = text.strip()
        if match := _ARTICLE.match(text):
            article = match.group(1)
            if index + 1 < len(texts):
                titles_found.setdefault(article, texts[index + 1].strip())
        elif article and (match := _PARAGRAPH.match(text)):
            found.setdefault(f"Article {article}({match.group(1)})", text)
        elif article is None and (match := _RECITAL.match(text)):
            found.setdefault(f"Recital {match.group(1)}", text)
    return score_units(found, titles_found, units, titles)


# ObliQA plain text ----------------------------------------------------------------------------
def obliqa_names(data: Path) -> dict[int, str]:
    return {doc_id: names[0] for doc_id, names in document_map(data).items()}


def extract_obliqa_text(data: Path, target: Path) -> dict[str, int]:
    """Text files under names lexkb reads ("<DocumentID>.txt"); one arrives as `.txt"`."""
    names = obliqa_names(data)

    def key(name: str) -> str:
        return re.sub(r"[^a-z0-9]", "", name.casefold())

    from rapidfuzz import process

    choices = {doc: key(name) for doc, name in names.items()}
    mapping: dict[str, int] = {}
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    with tarfile.open(data / "regulatory-documents-txt.tar.gz") as archive:
        for member in archive.getmembers():
            if not member.isfile() or ".txt" not in member.name:
                continue
            stem = Path(member.name).name.split(".txt")[0]
            _, _, doc = process.extractOne(key(stem), choices, scorer=ratio)
            (target / f"{doc:02d}.txt").write_bytes(archive.extractfile(member).read())
            mapping[stem] = doc
    return mapping


def obliqa_passages(data: Path) -> dict[int, list[dict]]:
    import zipfile

    passages: dict[int, list[dict]] = {}
    with zipfile.ZipFile(data / "StructuredRegulatoryDocuments.zip") as archive:
        for name in archive.namelist():
            if name.endswith(".json") and not name.startswith("__MACOSX"):
                for passage in json.loads(archive.read(name)):
                    if normalize(passage["Passage"]):
                        passages.setdefault(int(passage["DocumentID"]), []).append(passage)
    return passages


def obliqa_recovered(chunks: pl.DataFrame, passages: dict[int, list[dict]]) -> dict[int, tuple]:
    paragraphs = chunks.filter(pl.col("chunk_level") == "paragraph")
    ours: dict[tuple[int, str], str] = {}
    for key, ref, content in paragraphs.select("document_key", "ref", "content").rows():
        if ref:
            text = normalize(content)
            text = text.removeprefix(ref).strip() if text.startswith(ref + " ") else text
            ours.setdefault((int(key), ref.rstrip(".")), text)
    result = {}
    for doc, gold in passages.items():
        found = 0
        for passage in gold:
            text = ours.get((doc, passage["PassageID"].strip().rstrip(".")))
            if text is not None and ratio(text, normalize(passage["Passage"])) >= THRESHOLD:
                found += 1
        result[doc] = (found, len(gold))
    return result


# speed ----------------------------------------------------------------------------------------
def raw_partition(path: Path) -> tuple[list, float]:
    from transforms.reading import offline_nlp

    offline_nlp.install()
    started = time.perf_counter()
    if path.suffix == ".pdf":
        from unstructured.partition.pdf import partition_pdf

        elements = partition_pdf(str(path), strategy="fast", languages=["eng"])
    else:
        from unstructured.partition.docx import partition_docx

        elements = partition_docx(str(path))
    return elements, time.perf_counter() - started


def lexkb_ingest(path: Path) -> tuple[pl.DataFrame, float]:
    from transforms.reading.elements import document_elements
    from transforms.reading.source_files import discover
    from transforms.structure import structure_document

    source = discover([path])[0]
    started = time.perf_counter()
    documents, _, _ = structure_document(source, document_elements(source))
    return documents, time.perf_counter() - started


def _rate(pages: int | None, seconds: float) -> str:
    return f"{pages / seconds:.1f}" if pages else "–"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "out" / "structure")
    args = parser.parse_args()
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)

    # Raw partitions first, while unstructured is exactly as installed.
    files = [args.data / "gdpr" / "gdpr-en.pdf", args.data / "gdpr" / "gdpr-en.docx"]
    files += sorted(p for p in (args.data / "samples").iterdir() if p.suffix in (".pdf", ".docx"))
    raw = {
        path: min((raw_partition(path) for _ in range(2)), key=lambda run: run[1]) for path in files
    }

    print("## Speed: unstructured's partition vs lexkb's whole ingest, same process\n")
    print("| file | pages | unstructured s | pages/s | lexkb s | pages/s | overhead |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    totals = [0.0, 0.0]
    for path in files:
        _, raw_seconds = raw[path]
        documents, ours_seconds = min((lexkb_ingest(path) for _ in range(2)), key=lambda r: r[1])
        pages = documents["page_count"][0]
        totals[0] += raw_seconds
        totals[1] += ours_seconds
        print(
            f"| {path.name} | {pages or '–'} | {raw_seconds:.2f} | {_rate(pages, raw_seconds)} "
            f"| {ours_seconds:.2f} | {_rate(pages, ours_seconds)} "
            f"| {100 * (ours_seconds / raw_seconds - 1):+.0f}% |"
        )
    print(
        f"| all | | {totals[0]:.2f} | | {totals[1]:.2f} | "
        f"| {100 * (totals[1] / totals[0] - 1):+.0f}% |\n"
    )

    units, titles = load_gdpr(args.data / "gdpr" / "gdpr-en.xml")
    print(f"## GDPR: {len(units)} units, {len(titles)} article titles (Formex XML)\n")
    print("| source | system | units found | article titles right |")
    print("| --- | --- | --- | --- |")
    for path in files[:2]:
        folder = work / f"gdpr-{path.suffix[1:]}"
        folder.mkdir(exist_ok=True)
        shutil.copy(path, folder / path.name)
        build(folder, work / f"index-gdpr-{path.suffix[1:]}")
        _, sections, chunks = snapshot_tables(work / f"index-gdpr-{path.suffix[1:]}")
        ours = gdpr_lexkb(chunks, sections, units, titles)
        naive = gdpr_naive([e.text for e in raw[path][0]], units, titles)
        for name, score in (("lexkb", ours), ("unstructured raw, naive", naive)):
            print(
                f"| {path.name} | {name} | {score['units']}/{score['of_units']} "
                f"({100 * score['units'] / score['of_units']:.1f}%) "
                f"| {score['titles']}/{score['of_titles']} |"
            )

    print("\n## Samples: every file built, with its extraction quality\n")
    report = build(args.data / "samples", work / "index-samples")
    documents, _, chunks = snapshot_tables(work / "index-samples")
    print(f"skipped: {report['quarantined'] or 'none'}\n")
    print("| document | format | pages | sections | paragraphs | extraction quality |")
    print("| --- | --- | --- | --- | --- | --- |")
    for row in documents.sort("extraction_quality", descending=True).iter_rows(named=True):
        print(
            f"| {row['source_name']} | {row['format']} | {row['page_count'] or '–'} "
            f"| {row['section_count']} | {row['chunk_count']} | {row['extraction_quality']:.3f} |"
        )

    print("\n## ObliQA plain text: structured PassageIDs recovered as refs with their text\n")
    text_dir = work / "obliqa-txt"
    extract_obliqa_text(args.data / "obliqa", text_dir)
    report = build(text_dir, work / "index-obliqa-txt")
    documents, _, chunks = snapshot_tables(work / "index-obliqa-txt")
    passages = obliqa_passages(args.data / "obliqa")
    recovered = obliqa_recovered(chunks, passages)
    quality = dict(zip(documents["document_key"], documents["extraction_quality"], strict=True))
    print("| DocumentID | passages | recovered | share | extraction quality |")
    print("| --- | --- | --- | --- | --- |")
    for doc in sorted(recovered):
        found, total = recovered[doc]
        score = quality.get(f"{doc:02d}")
        print(
            f"| {doc} | {total} | {found} | {found / total:.3f} "
            f"| {'skipped' if score is None else f'{score:.3f}'} |"
        )
    found = sum(f for f, _ in recovered.values())
    total = sum(t for _, t in recovered.values())
    built = [doc for doc in recovered if f"{doc:02d}" in quality]
    found_built = sum(recovered[d][0] for d in built)
    total_built = sum(recovered[d][1] for d in built)
    print(f"\nall passages: {found}/{total} = {found / total:.3f}")
    print(
        f"documents with text ({len(built)} of {len(recovered)}): "
        f"{found_built}/{total_built} = {found_built / total_built:.3f}"
    )
    print(f"skipped: {report['quarantined'] or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
