"""The relevance model on CUAD's clause categories, next to the keyword baseline (issue 37,
item 3), in two ways:

    .venv/bin/python -m benchmarks.clause_model --model training/out/rel-clauses.onnx
    .venv/bin/python -m benchmarks.clause_model --asked [--depth 8]

`--model`: its clause head (`training/export.py --with-clauses`; the shipped file leaves the
head out, since it did not beat the fitted heads): each paragraph of the TXT contracts index
(benchmarks/contracts.py) read alone, one chance per CUAD category. `--asked`: the shipped model
asked each category's CUAD description as a question of a contract's paragraphs, the first
`--depth` a hybrid search of the description within the contract finds (the others read 0).
Thresholds are chosen on the tune half's `valid` contracts (training/cuad_examples.py: never
trained on), per category where they hold at least three marked clauses, else one threshold for
all; the held-out half is reported with benchmarks/classify.py's measure, so its figures compare
with that benchmark's rows (the fitted heads: 0.400 held-out). `--with-heads` (with `--asked`)
also fits benchmarks/clause_head_fit.py's heads on the tune half, as classify.py does, and
reports them and a choice per category between the two: the model asked where its F1 on the
valid contracts beats the heads' out-of-fold F1 on the tune half.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np

from benchmarks.classify import evaluate, keyword_baseline, macro
from evaluation_data.cuad import (
    categories,
    contract_key,
    descriptions,
    marked_by_contract,
    overlaps,
    squeeze,
)
from training.cuad_examples import digest, split_of

REPO = Path(__file__).resolve().parent.parent


GRID = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
MIN_CLAUSES = 3


def contracts(root: Path, data: Path, names: list[str]) -> list[dict]:
    """The valid contracts and the held-out half: paragraph texts and, per category, the
    paragraphs each marked clause overlaps (as benchmarks/classify.py reads them)."""
    from lexkb import Index

    marked = marked_by_contract(data)
    index = Index.open(root)
    found = []
    for document in index.documents():
        key = contract_key(document["document_key"])
        if split_of(key) == "train":
            continue
        _, frame = index.document_paragraphs(document["document_key"])
        texts = [t for t in frame["content"].to_list() if t.strip()]
        squeezed = [squeeze(t) for t in texts]
        holds = {}
        for name in names:
            spans = [squeeze(s) for s in marked.get(key, {}).get(name, [])]
            holds[name] = [
                [j for j, p in enumerate(squeezed) if overlaps(s, p)] for s in spans if len(s) >= 10
            ]
        found.append(
            {"key": key, "document": document["document_key"], "texts": texts, "holds": holds}
        )
    return sorted(found, key=lambda c: c["key"])


def clause_reader(model: Path) -> Callable[[list[str]], np.ndarray]:
    """A function of texts -> (texts x categories) from the graph's `clauses` output, each text
    read alone; the graph and tokenizer are loaded once, here."""
    import onnxruntime
    from tokenizers import Tokenizer

    from lexkb.core.embed.embedders import local_model_files

    session = onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(local_model_files()[1]))
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)

    def chances(texts: list[str]) -> np.ndarray:
        rows = []
        for item in tokenizer.encode_batch(texts):
            ids = np.array([item.ids], np.int64)
            feeds = {"ids": ids, "segments": np.zeros_like(ids), "mask": np.ones_like(ids)}
            rows.append(session.run(["clauses"], feeds)[0][0])
        return 1.0 / (1.0 + np.exp(-np.array(rows, np.float32)))

    return chances


def asked_reader(root: Path, questions: list[str], depth: int) -> Callable[[dict], np.ndarray]:
    """A function of a contract -> (paragraphs x questions): the shipped relevance model's
    chance that each of the first `depth` paragraphs a hybrid search of the question finds in
    the contract answers it; 0 for the paragraphs not found."""
    from lexkb import Index
    from lexkb.core.judge.shipped import answers

    index = Index.open(root)

    def chances(contract: dict) -> np.ndarray:
        row_of = {}
        for row, text in enumerate(contract["texts"]):
            row_of.setdefault(text, row)
        read = np.zeros((len(contract["texts"]), len(questions)), np.float32)
        for column, question in enumerate(questions):
            hits = index.search(
                question, k=depth, filters={"document": contract["document"]}, min_relevance=0.0
            ).hits
            found = [(row_of[h.text], h.text) for h in hits if h.text in row_of]
            if found:
                rows, texts = zip(*found, strict=True)
                read[list(rows), column] = answers(question, list(texts))
        return read

    return chances


def with_heads(args, names, held, labels, read, own, asked_valid) -> None:
    """The heads fitted on the tune half (as benchmarks/classify.py fits them), and per category
    the better of the two by what each showed on contracts it did not fit on."""
    from benchmarks.clause_head_fit import fitted, load_contracts

    every = {c["key"]: c for c in load_contracts(args.root, args.data, names)}
    tune = [c for key, c in every.items() if digest(key) % 2 == 0]
    heads, thresholds = fitted(tune, names)
    scored = {key: heads(every[key]) >= thresholds for key in every}
    heads_oof = {n: max(heads.out_of_fold.get(n, (0.0, 0.0))) for n in names}
    use_asked = np.array([asked_valid.get(n, (0, 0, 0.0))[2] > heads_oof[n] for n in names])
    chosen = {c["key"]: np.where(use_asked, read[c["key"]] >= own, scored[c["key"]]) for c in held}
    print(f"| heads fitted on the tune half | | {macro(evaluate(held, labels, lambda c: scored[c['key']])):.3f} |")  # fmt: skip
    print(f"| per category, asked or heads ({int(use_asked.sum())} asked) | | {macro(evaluate(held, labels, lambda c: chosen[c['key']])):.3f} |")  # fmt: skip
    print("asked for: " + ", ".join(n for n, a in zip(names, use_asked, strict=True) if a))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="a relevance model with its clause head")
    parser.add_argument("--asked", action="store_true", help="ask the shipped model instead")
    parser.add_argument("--depth", type=int, default=8, help="paragraphs asked, with --asked")
    parser.add_argument("--with-heads", action="store_true", help="and the fitted heads")
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument(
        "--root", type=Path, default=REPO / "benchmarks" / "out" / "contracts" / "index-txt"
    )
    args = parser.parse_args()
    if bool(args.model) == args.asked or (args.with_heads and not args.asked):
        parser.error("give one of --model and --asked; --with-heads goes with --asked")
    described = descriptions(args.data)
    names = list(described)
    found = contracts(args.root, args.data, names)
    if args.asked:
        ask = asked_reader(args.root, [described[name] for name in names], args.depth)
        read = {c["key"]: ask(c) for c in found}
    else:
        columns = [categories(args.data).index(name) for name in names]
        chances = clause_reader(args.model)
        read = {c["key"]: chances(c["texts"])[:, columns] for c in found}
    valid = [c for c in found if digest(c["key"]) % 2 == 0]
    held = [c for c in found if digest(c["key"]) % 2 == 1]
    labels = {name: [name] for name in names}
    by_threshold = {t: evaluate(valid, labels, lambda c, t=t: read[c["key"]] >= t) for t in GRID}
    common = max(GRID, key=lambda t: macro(by_threshold[t]))
    counts = {name: sum(len(c["holds"][name]) for c in valid) for name in names}
    own = np.array(
        [
            max(GRID, key=lambda t, n=name: by_threshold[t].get(n, (0, 0, 0))[2])
            if counts[name] >= MIN_CLAUSES
            else common
            for name in names
        ]
    )
    print(f"{len(valid)} valid contracts (thresholds), {len(held)} held-out (reported)")
    print(f"| {'asked' if args.asked else 'clause head'} | valid macro-F1 | held-out macro-F1 |")
    print("|---|---|---|")
    for title, thresholds in (
        ("one threshold for all categories", common),
        ("thresholds per category", own),
        ("0.5", 0.5),
    ):
        cells = [
            macro(evaluate(half, labels, lambda c, t=thresholds: read[c["key"]] >= t))
            for half in (valid, held)
        ]
        print(f"| {title} | {cells[0]:.3f} | {cells[1]:.3f} |")
    plain = evaluate(held, labels, lambda c: keyword_baseline(c, described))
    print(f"| keyword baseline | | {macro(plain):.3f} |")
    if args.with_heads:
        asked_valid = evaluate(valid, labels, lambda c: read[c["key"]] >= own)
        with_heads(args, names, held, labels, read, own, asked_valid)
    result = evaluate(held, labels, lambda c: read[c["key"]] >= own)
    print("\nheld-out, thresholds per category: | category | P | R | F1 |")
    for name in sorted(result, key=lambda n: -result[n][2]):
        p, r, f = result[name]
        print(f"| {name} | {p:.3f} | {r:.3f} | {f:.3f} |")


if __name__ == "__main__":
    main()
