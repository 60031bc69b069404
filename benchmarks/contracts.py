"""Contracts (CUAD) built from PDF and from TXT, next to unstructured's raw elements, in one run.

    .venv/bin/python -m benchmarks.contracts [--data ../shared/data] [--work benchmarks/out/contracts]
        [--skip-baseline] [--reuse] [--kinds txt,pdf] [--folds 5] [--structure-only]
        [--failures FILE --fold N ...]

For each source kind (the 255 TXT contracts, the 43 PDFs), `lexkb build --embedder none` once,
then, over its paragraph chunks (from the snapshot, or from the staged tables when a check
blocked the publish):
- documents published, paragraphs per contract, paragraph length p50 / p90 / p99, contracts
  with a paragraph over 5,000 characters;
- clause localisation against the lawyer-marked clauses of `master_clauses-dev.csv` (spans of
  at least 40 characters): the share held whole by one paragraph, the median of clause length
  over the length of the paragraph holding it, and the share "localised" (held, and at least
  25% of its paragraph). Texts are compared with whitespace collapsed, without case or typographic quotes.
- word F1 of the PDF build against the TXT CUAD ships for the same contract (bags of lower-cased
  words; the build's words are its paragraphs, headings and title);
- pages per second of the PDF build (wall clock of the whole `lexkb build`);
- structure faults a reader sees in citations: sections titled by a page number ("-10-"),
  numbered clauses filed under a recitals heading ("RECITALS > Section 8"), which holds only
  the recitals that come before the first clause, and section titles that run on into their
  clause's first sentence ("TERMS OF PAYMENT. The royalties payable to Licensor"), whose
  words are then missing from the clause.

Cross-validation by contract: the contracts are dealt into `--folds` folds by a fixed seed (the
same fold for a contract's TXT and PDF), and localisation is reported per fold and as the mean
over folds, beside the figure on all contracts. Structure rules are code, not fitted numbers, so
the folds are how a rule's effect is judged on contracts it was not chosen on: `--failures FILE
--fold N` writes the spans that miss (with the paragraphs nearest to them) of the folds named
only, to read while choosing a rule, and the other folds are the ones to report.
`--structure-only` skips `lexkb build` and structures each file in this process with the build's
own steps (`document_elements`, `structure_document`): the same paragraphs in seconds, for
localisation only.

The baseline is unstructured's own elements, each taken as a paragraph: `partition_text` on the
TXT and `partition_pdf(strategy="fast")` on the PDF, as installed (with lexkb's offline spaCy
stand-in, without which the fast strategy returns nothing here).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import subprocess
import time
from collections import Counter
from pathlib import Path

import polars as pl

from evaluation_data import cuad
from transforms.structure import RECITALS_HEADING

REPO = Path(__file__).resolve().parent.parent


LONG = 5000
MIN_CLAUSE = 40
LOCALISED = 0.25
FOLDS = 5
FOLD_SEED = 48
_WORD = re.compile(r"\w+")
_RUN_ON_TITLE = re.compile(r"[a-zA-Z]{2}\.\s+[A-Z][a-z]+\s+[a-z]")
_PAGE_NUMBER_TITLE = re.compile(r"^[-–(\[]?\s*(?:page\s*)?\d{1,4}\s*[-–)\]]?$", re.IGNORECASE)

# What lexkb puts before a contract heading's printed number: an attachment's name and
# "Section" ("Exhibit F Section 1.2" is printed "1.2").
_ADDED_LABEL = re.compile(
    r"^(?:(?:Schedule|Exhibit|Annex|Appendix|Attachment|Addendum) \S+ (?=Section|Article))?"
    r"(?:Section (?=\d))?"
)


def build(sources: Path, root: Path, reuse: bool) -> tuple[dict, float]:
    if reuse and (root / "CURRENT").is_file():
        return {"reused": True}, float("nan")
    if root.exists():
        shutil.rmtree(root)
    started = time.perf_counter()
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
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    try:
        return json.loads(out.stdout.strip().splitlines()[-1]), seconds
    except (json.JSONDecodeError, IndexError):
        return {"error": (out.stderr or out.stdout)[-2000:]}, seconds


def built_units(root: Path) -> tuple[dict[str, list[str]], dict[str, list[str]], int]:
    """contract_key -> paragraph texts, contract_key -> headings and title, pages; from the
    published snapshot, else from the tables the build staged."""
    from lexkb import Index

    try:
        snapshot = Index.open(root).snapshot
        read = lambda name: pl.read_parquet(snapshot.table_path(name))  # noqa: E731
    except Exception:
        staged = root / "work" / "tables"
        read = lambda name: pl.read_parquet(staged / f"{name}.parquet")  # noqa: E731
    return units_from_tables(read("documents"), read("sections"), read("chunks"))


def units_from_tables(
    documents: pl.DataFrame, sections: pl.DataFrame, chunks: pl.DataFrame
) -> tuple[dict[str, list[str]], dict[str, list[str]], int]:
    key_of = {
        d: cuad.contract_key(s) for d, s in documents.select("document_id", "source_name").rows()
    }
    paragraphs: dict[str, list[str]] = {}
    for doc, content in (
        chunks.filter(pl.col("chunk_level") == "paragraph").select("document_id", "content").rows()
    ):
        paragraphs.setdefault(key_of[doc], []).append(content)
    # Headings as the page prints them: the number (without the "Section " lexkb adds to a
    # bare "2.1") and the title. The document's title counts when no heading holds it.
    other: dict[str, list[str]] = {}
    for doc, number, title in sections.select("document_id", "section_number", "title").rows():
        printed = re.sub(_ADDED_LABEL, "", number or "")
        other.setdefault(key_of[doc], []).append(f"{printed} {title or ''}")
    for doc, title in documents.select("document_id", "title").rows():
        if not any(title in heading for heading in other.get(key_of[doc], [])):
            other.setdefault(key_of[doc], []).append(title)
    pages = int(documents["page_count"].fill_null(0).sum())
    return paragraphs, other, pages


def structure_faults(root: Path) -> dict:
    """Sections titled by a page number, and numbered clauses under a recitals heading (with
    the contracts that have any), from the published snapshot or the staged tables."""
    from lexkb import Index

    try:
        sections = pl.read_parquet(Index.open(root).snapshot.table_path("sections"))
    except Exception:
        sections = pl.read_parquet(root / "work" / "tables" / "sections.parquet")
    titles = [title for title in sections["title"].to_list() if title]
    page_titled = sum(1 for title in titles if _PAGE_NUMBER_TITLE.match(title))
    run_on = sum(1 for title in titles if _RUN_ON_TITLE.search(title))
    under_recitals, contracts = 0, set()
    for doc, number, path in sections.select("document_id", "section_number", "path").rows():
        if number and any(RECITALS_HEADING.match(step) for step in path[:-1]):
            under_recitals += 1
            contracts.add(doc)
    return {
        "page_number_sections": page_titled,
        "run_on_titles": run_on,
        "clauses_under_recitals": under_recitals,
        "contracts_with_clauses_under_recitals": len(contracts),
    }


def raw_units(files: dict[str, Path]) -> dict[str, list[str]]:
    from transforms.reading import offline_nlp

    offline_nlp.install()
    from unstructured.partition.pdf import partition_pdf
    from unstructured.partition.text import partition_text

    units = {}
    for key, path in files.items():
        if path.suffix.lower() == ".pdf":
            elements = partition_pdf(str(path), strategy="fast", languages=["eng"])
        else:
            elements = partition_text(filename=str(path))
        units[key] = [e.text for e in elements if e.text and e.text.strip()]
    return units


def shape(paragraphs: dict[str, list[str]]) -> dict:
    lengths = sorted(len(p) for texts in paragraphs.values() for p in texts)
    if not lengths:
        return {}

    def pct(q: float) -> int:
        return lengths[min(len(lengths) - 1, int(q * len(lengths)))]

    counts = [len(texts) for texts in paragraphs.values()]
    return {
        "contracts": len(paragraphs),
        "paragraphs_median": statistics.median(counts),
        "paragraphs_mean": round(statistics.mean(counts), 1),
        "p50": pct(0.5),
        "p90": pct(0.9),
        "p99": pct(0.99),
        "with_long": sum(1 for texts in paragraphs.values() if any(len(p) > LONG for p in texts)),
    }


def localisation(paragraphs: dict[str, list[str]], clauses: list[cuad.Clause]) -> dict:
    squeezed = {key: [cuad.squeeze(p) for p in texts] for key, texts in paragraphs.items()}
    ratios, held, total = [], 0, 0
    localised = 0
    for clause in clauses:
        if clause.contract not in squeezed:
            continue
        total += 1
        needle = cuad.squeeze(clause.text)
        holders = [p for p in squeezed[clause.contract] if needle in p]
        if not holders:
            continue
        held += 1
        ratio = len(needle) / min(len(p) for p in holders)
        ratios.append(ratio)
        localised += ratio >= LOCALISED
    return {
        "clauses": total,
        "held": round(held / total, 3) if total else None,
        "median_ratio": round(statistics.median(ratios), 3) if ratios else None,
        "localised": round(localised / total, 3) if total else None,
    }


def folds_of(keys: list[str], folds: int) -> dict[str, int]:
    """contract_key -> its fold (0 .. folds - 1): the sorted keys shuffled by a fixed seed and
    dealt in turn, so every fold has as many contracts as can be."""
    order = sorted(keys)
    random.Random(FOLD_SEED).shuffle(order)
    return {key: i % folds for i, key in enumerate(order)}


def cross_validated(
    paragraphs: dict[str, list[str]], clauses: list[cuad.Clause], fold_of: dict[str, int]
) -> dict:
    """Localisation on each fold's contracts, their mean and spread, and on all contracts."""
    folds = max(fold_of.values()) + 1
    per = [
        localisation(
            {k: v for k, v in paragraphs.items() if fold_of.get(k) == fold},
            [c for c in clauses if fold_of.get(c.contract) == fold],
        )["localised"]
        for fold in range(folds)
    ]
    scored = [value for value in per if value is not None]
    return {
        "folds": per,
        "mean": round(statistics.mean(scored), 3) if scored else None,
        "stdev": round(statistics.stdev(scored), 3) if len(scored) > 1 else None,
        "all": localisation(paragraphs, clauses)["localised"],
    }


