"""Extraction on CUAD: the span that answers a clause question, found in the contract.

    .venv/bin/python -m benchmarks.extraction [--kind txt|pdf] [--contracts N] [--fit]

Needs the contract indexes benchmarks/contracts.py builds (benchmarks/out/contracts/index-txt
and index-pdf). For every contract and every CUAD category, the question is the category's
description (CUAD_v1_README.txt) and the document is the contract; `lexkb.answers.extract`
returns its best spans (k=3) or "no answer".

- found@1: the first span overlaps a lawyer-marked clause of that category with token F1 >= 0.5;
  Recall@3: one of the first three does; over the (contract, category) pairs that have a clause.
- no answer: precision and recall of "no answer" over the pairs whose category the contract
  lacks. extract answers when the best paragraph's relevance reaches `min_relevance`, or when
  the question asks for a title, the parties or the document's date and its head says them.
- With and without the relevance model, same run: `extract(..., rerank=True)` (the model
  reorders the first sentences, lexkb.answers.extract.reranked) next to `rerank=False`; seconds
  per question for each (the search extract makes included).
- Baseline, same run: the contract's sentence with the best BM25 score for the question (bm25s
  over that contract's sentences), which always answers.
- `--clause-type`: also, for the pairs with a clause, `extract(..., clause_type=category)` (a
  reviewer naming the clause's type): the paragraphs labelled with it first. The index's labels
  came from heads fitted on every CUAD contract, so here they are replaced by those of heads
  fitted on the other half alone (benchmarks/clause_head_fit.py, thresholds chosen in its folds).

Contracts are split by sha256 of their key: `--fit` picks extract's `min_relevance` (the no-answer
threshold) on the even half by no-answer F1 over all pairs; the report is on the odd half.
CUAD's other half (the team's held-out set) is not read.
"""

from __future__ import annotations

import argparse
import re
import time
from collections import defaultdict
from pathlib import Path

import bm25s
import numpy as np
import polars as pl

from evaluation_data.cuad import clauses, contract_key, descriptions, tune_half
from lexkb import Index
from lexkb.answers.extract import MIN_RELEVANCE, extract, head_values
from lexkb.answers.passages.statements import split_sentences
from lexkb.answers.passages.typed import kind_asked

REPO = Path(__file__).resolve().parent.parent


_WORD = re.compile(r"\w+")
FOUND_F1 = 0.5
THRESHOLDS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def token_f1(a: str, b: str) -> float:
    x, y = words(a), words(b)
    if not x or not y:
        return 0.0
    common = sum(min(x.count(w), y.count(w)) for w in set(x) & set(y))
    if not common:
        return 0.0
    precision, recall = common / len(x), common / len(y)
    return 2 * precision * recall / (precision + recall)


def matches(span: str, gold: list[str]) -> bool:
    return any(token_f1(span, g) >= FOUND_F1 for g in gold)


