"""The relevance model's clause head on CUAD, next to the keyword baseline (issue 37, item 3).

    .venv/bin/python benchmarks/clause_model.py --model training/out/rel-clauses.onnx

`--model`: the relevance model exported with its clause head (`training/export.py
--with-clauses`; the shipped file leaves the head out, since it did not beat the fitted heads).
Each paragraph of the TXT contracts index (benchmarks/contracts.py) is read alone; the head
gives one chance per CUAD category. Thresholds are chosen on the tune half's `valid` contracts
(training/cuad_examples.py: never trained on), per category where they hold at least three
marked clauses, else one threshold for all; the held-out half is reported with
benchmarks/classify.py's measure, so its figures compare with that benchmark's rows (the fitted
heads: 0.400 held-out).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from classify import evaluate, keyword_baseline, macro  # noqa: E402
from clause_head_fit import overlaps  # noqa: E402
from cuad_data import categories, contract_key, descriptions, marked_by_contract, squeeze  # noqa: E402

from training.cuad_examples import digest, split_of  # noqa: E402

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
        found.append({"key": key, "texts": texts, "holds": holds})
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument(
        "--root", type=Path, default=REPO / "benchmarks" / "out" / "contracts" / "index-txt"
    )
    args = parser.parse_args()
    described = descriptions(args.data)
    names = list(described)
    columns = [categories(args.data).index(name) for name in names]
    found = contracts(args.root, args.data, names)
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
    print("| clause head | valid macro-F1 | held-out macro-F1 |")
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
    result = evaluate(held, labels, lambda c: read[c["key"]] >= own)
    print("\nheld-out, thresholds per category: | category | P | R | F1 |")
    for name in sorted(result, key=lambda n: -result[n][2]):
        p, r, f = result[name]
        print(f"| {name} | {p:.3f} | {r:.3f} | {f:.3f} |")


if __name__ == "__main__":
    main()