def failures(
    paragraphs: dict[str, list[str]], clauses: list[cuad.Clause], keys: set[str]
) -> list[dict]:
    """The spans of the contracts in `keys` that are not localised, each with the paragraph
    holding it, or else the paragraphs holding its first and its last 40 characters."""
    found = []
    for clause in clauses:
        if clause.contract not in keys or clause.contract not in paragraphs:
            continue
        needle = cuad.squeeze(clause.text)
        texts = paragraphs[clause.contract]
        squeezed = [cuad.squeeze(p) for p in texts]
        holders = [i for i, p in enumerate(squeezed) if needle in p]
        if holders:
            best = min(holders, key=lambda i: len(squeezed[i]))
            if len(needle) / len(squeezed[best]) >= LOCALISED:
                continue
            found.append({**_span(clause), "fault": "small", "paragraphs": [texts[best]]})
            continue
        ends = {needle[:40], needle[-40:]}
        near = [texts[i] for i, p in enumerate(squeezed) if any(end in p for end in ends)]
        found.append({**_span(clause), "fault": "split", "paragraphs": near})
    return found


def _span(clause: cuad.Clause) -> dict:
    return {"contract": clause.contract, "category": clause.category, "span": clause.text}


def structured_units(files: dict[str, Path]) -> dict[str, list[str]]:
    """contract_key -> paragraph texts, from the build's own parse and structure steps run in
    this process (no index, no checks, no vectors)."""
    from transforms.reading.elements import document_elements
    from transforms.reading.source_files import discover
    from transforms.structure import structure_document

    units = {}
    for key, path in files.items():
        source = discover([path])[0]
        _, _, chunks = structure_document(source, document_elements(source))
        units[key] = chunks.filter(pl.col("chunk_level") == "paragraph")["content"].to_list()
    return units