def bm25_best_sentence(question: str, sentences: list[str], retriever_cache: dict, key: str) -> str:
    if key not in retriever_cache:
        retriever = bm25s.BM25()
        retriever.index(
            bm25s.tokenize(sentences, stopwords="en", show_progress=False), show_progress=False
        )
        retriever_cache[key] = retriever
    retriever = retriever_cache[key]
    tokens = bm25s.tokenize([question], stopwords="en", show_progress=False)
    if not tokens.vocab:
        return sentences[0]
    ids, _ = retriever.retrieve(tokens, k=1, show_progress=False)
    return sentences[int(ids[0][0])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared/data"))
    parser.add_argument("--kind", choices=("txt", "pdf"), default="txt")
    parser.add_argument("--contracts", type=int, default=None, help="contracts per half, at most")
    parser.add_argument("--fit", action="store_true")
    parser.add_argument(
        "--clause-type", action="store_true", help="also name the clause type (labels held out)"
    )
    args = parser.parse_args()
    data = Path(args.data)
    root = REPO / f"benchmarks/out/contracts/index-{args.kind}"
    index = Index.open(root)
    questions = descriptions(data)
    gold: dict[tuple[str, str], list[str]] = defaultdict(list)
    for clause in clauses(data):
        gold[(clause.contract, clause.category)].append(clause.text)
    documents = {contract_key(d["document_key"]): d["document_key"] for d in index.documents()}
    half = [k for k in sorted(documents) if tune_half(k) == args.fit]
    if args.contracts:
        half = half[: args.contracts]
    if args.clause_type:
        index.annotations.clauses = held_out_labels(root, data, set(half))
    typed: dict[tuple[str, str], list[str]] = {}
    # (contract, category, has_gold, top relevance, lexkb spans with the model, baseline
    # sentence, top confidence, head answered, lexkb spans without the model)
    rows = []
    cache: dict = {}
    seconds = {True: 0.0, False: 0.0}
    for key in half:
        document = documents[key]
        _, paragraphs = index.document_paragraphs(document)
        texts = paragraphs["content"].to_list()
        sentences = [t[a:b] for t in texts for a, b in split_sentences(t) if t[a:b].strip()] or [""]
        for category, question in questions.items():
            results = {}
            for rerank in (False, True):
                started = time.perf_counter()
                results[rerank] = extract(
                    index, question, document=document, k=3, min_relevance=0.0, rerank=rerank
                )
                seconds[rerank] += time.perf_counter() - started
            result = results[True]
            top = max((a.confidence for a in result.answers), default=0.0)
            relevance = index.search(
                question, k=1, filters={"document": document}, min_relevance=0.0
            )
            best = relevance.hits[0].relevance if relevance.hits else 0.0
            # What extract answers even under its threshold: a value read at the document's head.
            head = bool(head_values(index, kind_asked(question), document))
            if args.clause_type and gold.get((key, category)):
                named = extract(index, question, document=document, k=3, min_relevance=0.0,
                                clause_type=category)  # fmt: skip
                typed[(key, category)] = [a.text for a in named.answers]
            rows.append((key, category, bool(gold.get((key, category))), best,
                         [a.text for a in result.answers], bm25_best_sentence(question, sentences, cache, key), top, head,
                         [a.text for a in results[False].answers]))  # fmt: skip
    if args.fit:
        print(f"tune half: {len(half)} contracts, {len(rows)} pairs")
        print_found(rows, gold, seconds)
        print("min_relevance  no-answer P  R  F1  (tune half)")
        for t in THRESHOLDS:
            p, r, f = no_answer(rows, t)
            print(f"  {t:.2f}  {p:.3f}  {r:.3f}  {f:.3f}")
        return
    report(rows, gold, MIN_RELEVANCE, args.kind, len(half), seconds)
    if typed:
        found1 = [bool(t) and matches(t[0], gold[pair]) for pair, t in typed.items()]
        recall3 = [any(matches(s, gold[pair]) for s in t[:3]) for pair, t in typed.items()]
        print(f"\nwith the clause type named (labels of heads fitted on the other half), "
              f"{len(typed)} pairs: found@1 {np.mean(found1):.3f}, Recall@3 {np.mean(recall3):.3f}")  # fmt: skip


def held_out_labels(root: Path, data: Path, reported: set[str]) -> pl.DataFrame:
    """(chunk_id, clause_type): the CUAD categories of the `reported` contracts' paragraphs as
    heads fitted on the other contracts label them (benchmarks/clause_head_fit.py), in place of
    the build's, whose heads saw every contract."""
    from benchmarks.clause_head_fit import fitted, load_contracts
    from evaluation_data.cuad import categories

    names = categories(data)
    contracts = load_contracts(root, data, names)
    heads, thresholds = fitted([c for c in contracts if c["key"] not in reported], names)
    rows = []
    for contract in (c for c in contracts if c["key"] in reported):
        taken = heads(contract) >= thresholds
        for paragraph, column in zip(*np.nonzero(taken), strict=True):
            rows.append((contract["chunk_ids"][paragraph], names[column]))
    return pl.DataFrame(
        rows, schema={"chunk_id": pl.String, "clause_type": pl.String}, orient="row"
    )


def print_found(rows, gold, seconds) -> None:
    """found@1 and Recall@3 with the model and without it, and seconds per question."""
    present = [r for r in rows if r[2]]
    print("| extract | found@1 | Recall@3 | s / question |")
    print("|---|---|---|---|")
    for name, at, rerank in (("with the model", 4, True), ("without the model", 8, False)):
        found1 = [bool(r[at]) and matches(r[at][0], gold[(r[0], r[1])]) for r in present]
        recall3 = [any(matches(s, gold[(r[0], r[1])]) for s in r[at][:3]) for r in present]
        print(f"| {name} | {np.mean(found1):.3f} | {np.mean(recall3):.3f} | {seconds[rerank] / len(rows):.3f} |")  # fmt: skip


def no_answer(rows, threshold: float) -> tuple[float, float, float]:
    predicted = [r[3] < threshold and not r[7] for r in rows]
    absent = [not r[2] for r in rows]
    tp = sum(p and a for p, a in zip(predicted, absent, strict=True))
    precision = tp / sum(predicted) if sum(predicted) else 0.0
    recall = tp / sum(absent) if sum(absent) else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def report(rows, gold, threshold: float, kind: str, contracts: int, seconds) -> None:
    present = [r for r in rows if r[2]]
    answered = [r for r in present if r[3] >= threshold or r[7]]
    found1 = [bool(r[4]) and matches(r[4][0], gold[(r[0], r[1])]) for r in present]
    found1_answered = [bool(r[4]) and matches(r[4][0], gold[(r[0], r[1])]) for r in answered]
    recall3 = [any(matches(s, gold[(r[0], r[1])]) for s in r[4][:3]) for r in present]
    baseline = [matches(r[5], gold[(r[0], r[1])]) for r in present]
    p, r_, f = no_answer(rows, threshold)
    print(
        f"CUAD {kind}, held-out half: {contracts} contracts, {len(rows)} pairs, {len(present)} with a clause"
    )
    without1 = [bool(r[8]) and matches(r[8][0], gold[(r[0], r[1])]) for r in present]
    without3 = [any(matches(s, gold[(r[0], r[1])]) for s in r[8][:3]) for r in present]
    without_answered = [bool(r[8]) and matches(r[8][0], gold[(r[0], r[1])]) for r in answered]
    print("| measure | lexkb extract, with the model | without the model | BM25 best sentence |")
    print("|---|---|---|---|")
    print(f"| found@1 (token F1 >= {FOUND_F1}) | {np.mean(found1):.3f} | {np.mean(without1):.3f} | {np.mean(baseline):.3f} |")  # fmt: skip
    print(f"| Recall@3 | {np.mean(recall3):.3f} | {np.mean(without3):.3f} | - |")
    print(f"| found@1 where lexkb answers | {np.mean(found1_answered):.3f} ({len(answered)}) | {np.mean(without_answered):.3f} | - |")  # fmt: skip
    print(
        f"| no-answer precision / recall / F1 (min_relevance {threshold}) | {p:.3f} / {r_:.3f} / {f:.3f} | the same | never abstains |"
    )
    print(f"| seconds per question (extract) | {seconds[True] / len(rows):.3f} | {seconds[False] / len(rows):.3f} | - |")  # fmt: skip
    by_category: dict[str, list[bool]] = defaultdict(list)
    for row, hit in zip(present, found1, strict=True):
        by_category[row[1]].append(hit)
    print("\nfound@1 by category (pairs), with the model:")
    for category, hits in sorted(by_category.items(), key=lambda kv: -np.mean(kv[1])):
        print(f"  {np.mean(hits):.2f} ({len(hits)})  {category}")


if __name__ == "__main__":
    main()