def words(texts: list[str]) -> Counter:
    return Counter(w.casefold() for text in texts for w in _WORD.findall(text))


def word_f1(ours: dict[str, list[str]], reference: dict[str, str]) -> dict:
    tp = got = want = 0
    per = []
    for key, text in reference.items():
        a, b = words(ours.get(key, [])), words([text])
        overlap = sum((a & b).values())
        tp, got, want = tp + overlap, got + sum(a.values()), want + sum(b.values())
        per.append(2 * overlap / (sum(a.values()) + sum(b.values()) or 1))
    return {
        "micro_f1": round(2 * tp / (got + want), 4) if got + want else None,
        "mean_f1": round(statistics.mean(per), 4) if per else None,
        "worst_f1": round(min(per), 4) if per else None,
    }


def row(name: str, published: str, s: dict, loc: dict, f1: str, speed: str) -> str:
    return (
        f"| {name} | {published} | {s.get('paragraphs_median', '–')} / "
        f"{s.get('paragraphs_mean', '–')} | {s.get('p50', '–')} / {s.get('p90', '–')} / "
        f"{s.get('p99', '–')} | {s.get('with_long', '–')} of {s.get('contracts', '–')} "
        f"| {loc.get('held')} | {loc.get('median_ratio')} | {loc.get('localised')} | {f1} "
        f"| {speed} |"
    )


def lexkb_row(
    kind: str, files: dict[str, Path], args: argparse.Namespace, reference: dict[str, str]
) -> tuple[dict[str, list[str]], str, str, str, dict | None]:
    """The paragraphs of one kind's contracts, what was published, word F1, time and faults:
    from `lexkb build`, or with `--structure-only` from the structure steps alone."""
    if args.structure_only:
        started = time.perf_counter()
        paragraphs = structured_units(files)
        seconds = time.perf_counter() - started
        return paragraphs, "structure only", "–", f"{seconds:.0f} s (structure only)", None
    root = args.work / f"index-{kind.lower()}"
    report, seconds = build(args.data / "cuad" / kind.lower(), root, args.reuse)
    paragraphs, other, pages = built_units(root)
    published = (
        "reused"
        if report.get("reused")
        else f"{len(paragraphs)} of {len(files)}"
        + (f", BLOCKED: {', '.join(report['blocked'])}" if report.get("blocked") else "")
        + (f", ERROR {report['error'][-300:]!r}" if report.get("error") else "")
    )
    quarantined = report.get("quarantined") or report.get("skipped") or {}
    if quarantined:
        published += f", {len(quarantined)} quarantined"
    f1 = "–"
    speed = f"{seconds:.0f} s"
    if kind == "PDF":
        merged = {k: paragraphs.get(k, []) + other.get(k, []) for k in files}
        score = word_f1(merged, reference)
        f1 = f"{score['micro_f1']} / {score['mean_f1']} / {score['worst_f1']}"
        speed += f", {pages / seconds:.1f} pages/s" if seconds == seconds else ""
    return paragraphs, published, f1, speed, structure_faults(root)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "out" / "contracts")
    parser.add_argument("--skip-baseline", action="store_true")
    parser.add_argument("--reuse", action="store_true", help="reuse built roots under --work")
    parser.add_argument("--kinds", default="txt,pdf", help="source kinds to build: txt, pdf")
    parser.add_argument("--folds", type=int, default=FOLDS, help="cross-validation folds")
    parser.add_argument(
        "--structure-only", action="store_true", help="structure in-process, no lexkb build"
    )
    parser.add_argument("--failures", type=Path, help="write the misses of --fold to this JSONL")
    parser.add_argument(
        "--fold", type=int, action="append", default=[], help="a fold (1-based) for --failures"
    )
    args = parser.parse_args()
    if args.folds < 2:
        parser.error("--folds: at least 2")
    args.work.mkdir(parents=True, exist_ok=True)
    clauses = cuad.clauses(args.data, MIN_CLAUSE)
    txt_files = cuad.files(args.data, "txt")
    pdf_files = cuad.files(args.data, "pdf")
    reference = {
        key: txt_files[key].read_text(encoding="utf-8", errors="replace") for key in pdf_files
    }
    fold_of = folds_of(list(txt_files) + list(pdf_files), args.folds)
    shown = {key for key, fold in fold_of.items() if fold + 1 in args.fold}

    print(
        "| system | published | paragraphs per contract (median / mean) | length p50 / p90 / "
        "p99 | contracts with a paragraph > 5,000 | clauses held by one paragraph | median "
        "clause / paragraph | localised (>= 25%) | word F1 vs TXT (micro / mean / worst) "
        "| build |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    faults, validated, missed = {}, {}, []
    kinds = {kind.strip().upper() for kind in args.kinds.split(",")}
    for kind, files in (("TXT", txt_files), ("PDF", pdf_files)):
        if kind not in kinds:
            continue
        paragraphs, published, f1, speed, found = lexkb_row(kind, files, args, reference)
        if found is not None:
            faults[kind] = found
        validated[f"lexkb, {kind}"] = cross_validated(paragraphs, clauses, fold_of)
        missed += [{"kind": kind, **miss} for miss in failures(paragraphs, clauses, shown)]
        loc = localisation(paragraphs, clauses)
        print(row(f"lexkb, {kind}", published, shape(paragraphs), loc, f1, speed), flush=True)
        if not args.skip_baseline:
            started = time.perf_counter()
            raw = raw_units(files)
            seconds = time.perf_counter() - started
            f1 = "–"
            if kind == "PDF":
                score = word_f1(raw, reference)
                f1 = f"{score['micro_f1']} / {score['mean_f1']} / {score['worst_f1']}"
            validated[f"unstructured raw, {kind}"] = cross_validated(raw, clauses, fold_of)
            print(
                row(
                    f"unstructured raw, {kind}",
                    "–",
                    shape(raw),
                    localisation(raw, clauses),
                    f1,
                    f"{seconds:.0f} s (partition only)",
                ),
                flush=True,
            )
    heads = " | ".join(f"fold {fold + 1}" for fold in range(args.folds))
    print(f"\n| localised, {args.folds} folds by contract | {heads} | mean (sd) | all |")
    print("| --- |" + " --- |" * (args.folds + 2))
    for name, cv in validated.items():
        cells = " | ".join("–" if value is None else f"{value:.3f}" for value in cv["folds"])
        print(f"| {name} | {cells} | {cv['mean']:.3f} ({cv['stdev']:.3f}) | {cv['all']:.3f} |")
    if args.failures:
        args.failures.write_text("".join(json.dumps(miss) + "\n" for miss in missed))
        print(f"\n{len(missed)} misses of folds {sorted(args.fold)} in {args.failures}")
    if faults:
        print(
            "\n| lexkb | sections titled by a page number | numbered clauses under a recitals "
            "heading (contracts) | section titles running on into their clause |"
        )
        print("| --- | --- | --- | --- |")
    for kind, found in faults.items():
        print(
            f"| {kind} | {found['page_number_sections']} | {found['clauses_under_recitals']} "
            f"({found['contracts_with_clauses_under_recitals']}) | {found['run_on_titles']} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
